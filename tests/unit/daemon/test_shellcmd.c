/* test_shellcmd.c — which task commands run as `exec COMMAND`: a lone simple command does, so
 * that a cancel's SIGTERM reaches the program rather than a shell that dies at once; anything
 * whose meaning `exec` would change does not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon/shellcmd.h"

static void simple_commands_are_execed(void **state)
{
    (void)state;
    const char *yes[] = {
        "python train.py --lr 0.1", "  /usr/bin/python3 -u train.py", "sleep 30",
        "python train.py > out.log 2>&1", "torchrun --nproc_per_node=2 train.py",
        "python -c 'import sys'", "./run.sh \"$HOME/data\"",
        /* what looks like a list inside quotes is an argument */
        "python -c 'a; b'", "python -c 'print(1)'", "sh -c 'trap \"\" TERM; sleep 30'",
        "python x.py --tag \"a|b (c)\" 'x&y'", "python x.py a\\;b", "sh -c \"echo \\\"q;\\\"\"",
    };
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        if (!shellcmd_can_exec(yes[i]))
            fail_msg("'%s' should run as exec", yes[i]);
}

static void others_run_as_written(void **state)
{
    (void)state;
    const char *no[] = {
        "", "   ", "cd dir && python train.py", "true; sleep 1", "a | b", "sleep 1 &",
        "FOO=1 python train.py", "$CMD arg", "\"python\" x", "(sleep 1)", "{ sleep 1; }",
        "echo hi", "cd /tmp", "exit 3", "if true; then :; fi", "python -c 'a' ; b",
        "sleep `echo 1`", "sleep $(echo 1)", "a\nb", "trap '' TERM", "ulimit -n 10",
        "umask 077", "! false", "while :", "[ -f x ]", "python -c 'print(1)' && x",
        "python -c 'unbalanced", "python \"unbalanced", "python x\\", "python 'a'|b",
        "python \"a\"; b", "python a\\\nb",
    };
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        if (shellcmd_can_exec(no[i]))
            fail_msg("'%s' should not run as exec", no[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(simple_commands_are_execed),
        cmocka_unit_test(others_run_as_written),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
