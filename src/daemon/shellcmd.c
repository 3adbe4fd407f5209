/* shellcmd.c — whether a task's command can be run as `exec COMMAND` (see shellcmd.h). */
#include "daemon/shellcmd.h"

#include <string.h>

/* dash's builtins and the reserved words: `exec` of a builtin would look for a program of that
 * name (cd, umask, ... have none; echo's program differs from the builtin). */
static const char *const not_programs[] = {
    ".", ":", "alias", "bg", "break", "cd", "chdir", "command", "continue", "echo", "eval",
    "exec", "exit", "export", "false", "fg", "getopts", "hash", "jobs", "kill", "local",
    "printf", "pwd", "read", "readonly", "return", "set", "shift", "test", "times", "trap",
    "true", "type", "ulimit", "umask", "unalias", "unset", "wait", "if", "then", "else",
    "elif", "fi", "case", "esac", "for", "while", "until", "do", "done", "in", "function",
    "select", "time",
};

static bool word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.' || c == '/' || c == '+' || c == ',' || c == '@' ||
           c == '%' || c == ':';
}

bool shellcmd_can_exec(const char *command)
{
    const char *p = command + strspn(command, " \t");
    size_t n = 0;
    while (word_char(p[n]))
        n++;
    /* the first word must end at a blank or the end (not at '=', a quote, '$', ...) */
    if (n == 0 || (p[n] && p[n] != ' ' && p[n] != '\t'))
        return false;
    for (size_t i = 0; i < sizeof not_programs / sizeof *not_programs; i++)
        if (strlen(not_programs[i]) == n && !strncmp(p, not_programs[i], n))
            return false;
    /* Anything that may make it more than one command, outside quotes: inside them it is
     * part of an argument (`sh -c 'trap "" TERM; sleep 30'` is one command, and run without
     * exec its wrapper shell, not the program, took a cancel's SIGTERM and its status was
     * recorded). '&' only as part of a redirection (2>&1). Unbalanced quotes: as written. */
    for (const char *q = p + n; *q; q++) {
        if (*q == '\'') {
            if (!(q = strchr(q + 1, '\'')))
                return false;
        } else if (*q == '"') {
            for (q++; *q && *q != '"'; q++)
                if (*q == '\\' && q[1])
                    q++;
            if (!*q)
                return false;
        } else if (*q == '\\') {
            if (!q[1] || q[1] == '\n')
                return false;
            q++;
        } else if (strchr(";|()`{}\n\r", *q)) {
            return false;
        } else if (*q == '&' && q[-1] != '>' && q[-1] != '<') {
            return false;
        }
    }
    return true;
}
