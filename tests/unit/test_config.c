/* test_config.c — the config option table and file reader (core/config.c), and the strict
 * number, size and word parsers of util/strutil.c that they rest on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/config.h"
#include "util/strutil.h"

static char *write_tmp(const char *text)
{
    char *path = strdup("/tmp/carma_test_config_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

/* Field by field: struct padding is not guaranteed to survive assignment. */
static void assert_same_config(const carma_config *a, const carma_config *b)
{
    const sched_config *x = &a->sched, *y = &b->sched;
    assert_int_equal(x->policy, y->policy);
    assert_int_equal(x->estimator, y->estimator);
    assert_true(x->thr_smact == y->thr_smact && x->thr_smocc == y->thr_smocc &&
                x->thr_drama == y->thr_drama);
    assert_int_equal(x->reserve_mib, y->reserve_mib);
    assert_int_equal(x->margin_mib, y->margin_mib);
    assert_int_equal(x->or_min_free_mib, y->or_min_free_mib);
    assert_int_equal(x->window, y->window);
    assert_int_equal(x->agg, y->agg);
    assert_true(x->ewma_alpha == y->ewma_alpha && x->grace_s == y->grace_s);
    assert_int_equal(x->retry_cap, y->retry_cap);
}

static void test_parse_integers(void **state)
{
    (void)state;
    int64_t i;
    uint64_t u;
    assert_int_equal(parse_i64(" 42 ", &i), 0);
    assert_int_equal(i, 42);
    assert_int_equal(parse_i64("-7", &i), 0);
    assert_int_equal(i, -7);
    assert_int_equal(parse_i64("9223372036854775807", &i), 0);
    assert_int_equal(parse_i64("9223372036854775808", &i), -1); /* overflow */
    const char *bad[] = {"", "  ", "4x", "x4", "1.0", "1e3", "4 2", NULL};
    for (const char **b = bad; *b; b++)
        if (parse_i64(*b, &i) == 0)
            fail_msg("parse_i64 accepted '%s'", *b);
    assert_int_equal(parse_i64(NULL, &i), -1);
    assert_int_equal(parse_u64("0", &u), 0);
    assert_int_equal(u, 0);
    assert_int_equal(parse_u64("-1", &u), -1);
    char longnum[100];
    memset(longnum, '1', 99);
    longnum[99] = '\0';
    assert_int_equal(parse_i64(longnum, &i), -1);
}

static void test_parse_double_bool(void **state)
{
    (void)state;
    double d;
    bool b;
    assert_int_equal(parse_double("0.45", &d), 0);
    assert_true(d == 0.45);
    assert_int_equal(parse_double(" -2.5e1 ", &d), 0);
    assert_true(d == -25);
    const char *bad[] = {"", "abc", "1.5x", "nan", "inf", "1e999", "0.5 0.5", NULL};
    for (const char **s = bad; *s; s++)
        if (parse_double(*s, &d) == 0)
            fail_msg("parse_double accepted '%s'", *s);
    const char *yes[] = {"on", "YES", "true", "1", " True ", NULL};
    const char *no[] = {"off", "no", "FALSE", "0", NULL};
    for (const char **s = yes; *s; s++) {
        assert_int_equal(parse_bool(*s, &b), 0);
        assert_true(b);
    }
    for (const char **s = no; *s; s++) {
        assert_int_equal(parse_bool(*s, &b), 0);
        assert_false(b);
    }
    assert_int_equal(parse_bool("maybe", &b), -1);
    assert_int_equal(parse_bool("", &b), -1);
}

static void test_parse_size(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        uint64_t mib;
    } good[] = {
        {"512", 512}, {"512M", 512}, {"512MiB", 512}, {"512mb", 512}, {"20G", 20480},
        {"20GiB", 20480}, {"1.5G", 1536}, {"2 G", 2048}, {"1T", 1048576}, {"0", 0},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        uint64_t v;
        if (parse_size_mib(good[i].text, &v))
            fail_msg("rejected '%s'", good[i].text);
        assert_int_equal(v, good[i].mib);
    }
    const char *bad[] = {"", "G", "-1", "-1G", "12X", "12GBs", "1e20T", "nan", "inf", NULL};
    for (const char **s = bad; *s; s++) {
        uint64_t v;
        if (parse_size_mib(*s, &v) == 0)
            fail_msg("parse_size_mib accepted '%s'", *s);
    }
}

static void test_str_helpers(void **state)
{
    (void)state;
    char s[] = " \t hello world \r\n";
    assert_string_equal(str_trim(s), "hello world");
    char e[] = "   ";
    assert_string_equal(str_trim(e), "");
    assert_true(str_ends_with("a.rad", ".rad"));
    assert_false(str_ends_with("rad", ".rad"));
    assert_null(str_dup(NULL));
    size_t len;
    assert_null(read_file("/nonexistent/file", &len));
}

static void test_config_set(void **state)
{
    (void)state;
    carma_config c;
    carma_err err;
    config_defaults(&c);
    assert_int_equal(c.sched.policy, POLICY_EXCLUSIVE);
    assert_int_equal(config_set(&c, "policy", "oracle-MAGM", &err), 0);
    assert_int_equal(c.sched.policy, POLICY_ORACLE_MAGM);
    assert_int_equal(config_set(&c, "estimator", "GPUMemNet", &err), 0);
    assert_int_equal(c.sched.estimator, MEM_GPUMEMNET);
    assert_int_equal(config_set(&c, "margin_mib", "3G", &err), 0);
    assert_int_equal(c.sched.margin_mib, 3072);
    assert_int_equal(config_set(&c, "smact_threshold", "0.9", &err), 0);
    assert_true(c.sched.thr_smact == 0.9);
    assert_int_equal(config_set_pair(&c, " window =10", &err), 0);
    assert_int_equal(c.sched.window, 10);
    assert_int_equal(config_set(&c, "aggregation", "ewma", &err), 0);
    assert_int_equal(c.sched.agg, AGG_EWMA);

    assert_int_equal(config_set(&c, "policy", "magic", &err), -1);
    assert_non_null(strstr(err.msg, "unknown policy 'magic'"));
    assert_int_equal(config_set(&c, "estimator", "xmem", &err), -1);
    assert_non_null(strstr(err.msg, "unknown estimator 'xmem'"));
    assert_int_equal(config_set(&c, "smact_threshold", "1.5", &err), -1);
    assert_int_equal(config_set(&c, "grace_s", "-1", &err), -1);
    assert_int_equal(config_set(&c, "window", "0", &err), -1);
    assert_int_equal(config_set(&c, "retry_cap", "two", &err), -1);
    assert_int_equal(config_set(&c, "reserve_mib", "lots", &err), -1);
    assert_int_equal(config_set(&c, "aggregation", "median", &err), -1);
    assert_int_equal(config_set(&c, "no_such_key", "1", &err), -1);
    assert_non_null(strstr(err.msg, "unknown config key 'no_such_key'"));
    assert_int_equal(config_set_pair(&c, "window", &err), -1);
    assert_int_equal(config_set_pair(&c, "=3", &err), -1);
    assert_int_equal(c.sched.window, 10); /* failed sets change nothing */
}

static void test_config_file(void **state)
{
    (void)state;
    carma_config c, d;
    carma_err err;
    config_defaults(&c);
    config_defaults(&d);
    assert_int_equal(config_load_file(&c, CARMA_DATA_DIR "/carma.conf", &err), 0);
    assert_same_config(&c, &d); /* the shipped file holds exactly the defaults */

    char *p = write_tmp("# comment\n\npolicy = or-lug  # trailing comment\nretry_cap=5\n");
    assert_int_equal(config_load_file(&c, p, &err), 0);
    assert_int_equal(c.sched.policy, POLICY_OR_LUG);
    assert_int_equal(c.sched.retry_cap, 5);
    unlink(p);
    free(p);

    static const struct {
        const char *text, *frag;
    } bad[] = {
        {"policy = or-lug\nthis line has no equals\n", ":2: expected `key = value`"},
        {"policy =\n", ":1: policy: missing value"},
        {"polcy = exclusive\n", ":1: unknown config key 'polcy'"},
        {"retry_cap = 1\nwindow = -3\n", ":2: window"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        carma_config before = c;
        p = write_tmp(bad[i].text);
        assert_int_equal(config_load_file(&c, p, &err), -1);
        if (!strstr(err.msg, p) || !strstr(err.msg, bad[i].frag))
            fail_msg("message '%s' lacks the path or '%s'", err.msg, bad[i].frag);
        assert_same_config(&c, &before); /* nothing half-applied */
        unlink(p);
        free(p);
    }
    assert_int_equal(config_load_file(&c, "/nonexistent.conf", &err), -1);
    assert_non_null(strstr(err.msg, "/nonexistent.conf"));
}

static void test_config_write_round_trip(void **state)
{
    (void)state;
    carma_config c, back;
    carma_err err;
    config_defaults(&c);
    assert_int_equal(config_set(&c, "policy", "est-lug", &err), 0);
    assert_int_equal(config_set(&c, "ewma_alpha", "0.25", &err), 0);
    assert_int_equal(config_set(&c, "or_min_free_mib", "4G", &err), 0);
    char *p = strdup("/tmp/carma_test_config_XXXXXX");
    int fd = mkstemp(p);
    FILE *f = fdopen(fd, "w");
    config_write(&c, f);
    fclose(f);
    config_defaults(&back);
    assert_int_equal(config_load_file(&back, p, &err), 0);
    assert_same_config(&c, &back);
    unlink(p);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_integers),
        cmocka_unit_test(test_parse_double_bool),
        cmocka_unit_test(test_parse_size),
        cmocka_unit_test(test_str_helpers),
        cmocka_unit_test(test_config_set),
        cmocka_unit_test(test_config_file),
        cmocka_unit_test(test_config_write_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
