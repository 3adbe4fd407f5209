/* test_config_text.c — config text as people write it and as `carma config` writes it: every
 * value it prints reads back exactly (quoted strings, exact numbers), control characters are
 * refused, --set reads its value as a file line does, a file sets each key once, and its
 * errors name the line, also those of checks across keys. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/config_fixture.h"
#include "tmpfile_fixture.h"

#include "config/config.h"

/* c written by config_write (and by config_write_list) loads back as c. */
static void assert_round_trips(const carma_config *c)
{
    carma_err err;
    for (int list = 0; list < 2; list++) {
        char *text = written(c, list);
        char *p = write_tmp(text);
        carma_config back;
        config_defaults(&back);
        if (config_load_file(&back, p, &err))
            fail_msg("output does not load back: %s\n%s", err.msg, text);
        assert_same_config(c, &back);
        unlink(p);
        free(p);
        free(text);
    }
}

/* '#' started a comment, so `on_finish = /x/a#b` came back as /x/a; spaces at the ends were
 * trimmed; numbers printed with %g lost digits. */
static void test_written_values_read_back_exactly(void **state)
{
    (void)state;
    carma_config c;
    carma_err err;
    config_defaults(&c);
    static const char *const sets[] = {
        "on_finish=/x/a#b", "socket=\" /tmp/lead and trail \"", "state_dir=\"#\"",
        "mps_pipe_dir=\"/\\\"quoted\\\" and \\\\ back\\\\slash\"", "mps_log_dir=/plain\\dir\"q",
        "sim_gpu_model=X1:16G:30.123456:212.345678", "sim_gpu_model=Y#2:8G:0.5:70",
    };
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
        if (config_set_pair(&c, sets[i], &err))
            fail_msg("%s: %s", sets[i], err.msg);
    assert_string_equal(c.daemon.on_finish, "/x/a#b");
    assert_string_equal(c.daemon.socket, " /tmp/lead and trail ");
    assert_string_equal(c.daemon.state_dir, "#");
    assert_string_equal(c.daemon.mps_pipe_dir, "/\"quoted\" and \\ back\\slash");
    assert_string_equal(c.daemon.mps_log_dir, "/plain\\dir\"q");
    c.sim.interf_smact_k = 1.0 / 3; /* a computed value: every digit must come back */
    c.sim.gpu_models.items[1].idle_w = 0.1 + 0.2;
    assert_int_equal(config_validate(&c, &err), 0);
    assert_round_trips(&c);

    char *text = written(&c, false);
    assert_non_null(strstr(text, "\non_finish = \"/x/a#b\"\n"));
    assert_non_null(strstr(text, "\nsim_gpu_model = X1:16384:30.123456:212.345678\n"));
    assert_non_null(strstr(text, "\nsim_interference_smact_k = 0.3333333333333333\n"));
    assert_non_null(strstr(text, "\nstate_dir = \"#\"\n"));
    free(text);
}

/* A newline in a --set value wrote a second line, another key, into `carma config`'s output. */
static void test_control_characters_refused(void **state)
{
    (void)state;
    carma_config c, before;
    carma_err err;
    config_defaults(&c);
    before = c;
    assert_int_equal(config_set_pair(&c, "socket=/a\npolicy = exclusive", &err), -1);
    assert_string_equal(err.msg, "socket: control character \\x0a in the value (a value is one "
                                 "line of text)");
    assert_int_equal(config_set(&c, "on_finish", "/bin/x\r", &err), -1);
    assert_int_equal(config_set(&c, "sim_gpu_model", "A\x1b:8G:1:2", &err), -1);
    assert_non_null(strstr(err.msg, "sim_gpu_model: control character \\x1b"));
    assert_same_config(&c, &before);
    char *p = write_tmp("policy = exclusive\nsocket = /a\tb\n");
    assert_int_equal(config_load_file(&c, p, &err), -1);
    char want[256];
    snprintf(want, sizeof want, "%s:2: socket: control character \\x09", p);
    if (strncmp(err.msg, want, strlen(want)))
        fail_msg("'%s' does not start '%s'", err.msg, want);
    assert_same_config(&c, &before);
    unlink(p);
    free(p);
}

/* How a file's values are read: quotes, comments after them, and what is wrong with them. */
static void test_quoted_values_in_a_file(void **state)
{
    (void)state;
    carma_config c;
    carma_err err;
    config_defaults(&c);
    char *p = write_tmp("# socket = /commented\n"
                        "socket = \"/a # b\"   # the comment after it\n"
                        "state_dir=\"\"\n"
                        "policy = \"exclusive\"\n"
                        "mps_log_dir = /x # \"not a quote\n");
    if (config_load_file(&c, p, &err))
        fail_msg("%s", err.msg);
    assert_string_equal(c.daemon.socket, "/a # b");
    assert_string_equal(c.daemon.state_dir, "");
    assert_int_equal(c.sched.policy, POLICY_EXCLUSIVE);
    assert_string_equal(c.daemon.mps_log_dir, "/x");
    unlink(p);
    free(p);
    static const struct {
        const char *text, *frag;
    } bad[] = {
        {"policy = carma\nsocket = \"/a\n", ":2: socket: unterminated quoted value"},
        {"socket = \"/a\" b\n", ":1: socket: text after the closing quote: 'b'"},
        {"policy = \"\"\n", ":1: policy: missing value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        p = write_tmp(bad[i].text);
        assert_int_equal(config_load_file(&c, p, &err), -1);
        if (!strstr(err.msg, p) || !strstr(err.msg, bad[i].frag))
            fail_msg("message '%s' lacks the path or '%s'", err.msg, bad[i].frag);
        unlink(p);
        free(p);
    }
}

/* --set reads its value as a file line does, less comments: trimmed (`--set 'policy =
 * exclusive'` was an unknown policy ' exclusive'), quoted to keep spaces, '#' literal. */
static void test_set_pairs_read_like_lines(void **state)
{
    (void)state;
    carma_config c;
    carma_err err;
    config_defaults(&c);
    assert_int_equal(config_set_pair(&c, " policy = exclusive ", &err), 0);
    assert_int_equal(c.sched.policy, POLICY_EXCLUSIVE);
    assert_int_equal(config_set_pair(&c, "window =\t7", &err), 0);
    assert_int_equal(c.sched.window, 7);
    assert_int_equal(config_set_pair(&c, "socket= \" /s \" ", &err), 0);
    assert_string_equal(c.daemon.socket, " /s ");
    assert_int_equal(config_set_pair(&c, "on_finish=/x/a#b", &err), 0);
    assert_string_equal(c.daemon.on_finish, "/x/a#b");
    assert_int_equal(config_set_pair(&c, "socket=\"/open", &err), -1);
    assert_string_equal(err.msg, "socket: unterminated quoted value (a value is one line)");
}

/* A file saved with a UTF-8 byte-order mark was refused: unknown config key '\ufeffpolicy'. */
static void test_byte_order_mark_skipped(void **state)
{
    (void)state;
    carma_config c;
    carma_err err;
    config_defaults(&c);
    char *p = write_tmp("\xEF\xBB\xBFpolicy = exclusive\n");
    if (config_load_file(&c, p, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(c.sched.policy, POLICY_EXCLUSIVE);
    unlink(p);
    free(p);
}

/* A key twice in one file silently took the last; the GPU models are the one repeated key. */
static void test_duplicate_keys_refused(void **state)
{
    (void)state;
    carma_config c, before;
    carma_err err;
    config_defaults(&c);
    before = c;
    char *p = write_tmp("policy = exclusive\n# policy = est-lug\nwindow = 5\n\npolicy = carma\n");
    assert_int_equal(config_load_file(&c, p, &err), -1);
    char want[256];
    snprintf(want, sizeof want, "%s:5: policy: already set on line 1 (a key may appear once)", p);
    assert_string_equal(err.msg, want);
    assert_same_config(&c, &before);
    unlink(p);
    free(p);
    p = write_tmp("sim_gpu_model = T4-16GB:16G:10:70\nsim_gpu_model = L4-24GB:24G:16:72\n");
    if (config_load_file(&c, p, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(c.sim.gpu_models.n, 2);
    unlink(p);
    free(p);
}

/* A check across keys failing in a file named no line, and sim_server's named --gpus. */
static void test_checks_across_keys_name_the_line(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"window = 3\nsim_server = 0xA100-40GB\n",
         ":2: sim_server '0xA100-40GB': GPU count must be 1..100000"},
        {"sim_server = 2xT4-16GB\nwindow = 3\n", ":1: sim_server '2xT4-16GB': unknown GPU model"},
        {"# x\n\nsim_power_busy_frac = 1.9\n", ":3: sim_power_busy_frac, sim_power_util_frac"},
        {"on_finish = rel\n", ":1: on_finish: 'rel' is not an absolute path"},
        {"metrics_listen = nowhere\n", ":1: metrics_listen"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        carma_config c;
        carma_err err;
        config_defaults(&c);
        char *p = write_tmp(bad[i].text), want[300];
        snprintf(want, sizeof want, "%s%s", p, bad[i].want);
        assert_int_equal(config_load_file(&c, p, &err), -1);
        if (strncmp(err.msg, want, strlen(want)))
            fail_msg("'%s' does not start '%s'", err.msg, want);
        unlink(p);
        free(p);
    }
    carma_config c;
    const config_row *culprit = NULL;
    carma_err err;
    config_defaults(&c);
    assert_int_equal(config_set(&c, "on_finish", "rel", &err), 0);
    assert_int_equal(config_check(&c, &culprit, &err), -1);
    assert_ptr_equal(culprit, config_find("on_finish"));
    config_defaults(&c);
    assert_int_equal(config_check(&c, &culprit, &err), 0);
    assert_null(culprit);
}

/* `sim_server =` passed the reader, then failed as `--gpus ''`: an empty string value is the
 * key's built-in default, as the reader's comment said. */
static void test_empty_string_is_the_default(void **state)
{
    (void)state;
    carma_config c;
    carma_err err;
    config_defaults(&c);
    assert_int_equal(config_set(&c, "sim_server", "2xA100-80GB", &err), 0);
    assert_int_equal(config_set(&c, "gpu_backend", "sim", &err), 0);
    char *p = write_tmp("sim_server =\ngpu_backend = \"\"\n");
    if (config_load_file(&c, p, &err))
        fail_msg("%s", err.msg);
    assert_string_equal(c.sim.server, "4xA100-40GB");
    assert_string_equal(c.daemon.gpu_backend, "nvml");
    unlink(p);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_written_values_read_back_exactly),
        cmocka_unit_test(test_control_characters_refused),
        cmocka_unit_test(test_quoted_values_in_a_file),
        cmocka_unit_test(test_set_pairs_read_like_lines),
        cmocka_unit_test(test_byte_order_mark_skipped),
        cmocka_unit_test(test_duplicate_keys_refused),
        cmocka_unit_test(test_checks_across_keys_name_the_line),
        cmocka_unit_test(test_empty_string_is_the_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
