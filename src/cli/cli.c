/* cli.c — running a command of the table, shared CLI error handling, config loading. */
#include "cli/cli.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/request.h"
#include "util/datadir.h"
#include "util/safefs.h"
#include "util/strutil.h"

int cli_run_command(const carma_command *c, int argc, char **argv)
{
    if (c->flags & CMD_TALKS_TO_DAEMON)
        return request_cmd_main(c->name, c->request, argc, argv);
    return c->run(argc, argv);
}

/* Messages quote what users and files named (a trace's task file, a --gpus model, a path):
 * its terminal escapes and newlines are shown, never obeyed (str_escape_controls). kind: ""
 * or "warning: ". */
static void print_message(const char *cmd, const char *kind, const char *msg)
{
    char *safe = msg ? str_escape_controls(msg) : NULL;
    fprintf(stderr, "carma%s%s: %s%s\n", cmd ? " " : "", cmd ? cmd : "", kind,
            safe ? safe : "(out of memory)");
    free(safe);
}

/* print_message of fmt's text (its allocation failing: "(out of memory)"). */
static void print_formatted(const char *cmd, const char *kind, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *msg = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (msg)
        vsnprintf(msg, (size_t)n + 1, fmt, again);
    va_end(again);
    print_message(cmd, kind, msg);
    free(msg);
}

int cli_fail(const char *cmd, const carma_err *err)
{
    print_message(cmd, "", err->msg);
    return 1;
}

void cli_warn(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    print_formatted(cmd, "warning: ", fmt, ap);
    va_end(ap);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    print_formatted(cmd, "", fmt, ap);
    va_end(ap);
    fprintf(stderr, "Try 'carma %s --help'.\n", cmd);
    return EXIT_USAGE;
}

int cli_path_arg(const char *cmd, const char *opt, const char *path)
{
    return *path ? 0 : cli_usage_error(cmd, "%s: empty path", opt);
}

int cli_bad_option(const char *cmd, char **argv, int bad_opt, int result)
{
    extern int optind;
    const char *arg = argv[optind - 1];
    if (result == ':')
        return cli_usage_error(cmd, "option '%s' needs a value", arg);
    /* inside a group ("-99", "-9x") getopt has not moved past its word: argv[optind - 1] is
     * the word before it, perhaps the command's name (argv ends in NULL, as main's does) */
    const char *cur = argv[optind], *at = NULL;
    if (bad_opt && cur && cur[0] == '-' && cur[1] != '-')
        at = strchr(cur + 1, bad_opt);
    if ((at && at[1]) || (bad_opt && arg[0] == '-' && arg[1] != '-'))
        return cli_usage_error(cmd, "unknown option '-%c'", bad_opt);
    return cli_usage_error(cmd, "unknown option '%s'", arg);
}

int cli_add_set(const char *cmd, cli_config_args *a, const char *pair)
{
    if (a->nsets >= (int)(sizeof a->sets / sizeof a->sets[0]))
        return cli_usage_error(cmd, "too many --set options");
    a->sets[a->nsets++] = pair;
    return 0;
}

int cli_int_arg(const char *cmd, const char *opt, const char *v, int64_t min, int64_t max,
                int64_t *out)
{
    int64_t x = 0;
    bool bad = parse_i64(v, &x) != 0, huge = bad && errno == ERANGE;
    if (bad && !huge)
        return cli_usage_error(cmd, "%s needs an integer, got '%s'", opt, v);
    bool neg = huge ? strchr(v, '-') != NULL : x < 0;
    if (huge ? neg : x < min) /* a bound of an int's own is no limit the option sets */
        return min <= INT_MIN ? cli_usage_error(cmd, "%s: '%s' is out of range (at least %lld)",
                                                opt, v, (long long)min)
                              : cli_usage_error(cmd, "%s must be at least %lld, got '%s'", opt,
                                                (long long)min, v);
    if (huge || x > max)
        return cli_usage_error(cmd, "%s: '%s' is out of range (at most %lld)", opt, v,
                               (long long)max);
    *out = x;
    return 0;
}

int cli_load_config(carma_config *cfg, const cli_config_args *a, carma_err *err)
{
    config_defaults(cfg);
    const char *path = a->path ? a->path : getenv("CARMA_CONFIG");
    if (!path) { /* the system's, when there is one: a lab's settings without a flag */
        path = carma_system_config();
        if (*path && access(path, F_OK) != 0)
            path = NULL;
    }
    /* The daemon reads the file where the check found it: a link on the way could be
     * pointed elsewhere between the check and the read. */
    char real[PATH_MAX];
    if (path && *path && a->trusted) {
        if (safefs_trusted_file_real(path, "config", real, sizeof real, err))
            return -1;
        path = real;
    }
    if (path && *path && config_load_file(cfg, path, err))
        return -1;
    for (int i = 0; i < a->nsets; i++)
        if (config_set_pair(cfg, a->sets[i], err)) {
            carma_err_prefix(err, "--set");
            return CLI_CONFIG_BAD_SET;
        }
    /* The defaults and a loaded file are valid on their own: what fails now, a check across
     * keys (on_finish, sim_server ...), the --sets made fail. */
    if (config_validate(cfg, err)) {
        if (a->nsets == 0)
            return -1;
        carma_err_prefix(err, "--set");
        return CLI_CONFIG_BAD_SET;
    }
    /* It runs as every task's owner: nobody else may have put code there. It runs long after
     * this check, so by its resolved path, whose directories were all found trusted (a link in
     * another user's directory could be swapped for their program later). */
    if (a->trusted && cfg->daemon.on_finish[0] &&
        safefs_trusted_file_real(cfg->daemon.on_finish, "on_finish program",
                                 cfg->daemon.on_finish, sizeof cfg->daemon.on_finish, err))
        return -1;
    return 0;
}

int cli_config_fail(const char *cmd, int rc, const carma_err *err)
{
    return rc == CLI_CONFIG_BAD_SET ? cli_usage_error(cmd, "%s", err->msg) : cli_fail(cmd, err);
}

int cli_stdout_done(const char *cmd)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    fprintf(stderr, "carma %s: cannot write the output: %s\n", cmd,
            strerror(errno ? errno : EIO));
    return 1;
}

void cli_print_json(const json_t *j)
{
    json_dumpf(j, stdout, JSON_INDENT(2));
    fputc('\n', stdout);
}
