/* test_dcgm_retry.c — the nvml backend opens DCGM again after a failure, once a minute and not on
 * every sample: after a failed open (DCGM or its host engine not up yet) and after a failed read
 * (a restarted host engine no longer knows carma's connection). On an embedded engine, carma
 * looks for a host engine at the same cadence and moves to one that has started since (after a
 * reboot nvidia-dcgm or dcgm-exporter often comes up after carma), logging the move once.
 * Against the fake libdcgm.so.4, with the backend's clock moved by the test instead of waited
 * for. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dcgm_fixture.h"
#include "gpu/dcgm.h"
#include "util/clock.h"

/* carma_lib is a static library: this definition is linked instead of src/util/clock.c's, so
 * the backend sees the time the test sets. */
static double now_s = 1000.0;
double clock_mono_s(void)
{
    return now_s;
}

/* An A100 (no GPM): its SM activity can only come from DCGM. */
static const char *const a100 =
    "gpu uuid=GPU-bbbb-0002 name=\"NVIDIA A100-SXM4-40GB\" total=40960 used=0 util=0 gpm=0\n";

/* What DCGM logged (dcgm_set_log), as the daemon's log would show it. */
static char logged[4][1024];
static int nlogged;

static void capture_log(const char *msg)
{
    if (nlogged < 4)
        snprintf(logged[nlogged], sizeof logged[nlogged], "%s", msg);
    nlogged++;
}

static int setup(void **state)
{
    (void)state;
    dcgm_fixture_setup("0:0:0.55:0.25:0.125:300.5:4200");
    nlogged = 0;
    dcgm_set_log(capture_log);
    return 0;
}

static int teardown(void **state)
{
    dcgm_set_log(NULL);
    return dcgm_teardown(state);
}

/* How often `what` is in the fake's call log. */
static int calls(const char *what)
{
    int count = 0;
    for (const char *p = strstr(dcgm_calls(), what); p; p = strstr(p + 1, what))
        count++;
    return count;
}

static void open_backend(void)
{
    carma_err err = {""};
    F.scenario = fake_nvml_scenario(a100);
    assert_int_equal(gpu_backend_nvml.open(&F.b, fake_nvml_path("full"), &err), 0);
}

/* One sample `dt` seconds later. */
static void sample_after(double dt)
{
    carma_err err;
    now_s += dt;
    assert_int_equal(gpu_backend_nvml.sample(F.b, F.r, &err), 0);
}

static const char *note(void)
{
    return nvml_backend_activity_note(F.b);
}

/* No host engine and the embedded one fails to start: SM activity unknown, no new attempt for
 * a minute, then DCGM opens once it can. */
static void failed_open_is_tried_again_after_a_minute(void **state)
{
    (void)state;
    setenv("FAKE_DCGM_FAIL", "dcgmStartEmbedded", 1);
    open_backend();
    sample_after(0);
    assert_int_equal(F.r[0].src_activity, SRC_UNKNOWN);
    assert_non_null(strstr(note(), "dcgmStartEmbedded failed"));
    assert_non_null(strstr(note(), "trying again every 60 s"));
    assert_int_equal(calls("dcgmConnect_v2"), 1);
    unsetenv("FAKE_DCGM_FAIL");
    sample_after(30);
    assert_int_equal(F.r[0].src_activity, SRC_UNKNOWN);
    assert_int_equal(calls("dcgmConnect_v2"), 1); /* not on every sample */
    sample_after(31);
    assert_int_equal(calls("dcgmConnect_v2"), 2);
    assert_int_equal(F.r[0].src_activity, SRC_DCGM);
    assert_double_equal(F.r[0].smact, 0.55, 1e-12);
    assert_string_equal(note(), "DCGM embedded (no nv-hostengine at 127.0.0.1)");
}

/* The host engine restarts: the old connection fails every call; carma closes it and, a minute
 * later, connects to the new engine. */
static void lost_hostengine_is_reconnected(void **state)
{
    (void)state;
    setenv("FAKE_DCGM_HOSTENGINE", "127.0.0.1", 1);
    open_backend();
    sample_after(0);
    assert_int_equal(F.r[0].src_activity, SRC_DCGM);
    unsetenv("FAKE_DCGM_HOSTENGINE"); /* the engine stops ... */
    sample_after(1);
    assert_int_equal(F.r[0].src_activity, SRC_UNKNOWN);
    assert_true(isnan(F.r[0].smact));
    assert_non_null(strstr(note(), "DCGM read failed"));
    assert_non_null(strstr(note(), "not valid"));
    assert_int_equal(calls("dcgmDisconnect"), 1);
    setenv("FAKE_DCGM_HOSTENGINE", "127.0.0.1", 1); /* ... and is back */
    sample_after(30);
    assert_int_equal(F.r[0].src_activity, SRC_UNKNOWN);
    sample_after(31);
    assert_int_equal(calls("-> connected"), 2);
    assert_int_equal(F.r[0].src_activity, SRC_DCGM);
    assert_double_equal(F.r[0].drama, 0.125, 1e-12);
    assert_string_equal(note(), "DCGM via nv-hostengine at 127.0.0.1");
}

/* Where `what` first is in the fake's call log after `from` (an offset there); -1 if not. */
static long offset_of(const char *what, long from)
{
    const char *log = dcgm_calls();
    const char *p = strstr(log + from, what);
    return p ? p - log : -1;
}

/* Every DCGM reading of GPU 0 is unknown: NaN, not zero. */
static void dcgm_unknown(void)
{
    assert_int_equal(F.r[0].src_activity, SRC_UNKNOWN);
    assert_true(isnan(F.r[0].smact) && isnan(F.r[0].smocc) && isnan(F.r[0].drama));
}

/* No host engine when carma starts: embedded. The node's nv-hostengine comes up later (the
 * fake's first connection attempt finds none): a minute on, carma finds it, removes its watches
 * from the embedded engine, stops it (freeing the profiling counters, which the host engine
 * could not get while it ran) and only then watches on the host engine; that sample is
 * unknown, the next ones read the host engine, profiling fields included. One log line; no
 * more probes once there. */
static void embedded_moves_to_a_hostengine_started_later(void **state)
{
    (void)state;
    setenv("FAKE_DCGM_HOSTENGINE", "127.0.0.1", 1);
    setenv("FAKE_DCGM_HOSTENGINE_AFTER", "1", 1);
    open_backend();
    sample_after(0);
    assert_int_equal(F.r[0].src_activity, SRC_DCGM);
    assert_double_equal(F.r[0].smact, 0.55, 1e-12);
    assert_string_equal(note(), "DCGM embedded (no nv-hostengine at 127.0.0.1)");
    assert_int_equal(calls("dcgmStartEmbedded"), 1);
    sample_after(30);
    assert_int_equal(F.r[0].src_activity, SRC_DCGM);
    assert_int_equal(calls("dcgmConnect_v2"), 1); /* not looked for on every sample */
    assert_int_equal(nlogged, 0);
    sample_after(31);
    dcgm_unknown(); /* the sample of the move */
    assert_int_equal(calls("dcgmConnect_v2"), 2);
    long probe = offset_of("dcgmConnect_v2 127.0.0.1 persist=0 timeoutMs=100 unix=0 -> connected",
                           0);
    assert_true(probe >= 0);
    long stop = offset_of("dcgmStopEmbedded", probe);
    assert_true(stop > probe);
    long removed = offset_of("dcgmFieldGroupDestroy", probe);
    assert_true(removed > probe && removed < stop); /* removed before the stop */
    assert_true(offset_of("dcgmGroupCreate", stop) > stop);        /* set up again after it */
    assert_int_equal(calls("dcgmGroupCreate"), 2);
    assert_null(strstr(dcgm_calls(), "-> profiling"));
    assert_int_equal(nlogged, 1);
    assert_string_equal(logged[0],
                        "DCGM: nv-hostengine at 127.0.0.1 now answers; moved from the embedded "
                        "engine");
    sample_after(1);
    assert_int_equal(F.r[0].src_activity, SRC_DCGM);
    assert_double_equal(F.r[0].smact, 0.55, 1e-12);
    assert_double_equal(F.r[0].drama, 0.125, 1e-12);
    /* the backend's note says what it reads through now (it kept "embedded") */
    assert_string_equal(note(), "DCGM via nv-hostengine at 127.0.0.1 (moved from the embedded "
                                "engine)");
    sample_after(60);
    sample_after(60);
    assert_int_equal(F.r[0].src_activity, SRC_DCGM);
    assert_int_equal(calls("dcgmConnect_v2"), 2);
    assert_int_equal(nlogged, 1);
    gpu_backend_nvml.close(F.b);
    F.b = NULL;
    assert_int_equal(calls("dcgmDisconnect"), 1);
    assert_int_equal(calls("dcgmStopEmbedded"), 1);
}

/* Embedded, and no host engine at the next look: carma stays (readings go on). Then one answers
 * but carma's group cannot be created there: the embedded engine is already stopped, so DCGM's
 * readings are unknown; the read fails, the backend closes DCGM and opens it again a minute
 * later, which connects to the host engine (never embedded again). Logged once, with why. */
static void move_that_cannot_set_up_is_tried_again(void **state)
{
    (void)state;
    open_backend();
    sample_after(0);
    assert_int_equal(F.r[0].src_activity, SRC_DCGM);
    sample_after(61);
    assert_int_equal(calls("timeoutMs=100 unix=0 -> no host engine"), 1);
    assert_int_equal(F.r[0].src_activity, SRC_DCGM);
    assert_double_equal(F.r[0].smact, 0.55, 1e-12);
    assert_int_equal(nlogged, 0);
    setenv("FAKE_DCGM_HOSTENGINE", "127.0.0.1", 1);
    setenv("FAKE_DCGM_FAIL", "dcgmGroupCreate", 1);
    sample_after(60);
    dcgm_unknown();
    assert_non_null(strstr(note(), "DCGM read failed: nv-hostengine at 127.0.0.1 now answers; "
                                   "moved from the embedded engine, but dcgmGroupCreate failed"));
    assert_non_null(strstr(note(), "trying again in 60 s"));
    assert_int_equal(calls("dcgmStopEmbedded"), 1);
    assert_int_equal(calls("dcgmDisconnect"), 1);
    assert_int_equal(nlogged, 1);
    assert_non_null(strstr(logged[0], "DCGM: nv-hostengine at 127.0.0.1 now answers; moved from "
                                      "the embedded engine, but dcgmGroupCreate failed"));
    unsetenv("FAKE_DCGM_FAIL");
    sample_after(30);
    dcgm_unknown();
    assert_int_equal(calls("-> connected"), 1);
    sample_after(31);
    assert_int_equal(calls("-> connected"), 2);
    assert_int_equal(F.r[0].src_activity, SRC_DCGM);
    assert_double_equal(F.r[0].smact, 0.55, 1e-12);
    assert_string_equal(note(), "DCGM via nv-hostengine at 127.0.0.1");
    assert_int_equal(calls("dcgmStartEmbedded"), 1);
    assert_int_equal(nlogged, 1);
}

/* A host engine answers the look but refuses the connection (here: the fake's scripted
 * failure): carma stays on the embedded engine, its readings go on, and the log says so once. */
static void refusing_hostengine_keeps_the_embedded_engine(void **state)
{
    (void)state;
    open_backend();
    sample_after(0);
    setenv("FAKE_DCGM_FAIL", "dcgmConnect_v2", 1);
    sample_after(61);
    assert_int_equal(F.r[0].src_activity, SRC_DCGM);
    assert_double_equal(F.r[0].smact, 0.55, 1e-12);
    assert_int_equal(nlogged, 1);
    assert_non_null(strstr(logged[0], "answers but refused carma's connection"));
    assert_non_null(strstr(logged[0], "staying on the embedded engine"));
    sample_after(60);
    assert_int_equal(F.r[0].src_activity, SRC_DCGM);
    assert_int_equal(nlogged, 1);
    assert_int_equal(calls("dcgmStopEmbedded"), 0);
    unsetenv("FAKE_DCGM_FAIL");
    setenv("FAKE_DCGM_HOSTENGINE", "127.0.0.1", 1);
    sample_after(60);
    dcgm_unknown();
    assert_int_equal(nlogged, 2);
    assert_string_equal(logged[1],
                        "DCGM: nv-hostengine at 127.0.0.1 now answers; moved from the embedded "
                        "engine");
}

/* each test against a fresh fake DCGM */
#define WITH_DCGM(test) cmocka_unit_test_setup_teardown(test, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        WITH_DCGM(failed_open_is_tried_again_after_a_minute),
        WITH_DCGM(lost_hostengine_is_reconnected),
        WITH_DCGM(embedded_moves_to_a_hostengine_started_later),
        WITH_DCGM(move_that_cannot_set_up_is_tried_again),
        WITH_DCGM(refusing_hostengine_keeps_the_embedded_engine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
