/* test_cli_request.c — the command line shared by the commands that talk to the daemon
 * (cli/request.h): the common options read for every such command, its own ones handed back
 * in order, --help and usage errors as exit statuses, the config the options give checked
 * whatever names the socket, operands, and '+' stopping at the first operand (submit's
 * COMMAND). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cli/request.h"
#include "tmpfile_fixture.h"

/* What the last run saw. */
static struct {
    int own[8], nown;
    const char *own_arg[8];
    int last;    /* request_next_option's final result */
    int status;
    request_opts opts;
    int operands, argc;
    long long id;
    int id_rc, none_rc;
} seen;

static int record(request_args *a)
{
    memset(&seen, 0, sizeof seen);
    int opt;
    while ((opt = request_next_option(a)) > 0 && seen.nown < 8) {
        seen.own_arg[seen.nown] = a->arg;
        seen.own[seen.nown++] = opt;
    }
    seen.last = opt;
    seen.status = a->status;
    seen.opts = a->opts;
    seen.operands = a->operands;
    seen.argc = a->argc;
    if (opt == 0) {
        seen.id_rc = request_task_id_operand(a, &seen.id);
        seen.none_rc = request_no_operands(a);
    }
    return opt < 0 ? a->status : 0;
}

static const struct option own_longopts[] = {
    {"follow", no_argument, NULL, 'f'},
    {"name", required_argument, NULL, 'n'},
    {NULL, 0, NULL, 0},
};
static const request_cmd cmd = {"usage: test\n", "f", own_longopts, record};
static const request_cmd stop_cmd = {"usage: test\n", "+", own_longopts, record};

static int run(const request_cmd *c, char **argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    return request_cmd_main(argv[0], c, argc, argv);
}

static void common_and_own_options_in_any_order(void **state)
{
    (void)state;
    char *conf = write_tmp("window = 5\n");
    char *argv[] = {"logs", "--json", "-f", "--socket", "/s", "--set", "grace_s=1", "7",
                    "--name", "x", "--config", conf, "--set", "window=7", NULL};
    assert_int_equal(run(&cmd, argv), 0);
    assert_int_equal(seen.last, 0);
    assert_int_equal(seen.nown, 2);
    assert_int_equal(seen.own[0], 'f');
    assert_int_equal(seen.own[1], 'n');
    assert_string_equal(seen.own_arg[1], "x");
    assert_true(seen.opts.json);
    assert_string_equal(seen.opts.socket, "/s");
    assert_string_equal(seen.opts.config.path, conf);
    assert_int_equal(seen.opts.config.nsets, 2);
    assert_string_equal(seen.opts.config.sets[1], "window=7");
    assert_int_equal(seen.operands, seen.argc - 1); /* getopt moved the operand last */
    assert_int_equal(seen.id_rc, 0);
    assert_int_equal(seen.id, 7);
    assert_int_equal(seen.none_rc, EXIT_USAGE); /* 7 is one operand too many for queue */
    unlink(conf);
    free(conf);
}

/* The config the options give is read once they are over, though --socket (or $CARMA_SOCKET)
 * already names the daemon: a --set it refuses is a usage error, a file it cannot read a
 * failure, and the command ends before doing anything. */
static void a_bad_config_ends_the_command(void **state)
{
    (void)state;
    char *bad_key[] = {"queue", "--socket", "/s", "--set", "bogus=1", NULL};
    assert_int_equal(run(&cmd, bad_key), EXIT_USAGE);
    assert_int_equal(seen.last, -1);
    char *bad_value[] = {"queue", "--set", "policy=bogus", "--socket", "/s", NULL};
    assert_int_equal(run(&cmd, bad_value), EXIT_USAGE);
    char *no_file[] = {"queue", "--socket", "/s", "--config", "/nonexistent/carma.conf", NULL};
    assert_int_equal(run(&cmd, no_file), 1);
    assert_int_equal(seen.last, -1);
    setenv("CARMA_SOCKET", "/s", 1);
    char *env_socket[] = {"queue", "--set", "bogus=1", NULL};
    assert_int_equal(run(&cmd, env_socket), EXIT_USAGE);
    unsetenv("CARMA_SOCKET");
}

static void help_and_usage_errors_end_the_command(void **state)
{
    (void)state;
    char *help[] = {"queue", "--set", "a=1", "--help", "--bogus", NULL};
    assert_int_equal(run(&cmd, help), 0);
    assert_int_equal(seen.last, -1);
    assert_int_equal(seen.status, 0);
    char *bogus[] = {"queue", "--bogus", "--help", NULL};
    assert_int_equal(run(&cmd, bogus), EXIT_USAGE);
    char *short_bogus[] = {"queue", "-z", NULL};
    assert_int_equal(run(&cmd, short_bogus), EXIT_USAGE);
    char *missing[] = {"queue", "--socket", NULL};
    assert_int_equal(run(&cmd, missing), EXIT_USAGE);
    char *too_many[140] = {"queue"}; /* 69 --set: more than cli_config_args holds */
    for (int i = 1; i < 139; i += 2) {
        too_many[i] = "--set";
        too_many[i + 1] = "a=1";
    }
    assert_int_equal(run(&cmd, too_many), EXIT_USAGE);
    assert_int_equal(seen.last, -1);
}

static void task_id_operands(void **state)
{
    (void)state;
    char *none[] = {"show", NULL};
    assert_int_equal(run(&cmd, none), 0);
    assert_int_equal(seen.id_rc, EXIT_USAGE);
    assert_int_equal(seen.none_rc, 0);
    char *two[] = {"show", "1", "2", NULL};
    run(&cmd, two);
    assert_int_equal(seen.id_rc, EXIT_USAGE);
    char *zero[] = {"show", "0", NULL};
    run(&cmd, zero);
    assert_int_equal(seen.id_rc, EXIT_USAGE);
    char *word[] = {"show", "x", NULL};
    run(&cmd, word);
    assert_int_equal(seen.id_rc, EXIT_USAGE);
}

static void plus_stops_at_the_first_operand(void **state)
{
    (void)state;
    char *argv[] = {"submit", "--json", "--name", "n", "python", "--json", "-f", NULL};
    assert_int_equal(run(&stop_cmd, argv), 0);
    assert_int_equal(seen.last, 0);
    assert_int_equal(seen.nown, 1); /* --name; the command's own --json and -f are left alone */
    assert_true(seen.opts.json);
    assert_int_equal(seen.operands, 4);
    char *dashdash[] = {"submit", "--", "--json", NULL};
    run(&stop_cmd, dashdash);
    assert_false(seen.opts.json);
    assert_int_equal(seen.operands, 2);
    char *own_short[] = {"submit", "-f", "x", NULL}; /* -f is not submit's */
    assert_int_equal(run(&stop_cmd, own_short), EXIT_USAGE);
}

static int task_verb(request_args *a)
{
    long long id = 0;
    json_t *reply = (json_t *)1;
    int rc = request_task_verb(a, "show", &id, &reply);
    assert_null(reply);
    return rc;
}

static void task_verb_ends_without_a_request(void **state)
{
    (void)state;
    static const request_cmd verb_cmd = {"usage: show\n", NULL, NULL, task_verb};
    char *help[] = {"show", "--help", NULL};
    assert_int_equal(run(&verb_cmd, help), 0);
    char *bad[] = {"show", "x", NULL};
    assert_int_equal(run(&verb_cmd, bad), EXIT_USAGE);
    char *own[] = {"show", "--follow", "1", NULL}; /* show has no options of its own */
    assert_int_equal(run(&verb_cmd, own), EXIT_USAGE);
    char *nodaemon[] = {"show", "--socket", "/nonexistent/carma.sock", "1", NULL};
    assert_int_equal(run(&verb_cmd, nodaemon), 1);
}

static const char *user_seen;
static char user_name[REQUEST_USER_MAX];
static int user_option(request_args *a)
{
    return request_user_option(a, user_seen, user_name, sizeof user_name);
}

/* --user: a name must be a user's; a uid stands for its user's name, or, without a passwd
 * entry, for its digits (the name the daemon records such a user's tasks under). */
static void user_names_and_uids(void **state)
{
    (void)state;
    static const request_cmd user_cmd = {"usage: queue\n", NULL, NULL, user_option};
    char *argv[] = {"queue", NULL};
    user_seen = "root";
    assert_int_equal(run(&user_cmd, argv), 0);
    assert_string_equal(user_name, "root");
    user_seen = "00";
    assert_int_equal(run(&user_cmd, argv), 0);
    assert_string_equal(user_name, "root");
    user_seen = "4000000123"; /* no passwd entry has this uid */
    assert_int_equal(run(&user_cmd, argv), 0);
    assert_string_equal(user_name, "4000000123");
    const char *unknown[] = {"nosuchuser", "", "12x", "-1", "99999999999", "4294967295"};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        user_seen = unknown[i];
        assert_int_equal(run(&user_cmd, argv), EXIT_USAGE);
    }
}

int main(void)
{
    setenv("CARMA_CONFIG", "", 1); /* no config file but the tests' own */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(common_and_own_options_in_any_order),
        cmocka_unit_test(help_and_usage_errors_end_the_command),
        cmocka_unit_test(a_bad_config_ends_the_command),
        cmocka_unit_test(task_id_operands),
        cmocka_unit_test(plus_stops_at_the_first_operand),
        cmocka_unit_test(task_verb_ends_without_a_request),
        cmocka_unit_test(user_names_and_uids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
