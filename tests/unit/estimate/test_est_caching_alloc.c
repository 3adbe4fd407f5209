/* test_est_caching_alloc.c — the caching-allocator model (rounding, pools, segment sizes, best
 * fit, splitting, merging, peaks), the trace replay with its workspaces and estimate parts, the
 * cuDNN workspace rule (k x the input over a band of k), and the xmem fit's rule (no row
 * underestimated, per-family contexts and margins) and its cross-validation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "estimate/caching_alloc.h"
#include "estimate/trace_replay.h"
#include "estimate/xmem.h"

#define MiB (1024ull * 1024ull)

static void test_rounding_and_segments(void **state)
{
    (void)state;
    assert_int_equal(ca_round(1), 512);
    assert_int_equal(ca_round(512), 512);
    assert_int_equal(ca_round(513), 1024);
    assert_int_equal(ca_segment_size(512), 2 * MiB);
    assert_int_equal(ca_segment_size(MiB), 2 * MiB);              /* <= 1 MiB: small pool */
    assert_int_equal(ca_segment_size(MiB + 512), 20 * MiB);       /* < 10 MiB: 20 MiB */
    assert_int_equal(ca_segment_size(10 * MiB), 10 * MiB);        /* >= 10 MiB: 2 MiB steps */
    assert_int_equal(ca_segment_size(10 * MiB + 512), 12 * MiB);
}

static void test_small_pool_split_and_reuse(void **state)
{
    (void)state;
    caching_alloc ca;
    ca_init(&ca);
    int a = ca_alloc(&ca, 1000); /* 1024 B of a new 2 MiB segment, the rest split off */
    int b = ca_alloc(&ca, 1000);
    assert_true(a >= 0 && b >= 0);
    assert_int_equal(ca.reserved, 2 * MiB);
    assert_int_equal(ca.segments, 1);
    assert_int_equal(ca.allocated, 2048);
    assert_int_equal(ca.blocks[b].addr, ca.blocks[a].addr + 1024);
    ca_release(&ca, a);
    int c = ca_alloc(&ca, 600); /* best fit: the freed 1024 B block; rounded to 1024, no split */
    assert_int_equal(ca.blocks[c].addr, 0);
    assert_int_equal(ca.blocks[c].size, 1024);
    ca_release(&ca, c);
    int d = ca_alloc(&ca, 400); /* 512 B of it: the 512 B remainder is >= 512, so it splits */
    assert_int_equal(ca.blocks[d].addr, 0);
    assert_int_equal(ca.blocks[d].size, 512);
    assert_int_equal(ca.reserved, 2 * MiB); /* no new segment */
    ca_free_all(&ca);
}

static void test_large_pool_no_split_under_1mib(void **state)
{
    (void)state;
    caching_alloc ca;
    ca_init(&ca);
    int a = ca_alloc(&ca, 19 * MiB + 512 * 1024); /* >= 10 MiB: rounded up to 2 MiB, 20 MiB */
    assert_int_equal(ca.reserved, 20 * MiB);
    /* remainder 0.5 MiB <= 1 MiB: the large pool does not split, the block keeps it all */
    assert_int_equal(ca.blocks[a].size, 20 * MiB);
    assert_int_equal(ca.allocated, 20 * MiB);
    int b = ca_alloc(&ca, 2 * MiB); /* 1 MiB < 2 MiB < 10 MiB: a new 20 MiB segment, split */
    assert_int_equal(ca.reserved, 40 * MiB);
    assert_int_equal(ca.blocks[b].size, 2 * MiB);
    assert_int_equal(ca.segments, 2);
    ca_free_all(&ca);
}

static void test_best_fit_and_merge(void **state)
{
    (void)state;
    caching_alloc ca;
    ca_init(&ca);
    /* one 20 MiB segment carved into 4 + 2 + 6 + 8 MiB */
    int a = ca_alloc(&ca, 4 * MiB), b = ca_alloc(&ca, 2 * MiB), c = ca_alloc(&ca, 6 * MiB);
    int d = ca_alloc(&ca, 8 * MiB);
    assert_int_equal(ca.segments, 1);
    ca_release(&ca, a);
    ca_release(&ca, c);
    /* 5 MiB fits the 6 MiB hole and the 4 MiB one does not: best fit takes the 6 MiB one;
     * the 1 MiB remainder is not > 1 MiB, so it is not split */
    int e = ca_alloc(&ca, 5 * MiB);
    assert_int_equal(ca.blocks[e].addr, 6 * MiB);
    assert_int_equal(ca.blocks[e].size, 6 * MiB);
    ca_release(&ca, e);
    /* freeing b merges a, b and c into one 12 MiB block at address 0 */
    ca_release(&ca, b);
    int f = ca_alloc(&ca, 12 * MiB);
    assert_int_equal(ca.blocks[f].addr, 0);
    assert_int_equal(ca.reserved, 20 * MiB);
    /* ties in size go to the lowest address */
    ca_release(&ca, f);
    ca_release(&ca, d);
    assert_int_equal(ca.allocated, 0);
    int g = ca_alloc(&ca, 20 * MiB); /* all merged back: the whole segment */
    assert_int_equal(ca.blocks[g].addr, 0);
    assert_int_equal(ca.peak_reserved, 20 * MiB);
    assert_int_equal(ca.peak_allocated, 20 * MiB);
    ca_free_all(&ca);
}

static void test_pools_apart(void **state)
{
    (void)state;
    caching_alloc ca;
    ca_init(&ca);
    int big = ca_alloc(&ca, 4 * MiB);
    ca_release(&ca, big); /* a free 20 MiB large-pool segment */
    ca_alloc(&ca, 4096);  /* small requests never use large-pool blocks */
    assert_int_equal(ca.reserved, 22 * MiB);
    ca_free_all(&ca);
}

/* Writes text[0..len) (NUL bytes and all) into a new temporary file; its path. */
static char *write_trace_n(const char *text, size_t len)
{
    static char path[] = "/tmp/carma-test-trace-XXXXXX";
    strcpy(path, "/tmp/carma-test-trace-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
    return path;
}

static char *write_trace(const char *text)
{
    return write_trace_n(text, strlen(text));
}

static void test_replay_and_parts(void **state)
{
    (void)state;
    /* two 12 MiB tensors, a GEMM on each thread, a convolution over 12 MiB tensors */
    char *path = write_trace("carma-trace 1\n"
                             "a 1 12582912\n"
                             "g fwd\n"
                             "a 2 12582912\n"
                             "c 12582912 12582912 1000\n"
                             "f 1\n"
                             "g bwd\n"
                             "s 1\n"
                             "end 1\n");
    mtrace_events t;
    carma_err err;
    assert_int_equal(mtrace_load(path, &t, &err), 0);
    assert_int_equal(t.steps, 1);
    assert_int_equal(t.convs, 1);
    assert_int_equal(t.gemm_threads, 2);
    replay_result r;
    replay_rules bare = {.workspaces = false};
    assert_int_equal(mtrace_replay(&t, &bare, &r, &err), 0);
    assert_int_equal(r.peak_reserved, 24 * MiB);
    /* with workspaces: each cuBLAS workspace (8.125 MiB) takes a 20 MiB segment; the conv
     * workspace (ratio 1: 12 MiB) a 12 MiB one while both tensors live */
    replay_rules full = {.workspaces = true, .conv_ws_ratio = 1};
    assert_int_equal(mtrace_replay(&t, &full, &r, &err), 0);
    assert_int_equal(r.peak_reserved, (24 + 20 + 12) * MiB);
    xmem_coeffs c = {.context_conv_mib = 1000, .context_plain_mib = 500, .conv_ws_ratio = 1,
                     .margin_conv = 0.5, .margin_plain = 0.1};
    xmem_estimate e;
    assert_int_equal(xmem_estimate_trace(&t, &c, &e, &err), 0);
    assert_true(e.convolutions);
    assert_float_equal(e.context_mib, 1000, 1e-9);
    assert_float_equal(e.reserved_mib, 24, 1e-9);
    assert_float_equal(e.workspaces_mib, 32, 1e-9);
    assert_float_equal(e.margin_mib, 28, 1e-9);
    assert_float_equal(e.total_mib, 1000 + 56 + 28, 1e-9);
    mtrace_free(&t);
    unlink(path);
}

/* The reserved peak of t's replay with the cuDNN rule at ratio k and cap (MiB, 0: none):
 * that one k when band < 0, else the band's (xmem_replay_band). */
static uint64_t peak_of(const mtrace_events *t, double k, double cap, double band)
{
    replay_result r;
    carma_err err;
    replay_rules one = {.workspaces = true, .conv_ws_ratio = k, .conv_ws_cap_mib = cap};
    int rc = band < 0 ? mtrace_replay(t, &one, &r, &err)
                      : xmem_replay_band(t, k, cap, band, &r, &err);
    assert_int_equal(rc, 0);
    return r.peak_reserved;
}

/* The cuDNN rule: k x the input (not the output), at most the cap, the peak the largest over
 * the band. */
static void test_conv_workspace_band(void **state)
{
    (void)state;
    /* one convolution over a 2 MiB input and a 40 MiB output, nothing else */
    char *path = write_trace("carma-trace 1\n"
                             "c 2097152 41943040 1000\n"
                             "s 1\n"
                             "end 1\n");
    mtrace_events t;
    carma_err err;
    assert_int_equal(mtrace_load(path, &t, &err), 0);
    /* k = 5.5: 11 MiB, a segment of 12 MiB (rounded to 2 MiB); k = 5: 10 MiB, its own size;
     * k = 4.5: 9 MiB, under 10 MiB, so a 20 MiB segment: the band [4.5, 5.5] keeps 20 */
    assert_int_equal(peak_of(&t, 5.5, 0, -1), 12 * MiB);
    assert_int_equal(peak_of(&t, 5, 0, -1), 10 * MiB);
    assert_int_equal(peak_of(&t, 5.5, 0, XMEM_WS_BAND), 20 * MiB);
    assert_int_equal(peak_of(&t, 5.5, 0, 0), 12 * MiB); /* no band: k = 5.5 alone */
    /* the band stops at k = 0: ratio 0.5 tries 0.5 (1 MiB: small pool, a 2 MiB segment), 0 */
    assert_int_equal(peak_of(&t, 0.5, 0, XMEM_WS_BAND), 2 * MiB);
    /* the cap: k = 5.5 asks 11 MiB; capped at 10 MiB it takes a 10 MiB segment, and a cap
     * above what it asks changes nothing */
    assert_int_equal(peak_of(&t, 5.5, 10, -1), 10 * MiB);
    assert_int_equal(peak_of(&t, 5.5, 16, -1), 12 * MiB);
    assert_int_equal(peak_of(&t, 5.5, 10, 0), 10 * MiB);
    /* the band capped at 10 MiB: k = 5.5 (10), 5 (10), 4.5 (9 MiB, a 20 MiB segment) */
    assert_int_equal(peak_of(&t, 5.5, 10, XMEM_WS_BAND), 20 * MiB);
    xmem_coeffs c = {.context_conv_mib = 1000, .conv_ws_ratio = 5.5, .margin_conv = 0.5};
    xmem_estimate e;
    assert_int_equal(xmem_estimate_trace(&t, &c, &e, &err), 0);
    assert_float_equal(e.reserved_mib, 0, 1e-9);
    assert_float_equal(e.workspaces_mib, 20, 1e-9);
    assert_float_equal(e.total_mib, 1000 + 20 + 10, 1e-9);
    c.conv_ws_cap_mib = 10;
    c.conv_ws_ratio = 6; /* the band [5, 6]: 10 MiB at every k, capped */
    assert_int_equal(xmem_estimate_trace(&t, &c, &e, &err), 0);
    assert_float_equal(e.workspaces_mib, 10, 1e-9);
    assert_float_equal(e.total_mib, 1000 + 10 + 5, 1e-9);
    mtrace_free(&t);
    unlink(path);
}

static void test_bad_traces(void **state)
{
    (void)state;
    mtrace_events t;
    carma_err err;
    char *path = write_trace("carma-trace 1\na 1 100\n");
    assert_int_equal(mtrace_load(path, &t, &err), -1);
    assert_non_null(strstr(err.msg, "incomplete"));
    unlink(path);
    path = write_trace("carma-trace 1\nzap\nend 1\n");
    assert_int_equal(mtrace_load(path, &t, &err), -1);
    assert_non_null(strstr(err.msg, "unknown event 'zap'"));
    unlink(path);
    /* Found by fuzz_xmemtrace: a size near 2^64 overflowed the cuDNN workspace rule. */
    path = write_trace("carma-trace 1\nc 1000 27670116110564327424 128\nend 1\n");
    assert_int_equal(mtrace_load(path, &t, &err), -1);
    assert_non_null(strstr(err.msg, "out of range"));
    unlink(path);
    path = write_trace("carma-trace 1\na 1 1125899906842625\nend 1\n");
    assert_int_equal(mtrace_load(path, &t, &err), -1);
    unlink(path);
    path = write_trace("not a trace\n");
    assert_int_equal(mtrace_load(path, &t, &err), -1);
    assert_non_null(strstr(err.msg, "not a carma trace"));
    unlink(path);
    /* Found by an exploratory tester: each refused with its line and why. */
    static const struct {
        const char *events, *msg;
    } bad[] = {
        /* zero steps (--run refuses --iterations 0), negative, past an int (sscanf's %d
         * overflowed: undefined behaviour), trailing junk */
        {"end 0\n", ":2: 'end 0': the trace holds no optimizer step"},
        {"end -3\n", ":2: malformed event 'end -3' (expected 'end N', whole numbers)"},
        {"end 99999999999\n", ":2: step count out of range in 'end 99999999999'"},
        {"end 3 junk\n", ":2: malformed event 'end 3 junk' (expected 'end N')"},
        {"end\n", ":2: malformed event 'end' (expected 'end N')"},
        {"end 3x\n", ":2: malformed event 'end 3x'"},
        {"a 1 100 junk\nend 3\n", ":2: malformed event 'a 1 100 junk' (expected 'a ID BYTES')"},
        {"a 1 -100\nend 1\n", ":2: malformed event 'a 1 -100'"},
        {"a -1 100\nend 1\n", ":2: malformed event 'a -1 100'"},
        {"a 1 +100\nend 1\n", ":2: malformed event 'a 1 +100'"},
        {"a 1 1e3\nend 1\n", ":2: malformed event 'a 1 1e3'"},
        {"a 1\nend 1\n", ":2: malformed event 'a 1' (expected 'a ID BYTES')"},
        {"a 0 100\nend 1\n", ":2: bad storage id in 'a 0 100'"},
        {"a 4294967297 100\nend 1\n", ":2: bad storage id in 'a 4294967297 100'"},
        {"a 1 99999999999999999999999\nend 1\n", ":2: size out of range"},
        {"f 1 2\nend 1\n", ":2: malformed event 'f 1 2' (expected 'f ID')"},
        {"f -1\nend 1\n", ":2: malformed event 'f -1'"},
        {"f 0\nend 1\n", ":2: bad storage id in 'f 0'"},
        {"g fwd junk\nend 1\n", ":2: malformed event 'g fwd junk' (expected 'g fwd|bwd')"},
        {"g sideways\nend 1\n", ":2: malformed event 'g sideways' (expected 'g fwd|bwd')"},
        {"l 1\nend 1\n", ":2: malformed event 'l 1' (expected 'l')"},
        {"c 1 2\nend 1\n", ":2: malformed event 'c 1 2' (expected 'c IN OUT WEIGHT')"},
        {"c 1 2 3 4\nend 1\n", ":2: malformed event 'c 1 2 3 4'"},
        {"c 1 -2 3\nend 1\n", ":2: malformed event 'c 1 -2 3'"},
        {"c 1 2 1125899906842625\nend 1\n", ":2: size out of range"},
        {"s 0\nend 1\n", ":2: step 0 in 's 0'"},
        {"s -1\nend 1\n", ":2: malformed event 's -1'"},
        {"s 1 junk\nend 1\n", ":2: malformed event 's 1 junk' (expected 's N')"},
        {"s 99999999999\nend 1\n", ":2: step count out of range"},
        {"\nend 1\n", ":2: empty line"},
        {"end 1\nend 1\n", ":3: event after the end"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[256];
        snprintf(text, sizeof text, "carma-trace 1\n%s", bad[i].events);
        path = write_trace(text);
        if (mtrace_load(path, &t, &err) == 0)
            fail_msg("accepted: %s", bad[i].events);
        if (!strstr(err.msg, path) || !strstr(err.msg, bad[i].msg))
            fail_msg("%s: got '%s', want '%s'", bad[i].events, err.msg, bad[i].msg);
        unlink(path);
    }
    /* A NUL byte would hide the rest of its line from a C-string parser. */
    static const char nul[] = "carma-trace 1\na 1 100\0 junk\nend 1\n";
    path = write_trace_n(nul, sizeof nul - 1);
    assert_int_equal(mtrace_load(path, &t, &err), -1);
    assert_non_null(strstr(err.msg, ":2: contains a NUL byte"));
    unlink(path);
    /* A line longer than the old 256-byte buffer was read as two: "f 1" after 255 bytes
     * became an event of its own, silently. */
    char lng[8192];
    snprintf(lng, sizeof lng, "carma-trace 1\na 1 100%*s\nend 1\n", 248 + 3, "f 1");
    path = write_trace(lng);
    assert_int_equal(mtrace_load(path, &t, &err), -1);
    assert_non_null(strstr(err.msg, ":2: malformed event 'a 1 100 "));
    unlink(path);
    snprintf(lng, sizeof lng, "carma-trace 1\na 1 100%*s\nend 1\n", 5000, "f 1");
    path = write_trace(lng);
    assert_int_equal(mtrace_load(path, &t, &err), -1);
    assert_non_null(strstr(err.msg, ":2: line too long"));
    unlink(path);
}

/* Traces with CRLF line endings (copied through Windows) read as with LF; so do fields apart
 * by more than one space or a tab. */
static void test_crlf_trace(void **state)
{
    (void)state;
    mtrace_events t;
    carma_err err;
    char *path = write_trace("carma-trace 1\r\na 1 12582912\r\ng fwd\r\nc 1 2  3\r\n"
                             "f\t1\r\ns 1\r\ns 2\r\nend 2\r\n");
    if (mtrace_load(path, &t, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(t.steps, 2);
    assert_int_equal(t.n, 6);
    assert_int_equal(t.convs, 1);
    assert_int_equal(t.gemm_threads, 1);
    assert_int_equal(t.max_id, 1);
    assert_int_equal(t.ev[0].a, 12582912);
    assert_int_equal(t.ev[2].c, 3);
    mtrace_free(&t);
    unlink(path);
    /* the largest figures the reader takes */
    path = write_trace("carma-trace 1\na 100000000 1125899906842624\nend 2147483647\n");
    if (mtrace_load(path, &t, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(t.steps, 2147483647);
    assert_int_equal(t.ev[0].a, 1125899906842624ull);
    mtrace_free(&t);
    unlink(path);
}

/* Writes a one-tensor trace of `mib` MiB into dir/name, with a convolution over an input of
 * conv_in MiB when conv. */
static void conv_trace(const char *dir, const char *name, unsigned mib, bool conv,
                       unsigned conv_in)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "carma-trace 1\na 1 %llu\n", (unsigned long long)mib * MiB);
    if (conv)
        fprintf(f, "c %llu 0 0\n", (unsigned long long)conv_in * MiB);
    fprintf(f, "s 1\nend 1\n");
    fclose(f);
}

static void small_trace(const char *dir, const char *name, unsigned mib, bool conv)
{
    conv_trace(dir, name, mib, conv, 0);
}

/* Writes dir/index.csv with the lines given (after the header); its path into idx. */
static void write_index(const char *dir, const char *lines, char *idx, size_t size)
{
    snprintf(idx, size, "%s/index.csv", dir);
    FILE *f = fopen(idx, "w");
    assert_non_null(f);
    fprintf(f, "trace,family,measured_mib\n%s", lines);
    fclose(f);
}

/* Removes dir's files (index.csv and the n named) and dir. */
static void remove_dir(const char *dir, const char *const *names, size_t n)
{
    char path[600];
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/index.csv", dir);
    unlink(path);
    rmdir(dir);
}

static void test_fit_rule(void **state)
{
    (void)state;
    char dir[] = "/tmp/carma-test-fit-XXXXXX";
    assert_non_null(mkdtemp(dir));
    /* plain rows: peaks 100, 200, 400 MiB measured at 1500, 1720, 1900 MiB; conv rows at
     * 1800 + peak. Conv traces' workspace rule adds nothing (0-byte convolutions). */
    small_trace(dir, "p1", 100, false);
    small_trace(dir, "p2", 200, false);
    small_trace(dir, "p3", 400, false);
    small_trace(dir, "c1", 100, true);
    small_trace(dir, "c2", 300, true);
    char idx[600];
    write_index(dir, "p1,mlp,1500\np2,mlp,1720\np3,mlp,1900\nc1,cnn,1900\nc2,cnn,2100\n", idx,
                sizeof idx);
    xmem_coeffs c;
    xmem_fit_report r;
    carma_err err;
    assert_int_equal(xmem_fit(idx, XMEM_WS_BAND, 0, &c, &r, &err), 0);
    assert_int_equal(r.nsteps, XMEM_FIT_CAPS * XMEM_FIT_STEPS);
    assert_int_equal(r.rows_plain, 3);
    assert_int_equal(r.rows_conv, 2);
    assert_int_equal(r.under_plain + r.under_conv, 0);
    assert_float_equal(c.context_conv_mib, 1800, 1e-6); /* exact: no margin needed */
    assert_float_equal(c.margin_conv, 0, 1e-9);
    assert_float_equal(r.median_err_conv, 0, 1e-9);
    assert_float_equal(c.conv_ws_cap_mib, 0, 1e-9); /* every cap ties: the larger, none */
    /* plain: every row covered, and the p2 row (the one that needs most) exactly */
    const double peak[] = {100, 200, 400}, meas[] = {1500, 1720, 1900};
    double tightest = 1e9;
    for (int i = 0; i < 3; i++) {
        double est = c.context_plain_mib + peak[i] * (1 + c.margin_plain);
        assert_true(est >= meas[i] - 1e-6);
        tightest = est - meas[i] < tightest ? est - meas[i] : tightest;
    }
    assert_float_equal(tightest, 0, 1e-6);
    const char *names[] = {"p1", "p2", "p3", "c1", "c2"};
    remove_dir(dir, names, sizeof names / sizeof *names);
}

/* The workspace cap is fitted with the ratio: two rows whose convolution input is 1000 MiB
 * and which hold 256 MiB beside their 100 MiB tensor are fitted exactly only by the 256 MiB
 * cap (any ratio from 0.5 asks at least 500 MiB; without a workspace, a context or margin
 * that covers them overestimates the other rows); rows whose convolutions take nothing set
 * the context. Each half of the rows (two folds) has one of each kind, so each fold's fit is
 * the same and estimates the other fold exactly. A row skipped (no measured peak) changes
 * nothing. */
static void test_fit_cap(void **state)
{
    (void)state;
    char dir[] = "/tmp/carma-test-cap-XXXXXX";
    assert_non_null(mkdtemp(dir));
    small_trace(dir, "c1", 100, true);
    small_trace(dir, "c2", 300, true);
    conv_trace(dir, "c3", 100, true, 1000);
    conv_trace(dir, "c4", 100, true, 1000);
    const char *rows[] = {"c1,cnn,1900\nc2,cnn,2100\nc3,cnn,2156\nc4,cnn,2156\n",
                          "c1,cnn,0\nc1,cnn,1900\nc2,cnn,2100\nc3,cnn,2156\nc4,cnn,2156\n"};
    for (size_t k = 0; k < 2; k++) {
        char idx[600];
        write_index(dir, rows[k], idx, sizeof idx);
        xmem_coeffs c;
        xmem_fit_report r;
        carma_err err;
        assert_int_equal(xmem_fit(idx, XMEM_WS_BAND, 2, &c, &r, &err), 0);
        assert_int_equal(r.nsteps, XMEM_FIT_CAPS * XMEM_FIT_STEPS);
        assert_int_equal(r.rows_conv, 4);
        assert_float_equal(c.conv_ws_cap_mib, 256, 1e-9);
        assert_float_equal(c.conv_ws_ratio, 0.5, 1e-9); /* the first ratio that fits exactly */
        assert_float_equal(c.context_conv_mib, 1800, 1e-6);
        assert_float_equal(c.margin_conv, 0, 1e-9);
        assert_float_equal(r.median_err_conv, 0, 1e-9);
        /* without a cap the best is worse: the grid's uncapped points all err */
        for (size_t i = 0; i < r.nsteps; i++)
            if (r.steps[i].cap_mib == 0)
                assert_true(r.steps[i].median_err > 0.01);
        /* held out: each fold estimated at its fit's point (cap and ratio), exactly */
        assert_int_equal(r.cv_conv.rows, 4);
        assert_int_equal(r.cv_conv.under, 0);
        assert_float_equal(r.cv_conv.median_err, 0, 1e-9);
    }
    const char *names[] = {"c1", "c2", "c3", "c4"};
    remove_dir(dir, names, sizeof names / sizeof *names);
}

/* Cross-validation: each row estimated by the fit on the other folds (row i in fold i mod 2).
 * Plain rows of 100 MiB measured at 1500, 1500, 1500, 1600: without fold 1 the context is
 * 1400 and row 3 (1600) comes out 6.25 % under; without fold 0 it is 1500 and rows 0 and 2
 * come out 1/15 over. */
static void test_fit_cross_validation(void **state)
{
    (void)state;
    char dir[] = "/tmp/carma-test-cv-XXXXXX";
    assert_non_null(mkdtemp(dir));
    small_trace(dir, "p", 100, false);
    char idx[600];
    write_index(dir, "p,mlp,1500\np,mlp,1500\np,mlp,1500\np,mlp,1600\n", idx, sizeof idx);
    xmem_coeffs c;
    xmem_fit_report r;
    carma_err err;
    assert_int_equal(xmem_fit(idx, XMEM_WS_BAND, 2, &c, &r, &err), 0);
    assert_int_equal(r.under_plain, 0); /* every row it was fitted on is covered */
    assert_float_equal(c.context_plain_mib, 1500, 1e-6);
    assert_int_equal(r.folds, 2);
    assert_int_equal(r.cv_plain.rows, 4);
    assert_int_equal(r.cv_plain.under, 1);
    assert_float_equal(r.cv_plain.worst, -0.0625, 1e-9);
    assert_float_equal(r.cv_plain.median_err, (0.0625 + 1.0 / 15) / 2, 1e-9);
    assert_int_equal(r.cv_conv.rows, 0);
    assert_int_equal(xmem_fit(idx, XMEM_WS_BAND, 1, &c, &r, &err), -1);
    assert_non_null(strstr(err.msg, "folds"));
    const char *names[] = {"p"};
    remove_dir(dir, names, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rounding_and_segments),
        cmocka_unit_test(test_small_pool_split_and_reuse),
        cmocka_unit_test(test_large_pool_no_split_under_1mib),
        cmocka_unit_test(test_best_fit_and_merge),
        cmocka_unit_test(test_pools_apart),
        cmocka_unit_test(test_replay_and_parts),
        cmocka_unit_test(test_conv_workspace_band),
        cmocka_unit_test(test_bad_traces),
        cmocka_unit_test(test_crlf_trace),
        cmocka_unit_test(test_fit_rule),
        cmocka_unit_test(test_fit_cap),
        cmocka_unit_test(test_fit_cross_validation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
