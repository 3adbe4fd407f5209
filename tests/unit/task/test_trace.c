/* test_trace.c — traces: the shipped ones load with their documented sizes and spans, bad
 * traces are rejected with file and line, and trace_write is atomic and round-trips. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tmpfile_fixture.h"

#include "task/trace.h"

#define TRACES CARMA_DATA_DIR "/traces/"

static void expect_load_error(const char *text, const char *frag1, const char *frag2)
{
    char *path = write_tmp(text);
    trace t;
    carma_err err = {{0}};
    int rc = trace_load(path, &t, &err);
    unlink(path);
    if (rc != -1)
        fail_msg("accepted:\n%s", text);
    if (!strstr(err.msg, path) || !strstr(err.msg, frag1) || (frag2 && !strstr(err.msg, frag2)))
        fail_msg("message '%s' lacks the path, '%s' or '%s'", err.msg, frag1, frag2 ? frag2 : "");
    assert_null(t.entries);
    assert_int_equal(t.n, 0);
    free(path);
}

static void test_shipped_traces(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        size_t n;
        double span_s;
    } want[] = {
        {"philly_mix_90.csv", 90, 12514},  {"philly_heavy_60.csv", 60, 8966},
        {"philly_trace_t1.csv", 60, 13767}, {"philly_trace_t2.csv", 60, 18601},
        {"philly_scenario_old.csv", 107, 13948}, {"test.csv", 5, 0},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, TRACES "%s", want[i].file);
        trace t;
        carma_err err;
        if (trace_load(path, &t, &err))
            fail_msg("%s", err.msg);
        assert_int_equal(t.n, want[i].n);
        assert_true(t.entries[0].submit_offset_s == 0);
        assert_true(t.entries[t.n - 1].submit_offset_s == want[i].span_s);
        assert_int_equal(t.entries[0].seq, 1);
        assert_string_equal(t.path, path);
        trace_free(&t);
    }
    trace t;
    carma_err err;
    assert_int_equal(trace_load(TRACES "philly_mix_90.csv", &t, &err), 0);
    assert_string_equal(t.entries[0].task_file, "gpt2_large_2.rad");
    assert_string_equal(t.entries[1].task_file, "efficientNet3.rad");
    assert_true(t.entries[1].submit_offset_s == 73);
    trace_free(&t);
}

#define HDR "seq,submit_offset_s,task_file\n"

static void test_good_variants(void **state)
{
    (void)state;
    /* CRLF, a BOM, spaces around the column names, quoted names with commas, fractional and
     * equal offsets, blank lines */
    char *path = write_tmp("\xEF\xBB\xBF" "seq, submit_offset_s , task_file\r\n"
                           "1,0,a.rad\r\n2,0.5,\"dir/b,c.yaml\"\r\n\r\n3,0.5, d.rad \r\n");
    trace t;
    carma_err err;
    int rc = trace_load(path, &t, &err);
    unlink(path);
    free(path);
    if (rc)
        fail_msg("%s", err.msg);
    assert_int_equal(t.n, 3);
    assert_string_equal(t.entries[1].task_file, "dir/b,c.yaml");
    assert_true(t.entries[1].submit_offset_s == 0.5);
    assert_string_equal(t.entries[2].task_file, "d.rad");
    trace_free(&t);

    path = write_tmp(HDR "1,0,a.rad\n2,1e9,a.rad\n");
    rc = trace_load(path, &t, &err);
    unlink(path);
    free(path);
    if (rc)
        fail_msg("%s", err.msg);
    assert_true(t.entries[1].submit_offset_s == TRACE_MAX_OFFSET_S);
    trace_free(&t);
}

static void test_malformed_traces(void **state)
{
    (void)state;
    expect_load_error("", "empty file", NULL);
    expect_load_error(HDR, "no entries", NULL);
    expect_load_error("1,0,a.rad\n2,5,b.rad\n", "missing column 'seq'", NULL);
    expect_load_error("seq,offset,task_file\n1,0,a.rad\n", "missing column 'submit_offset_s'",
                      NULL);
    expect_load_error(HDR "1,0,a.rad\n2,10,b.rad\n3,5,c.rad\n", ":4:",
                      "submit_offset_s 5 is before the previous row's 10");
    expect_load_error(HDR "1,-1,a.rad\n", ":2:", ">= 0");
    /* 1e300 s made the simulated makespan 0; the bound is 1e9 s, and 1e9 itself loads */
    expect_load_error(HDR "1,1e300,a.rad\n", ":2:",
                      "submit_offset_s 1e+300 is past the latest a trace may hold, 1000000000 s");
    expect_load_error(HDR "1,0,a.rad\n2,1000000000.5,a.rad\n", ":3:",
                      "submit_offset_s 1000000000.5 is past the latest a trace may hold, "
                      "1000000000 s");
    /* offsets in full: %g printed both as 1.23457e+06 */
    expect_load_error(HDR "1,1234567.5,a.rad\n2,1234567.25,b.rad\n", ":3:",
                      "submit_offset_s 1234567.25 is before the previous row's 1234567.5");
    expect_load_error(HDR "1,soon,a.rad\n", ":2:", "expected seconds, got 'soon'");
    expect_load_error(HDR "1,10s,a.rad\n", ":2:", NULL);
    expect_load_error(HDR "1,nan,a.rad\n", ":2:", NULL);
    /* seq is the submission's number, from 1, each its own */
    expect_load_error(HDR "0,0,a.rad\n", ":2: seq: expected a whole number 1..1000000000", NULL);
    expect_load_error(HDR "1,0,a.rad\n2,1,a.rad\n\n1,2,a.rad\n3,4,a.rad\n2,5,a.rad\n", ":5:",
                      "seq 1 repeats line 2's");
    expect_load_error(HDR "x,0,a.rad\n", ":2: seq", NULL);
    expect_load_error(HDR "1.5,0,a.rad\n", ":2: seq", NULL);
    expect_load_error(HDR "1,0,\n", ":2: empty task_file", NULL);
    expect_load_error(HDR "1,0, \n", ":2: empty task_file", NULL);
    expect_load_error(HDR "1,0,a.rad\n2,1\n", ":3:", "expected 3 fields");
    expect_load_error(HDR "1,0,a.rad,extra\n", ":2:", "expected 3 fields");
    expect_load_error(HDR "1,0,\"a.rad\n", ":2:", "unterminated quoted field");
    expect_load_error(HDR "1,0,a\"b.rad\n", ":2:", "stray quote");
    expect_load_error(HDR "1,0,\"a\"b\n", ":2:", "text after a closing quote");
}

/* A NUL byte before row 2 of 3 ran the trace with 1 task. */
static void test_nul_byte_refused(void **state)
{
    (void)state;
    static const char text[] = HDR "1,0,a.rad\n\0002,5,a.rad\n3,9,a.rad\n";
    char *path = write_tmp_bytes(text, sizeof text - 1);
    trace t;
    carma_err err;
    assert_int_equal(trace_load(path, &t, &err), -1);
    char want[256];
    snprintf(want, sizeof want, "%s:3: contains a NUL byte", path);
    assert_string_equal(err.msg, want);
    unlink(path);
    free(path);
}

static void test_write_round_trip(void **state)
{
    (void)state;
    char dir[] = "/tmp/carma_test_tracew_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/out.csv", dir);
    trace_entry e[] = {
        {1, 0, "a.rad"}, {2, 0.1, "dir/with,comma \"q\".yaml"}, {3, 1234.5, "b.rad"},
    };
    trace t = {NULL, e, 3}, back;
    carma_err err;
    assert_int_equal(trace_write(path, &t, &err), 0);
    assert_int_equal(trace_load(path, &back, &err), 0);
    assert_int_equal(back.n, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(back.entries[i].seq, e[i].seq);
        assert_true(back.entries[i].submit_offset_s == e[i].submit_offset_s); /* exact */
        assert_string_equal(back.entries[i].task_file, e[i].task_file);
    }
    trace_free(&back);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);

    trace_entry twice[] = {{1, 0, "a.rad"}, {2, 1, "b.rad"}, {2, 2, "c.rad"}};
    trace tt = {NULL, twice, 3};
    assert_int_equal(trace_write(path, &tt, &err), -1);
    assert_non_null(strstr(err.msg, "entry 3: seq 2 repeats entry 2's"));
    trace_entry zero[] = {{0, 0, "a.rad"}};
    trace tz = {NULL, zero, 1};
    assert_int_equal(trace_write(path, &tz, &err), -1);
    assert_non_null(strstr(err.msg, "entry 1: seq 0 is not 1..1000000000"));

    /* an invalid trace is refused before anything is written: the old file stays */
    trace_entry bad[] = {{1, 5, "a.rad"}, {2, 1, "b.rad"}};
    trace tb = {NULL, bad, 2};
    assert_int_equal(trace_write(path, &tb, &err), -1);
    assert_non_null(strstr(err.msg, "entry 2"));
    assert_int_equal(trace_load(path, &back, &err), 0);
    assert_int_equal(back.n, 3);
    trace_free(&back);

    /* a directory that does not exist: error, and no temporary file left anywhere */
    char missing[300];
    snprintf(missing, sizeof missing, "%s/nodir/out.csv", dir);
    assert_int_equal(trace_write(missing, &t, &err), -1);
    assert_non_null(strstr(err.msg, missing));

    /* the target is a directory: rename fails, the temporary file is removed */
    char target[300];
    snprintf(target, sizeof target, "%s/sub", dir);
    assert_int_equal(mkdir(target, 0755), 0);
    char inner[320];
    snprintf(inner, sizeof inner, "%s/x", target);
    FILE *f = fopen(inner, "w"); /* non-empty, so rename over it fails */
    assert_non_null(f);
    fclose(f);
    assert_int_equal(trace_write(target, &t, &err), -1);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) -eq 2", dir); /* out.csv and sub only */
    assert_int_equal(system(cmd), 0);

    unlink(inner);
    rmdir(target);
    unlink(path);
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_traces),
        cmocka_unit_test(test_good_variants),
        cmocka_unit_test(test_malformed_traces),
        cmocka_unit_test(test_nul_byte_refused),
        cmocka_unit_test(test_write_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
