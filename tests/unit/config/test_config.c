/* test_config.c — the config option table (config/config_table.c), the reader, checks and writer
 * that walk it (config/config.c), and the strict number, size and word parsers of util/strutil.c
 * that they rest on. */
#include <errno.h>
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
#include "util/strutil.h"

/* The value of `key = value` in config text, or NULL when no such line (copied into buf). */
static const char *value_in(const char *text, const char *key, char *buf, size_t size)
{
    size_t klen = strlen(key);
    for (const char *line = text, *nl; line && *line;
         line = (nl = strchr(line, '\n')) ? nl + 1 : NULL) {
        if (strncmp(line, key, klen) || strncmp(line + klen, " = ", 3))
            continue;
        const char *v = line + klen + 3, *end = strchr(v, '\n');
        size_t n = end ? (size_t)(end - v) : strlen(v);
        assert_true(n < size);
        memcpy(buf, v, n);
        buf[n] = '\0';
        return buf;
    }
    return NULL;
}

/* The line of config text that starts with `prefix` (copied into buf). */
static const char *line_in(const char *text, const char *prefix, char *buf, size_t size)
{
    const char *at = strstr(text, prefix);
    if (!at)
        return NULL;
    const char *end = strchr(at, '\n');
    size_t n = end ? (size_t)(end - at) : strlen(at);
    assert_true(n < size);
    memcpy(buf, at, n);
    buf[n] = '\0';
    return buf;
}

/* True when `name` is one of the ", "-separated items after `after` in line. */
static bool lists(const char *line, const char *after, const char *name)
{
    const char *items = strstr(line, after);
    if (!items)
        return false;
    items += strlen(after);
    size_t n = strlen(name);
    for (const char *p = items; (p = strstr(p, name)) != NULL; p++) {
        bool starts = p == items || (p >= items + 2 && p[-2] == ',' && p[-1] == ' ');
        bool ends = p[n] == ',' || p[n] == ' ' || p[n] == '\0';
        if (starts && ends)
            return true;
    }
    return false;
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
    assert_int_equal(errno, ERANGE); /* a message can say "out of range" */
    assert_int_equal(parse_i64("-9223372036854775809", &i), -1);
    assert_int_equal(errno, ERANGE);
    assert_int_equal(parse_i64("99999999999999999999x", &i), -1);
    assert_int_equal(errno, EINVAL);
    const char *bad[] = {"", "  ", "4x", "x4", "1.0", "1e3", "4 2", NULL};
    for (const char **b = bad; *b; b++)
        if (parse_i64(*b, &i) == 0 || errno != EINVAL)
            fail_msg("parse_i64 accepted '%s', or not with EINVAL", *b);
    assert_int_equal(parse_i64(NULL, &i), -1);
    assert_int_equal(parse_u64("0", &u), 0);
    assert_int_equal(u, 0);
    assert_int_equal(parse_u64("-1", &u), -1);
    char longnum[100];
    memset(longnum, '1', 99);
    longnum[99] = '\0';
    assert_int_equal(parse_i64(longnum, &i), -1);
    assert_int_equal(errno, ERANGE); /* too long for any buffer: still out of range */
    longnum[0] = '-';
    assert_int_equal(parse_i64(longnum, &i), -1);
    assert_int_equal(errno, ERANGE);
    longnum[98] = 'x';
    assert_int_equal(parse_i64(longnum, &i), -1);
    assert_int_equal(errno, EINVAL);
    memset(longnum, '0', 98); /* leading zeros, as in 007 */
    longnum[97] = '7';
    longnum[98] = ' ';
    assert_int_equal(parse_i64(longnum, &i), 0);
    assert_int_equal(i, 7);
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
    assert_int_equal(parse_double("1e3", &d), 0);
    assert_true(d == 1000);
    const char *bad[] = {"",     "abc",   "1.5x",   "nan",     "inf", "1e999",
                         "0x10", "0x1p3", "-0X1.8", "0.5 0.5", NULL};
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
        {"0.0001G", 1}, {"1.2", 2}, /* never rounded down */
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        uint64_t v;
        if (parse_size_mib(good[i].text, &v))
            fail_msg("rejected '%s'", good[i].text);
        assert_int_equal(v, good[i].mib);
    }
    const char *bad[] = {"", "G", "-1", "-1G", "12X", "12GBs", "1e20T", "nan", "inf",
                         "0x10", "1e3", ".5G", "+5", NULL};
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
    assert_null(read_file("/nonexistent/file", &len, NULL));
}

static void test_config_set(void **state)
{
    (void)state;
    carma_config c;
    carma_err err;
    config_defaults(&c);
    assert_int_equal(c.sched.policy, POLICY_CARMA);
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
    assert_int_equal(config_set(&c, "estimator", "dnnmem", &err), -1);
    assert_non_null(strstr(err.msg, "unknown estimator 'dnnmem'"));
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
        {"kill_grace_s = inf\n", ":1: kill_grace_s"}, /* a timer cannot be set for ever */
        {"kill_grace_s = 1e9\n", ":1: kill_grace_s"},
        {"grace_s = 1e308\n", ":1: grace_s"}, /* a GPU in grace for good */
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
    /* a NUL byte would silently end the file there */
    static const char nul[] = "retry_cap = 1\n# x\0y\nwindow = 2\n";
    p = write_tmp_bytes(nul, sizeof nul - 1);
    carma_config before = c;
    assert_int_equal(config_load_file(&c, p, &err), -1);
    char want[256];
    snprintf(want, sizeof want, "%s:2: contains a NUL byte", p);
    assert_string_equal(err.msg, want);
    assert_same_config(&c, &before);
    unlink(p);
    free(p);
    assert_int_equal(config_load_file(&c, "/nonexistent.conf", &err), -1);
    assert_non_null(strstr(err.msg, "/nonexistent.conf"));
}

static void test_config_write_round_trip(void **state)
{
    (void)state;
    carma_config c, back;
    carma_err err;
    config_defaults(&c);
    static const char *const sets[] = {
        "policy=est-lug", "estimator=carma", "ewma_alpha=0.25", "or_min_free_mib=4G",
        "aggregation=risk-equal", "lucid_max_jobs=5", "socket=/tmp/x y.sock", "mps=on",
        "mps_active_thread_percentage=40", "sample_interval_s=0.25", "sim_interference=off",
        "sim_gpu_model=T4-16GB:16G:10:70", "sim_gpu_model=L4-24GB:24G:16:72",
        "sim_server=3xL4-24GB",
        "sim_interference_smact_k=0.123456789",
    };
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
        if (config_set_pair(&c, sets[i], &err))
            fail_msg("%s: %s", sets[i], err.msg);
    assert_int_equal(config_validate(&c, &err), 0);
    for (int list = 0; list < 2; list++) { /* carma config, and carma config --list */
        char *text = written(&c, list);
        char *p = write_tmp(text);
        config_defaults(&back);
        if (config_load_file(&back, p, &err))
            fail_msg("output does not load back: %s", err.msg);
        unlink(p);
        free(p);
        free(text);
        assert_same_config(&c, &back); /* 0.123456789 too */
    }
}

static void test_table_rows(void **state)
{
    (void)state;
    static const struct {
        size_t at, size;
    } scopes[] = {
        [CONFIG_SCHED] = {offsetof(carma_config, sched), sizeof(sched_config)},
        [CONFIG_DAEMON] = {offsetof(carma_config, daemon), sizeof(daemon_config)},
        [CONFIG_SIM] = {offsetof(carma_config, sim), sizeof(sim_params)},
    };
    assert_true(config_nrows > 30);
    for (size_t i = 0; i < config_nrows; i++) {
        const config_row *r = &config_rows[i];
        assert_non_null(r->name);
        assert_true(r->help && *r->help);
        assert_ptr_equal(config_find(r->name), r); /* names are unique */
        /* the field lies in the struct of the row's scope */
        assert_true((unsigned)r->scope < 3);
        if (r->offset < scopes[r->scope].at ||
            r->offset >= scopes[r->scope].at + scopes[r->scope].size)
            fail_msg("%s: field outside its scope's struct (%s)", r->name,
                     config_scope_name(r->scope));
        /* numbers have bounds, and their default lies within them */
        bool numeric = r->type == CONFIG_DOUBLE || r->type == CONFIG_INT;
        if (numeric != (r->bounds != NULL))
            fail_msg("%s: bounds on a %s row", r->name, numeric ? "missing" : "non-numeric");
        if (r->type == CONFIG_DOUBLE && !sched_bounds_hold(r->bounds, *r->def.d))
            fail_msg("%s: default %g out of its bounds", r->name, *r->def.d);
        if (r->type == CONFIG_INT && !sched_bounds_hold(r->bounds, *r->def.i))
            fail_msg("%s: default %d out of its bounds", r->name, *r->def.i);
        /* the policy and estimator lists are generated, never typed into the help */
        if ((r->type == CONFIG_POLICY || r->type == CONFIG_ESTIMATOR) && !strstr(r->help, "{}"))
            fail_msg("%s: help lists the names by hand", r->name);
    }
    assert_null(config_find("no_such_key"));

    /* The defaults are the core's and the simulator's own. */
    carma_config c, d;
    config_defaults(&c);
    memset(&d, 0, sizeof d);
    sched_config_defaults(&d.sched);
    d.daemon = c.daemon;
    sim_params_defaults(&d.sim);
    assert_same_config(&c, &d);
    assert_string_equal(c.daemon.gpu_backend, "nvml");
    assert_true(c.daemon.sample_interval_s == 1.0 && c.daemon.kill_grace_s == 10.0);
}

static void test_row_defaults_load(void **state)
{
    (void)state;
    carma_config d, c;
    carma_err err;
    config_defaults(&d);
    if (config_validate(&d, &err))
        fail_msg("the defaults do not validate: %s", err.msg);
    char *text = written(&d, false);

    /* Each row's default, as written, sets that option to its default and validates. */
    for (size_t i = 0; i < config_nrows; i++) {
        const config_row *r = &config_rows[i];
        if (r->type == CONFIG_GPU_MODELS)
            continue; /* none by default: written as a comment */
        char value[CONFIG_STR_MAX];
        if (!value_in(text, r->name, value, sizeof value))
            fail_msg("%s: not written", r->name);
        memset(&c, 0xA5, sizeof c); /* so the set must write the whole field */
        c.sim.gpu_models.n = 0;
        if (config_set(&c, r->name, value, &err))
            fail_msg("%s = %s: %s", r->name, value, err.msg);
        if (!row_equal(r, &c, &d))
            fail_msg("%s = %s does not give the default back", r->name, value);
        config_defaults(&c);
        if (config_set(&c, r->name, value, &err) || config_validate(&c, &err))
            fail_msg("%s = %s: %s", r->name, value, err.msg);
    }

    /* The whole output loads over a config of garbage and gives every default back. */
    memset(&c, 0xA5, sizeof c);
    c.sim.gpu_models.n = 0;
    char *p = write_tmp(text);
    if (config_load_file(&c, p, &err))
        fail_msg("carma config's output does not load: %s", err.msg);
    assert_same_config(&c, &d);
    unlink(p);
    free(p);

    /* data/carma.conf is exactly `carma config` (regenerate it with `carma config`). */
    char *shipped = read_file(CARMA_DATA_DIR "/carma.conf", NULL, NULL);
    assert_non_null(shipped);
    if (strcmp(shipped, text))
        fail_msg("data/carma.conf differs from `carma config`: regenerate it");
    free(shipped);
    free(text);
}

/* A number just outside b: below its minimum, or above its maximum. */
static void outside(const sched_bounds *b, bool above, char *buf, size_t size)
{
    double x = above ? b->max + 1 : b->min_open ? b->min : b->min - 1;
    snprintf(buf, size, "%.17g", x);
}

static void assert_refused(carma_config *c, const config_row *r, const char *value)
{
    carma_config before = *c;
    carma_err err;
    char prefix[128];
    snprintf(prefix, sizeof prefix, "%s: ", r->name);
    if (config_set(c, r->name, value, &err) == 0)
        fail_msg("%s accepted '%.40s'", r->name, value);
    if (strncmp(err.msg, prefix, strlen(prefix)))
        fail_msg("%s = '%.40s': message '%s' does not name the key", r->name, value, err.msg);
    assert_same_config(c, &before); /* a refused value changes nothing */
}

static void test_out_of_range_refused(void **state)
{
    (void)state;
    carma_config c;
    carma_err err;
    char big[CONFIG_STR_MAX + 10];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    int kinds_seen = 0;
    for (size_t i = 0; i < config_nrows; i++) {
        const config_row *r = &config_rows[i];
        char v[64];
        config_defaults(&c);
        kinds_seen |= 1 << r->type;
        switch (r->type) {
        case CONFIG_POLICY:
        case CONFIG_ESTIMATOR:
        case CONFIG_AGG:
            assert_refused(&c, r, "no-such-name");
            assert_refused(&c, r, "");
            break;
        case CONFIG_DOUBLE:
        case CONFIG_INT: {
            outside(r->bounds, false, v, sizeof v);
            assert_refused(&c, r, v);
            if (!isinf(r->bounds->max)) {
                outside(r->bounds, true, v, sizeof v);
                assert_refused(&c, r, v);
            }
            assert_refused(&c, r, "ten");
            assert_refused(&c, r, "nan");
            if (r->type == CONFIG_INT) {
                assert_refused(&c, r, "1.5");
                assert_refused(&c, r, "99999999999");
            }
            /* a value out of bounds that got in some other way fails config_validate */
            double below = r->bounds->min_open ? r->bounds->min : r->bounds->min - 1;
            if (r->type == CONFIG_DOUBLE)
                *(double *)((char *)&c + r->offset) = below;
            else
                *(int *)((char *)&c + r->offset) = (int)below;
            assert_int_equal(config_validate(&c, &err), -1);
            if (strncmp(err.msg, r->name, strlen(r->name)) || err.msg[strlen(r->name)] != ':')
                fail_msg("%s: validate's message '%s' does not name the key", r->name, err.msg);
            break;
        }
        case CONFIG_MIB:
            assert_refused(&c, r, "lots");
            assert_refused(&c, r, "-1");
            break;
        case CONFIG_BOOL:
            assert_refused(&c, r, "maybe");
            break;
        case CONFIG_STRING:
            assert_refused(&c, r, big);
            break;
        case CONFIG_GPU_MODELS:
            assert_refused(&c, r, "T4");
            assert_refused(&c, r, "T4:lots:10:70");
            break;
        }
    }
    assert_int_equal(kinds_seen, (1 << (CONFIG_GPU_MODELS + 1)) - 1); /* every type has a row */

    /* Checks across keys run in config_validate, once every key is in. */
    config_defaults(&c);
    assert_int_equal(config_set(&c, "sim_power_busy_frac", "1.9", &err), 0);
    assert_int_equal(config_validate(&c, &err), -1);
    assert_non_null(strstr(err.msg, "sim_power_busy_frac, sim_power_util_frac"));
    assert_int_equal(config_set(&c, "sim_power_util_frac", "0.05", &err), 0);
    assert_int_equal(config_validate(&c, &err), 0);
    assert_int_equal(config_set(&c, "sim_server", "2xT4-16GB", &err), 0);
    assert_int_equal(config_validate(&c, &err), -1);
    assert_non_null(strstr(err.msg, "sim_server"));
    assert_int_equal(config_set(&c, "sim_gpu_model", "T4-16GB:16G:10:70", &err), 0);
    assert_int_equal(config_validate(&c, &err), 0);
    char *p = write_tmp("sim_server = 2xT4-16GB\nsim_gpu_model = T4-16GB:16G:10:70\n");
    config_defaults(&c);
    assert_int_equal(config_load_file(&c, p, &err), 0);
    unlink(p);
    free(p);
}

static void test_help_lists_names(void **state)
{
    (void)state;
    carma_config c;
    carma_err err;
    config_defaults(&c);
    char *text = written(&c, false), *list = written(&c, true), line[2048];
    const char *policy_help = "# placement policy: ",
               *est_help = "# memory figure of the est-* policies: ";
    assert_non_null(line_in(text, policy_help, line, sizeof line));
    for (int i = 0; i < POLICY_COUNT; i++)
        if (!lists(line, policy_help, policy_name((policy_id)i)))
            fail_msg("the policy help lacks '%s': %s", policy_name((policy_id)i), line);
    assert_non_null(line_in(text, est_help, line, sizeof line));
    for (int i = 0; i < MEM_SOURCE_COUNT; i++)
        if (!lists(line, est_help, mem_source_estimator_name((mem_source)i)))
            fail_msg("the estimator help lacks '%s': %s", mem_source_estimator_name((mem_source)i),
                     line);
    assert_null(strstr(text, "{}"));

    /* --list says where each option applies, what it takes and its default. */
    assert_non_null(line_in(list, "#   applies to: sched", line, sizeof line));
    for (int i = 0; i < POLICY_COUNT; i++)
        assert_non_null(strstr(line, policy_name((policy_id)i)));
    assert_non_null(strstr(line, "default carma"));
    assert_non_null(strstr(list, "#   applies to: daemon (carma daemon); takes 0..100; default 0"));
    assert_non_null(strstr(list, "#   applies to: sim (carma simulate); takes a number >= 0; "
                                 "default 16.7848"));

    /* An unknown name is answered with the names from the same table. */
    assert_int_equal(config_set(&c, "policy", "round-robin", &err), -1);
    for (int i = 0; i < POLICY_COUNT; i++)
        assert_non_null(strstr(err.msg, policy_name((policy_id)i)));
    char names[512];
    assert_true(config_names(CONFIG_AGG, ", ", " or ", names, sizeof names) < (int)sizeof names);
    assert_string_equal(names, "mean, ewma, risk or risk-equal");
    int whole = config_names(CONFIG_ESTIMATOR, ", ", NULL, names, sizeof names);
    assert_int_equal(whole, (int)strlen(names));
    assert_int_equal(config_names(CONFIG_ESTIMATOR, ", ", NULL, names, 8), whole);
    assert_string_equal(names, "none, h"); /* cut to fit, the whole length returned */
    free(text);
    free(list);
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
        cmocka_unit_test(test_table_rows),
        cmocka_unit_test(test_row_defaults_load),
        cmocka_unit_test(test_out_of_range_refused),
        cmocka_unit_test(test_help_lists_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
