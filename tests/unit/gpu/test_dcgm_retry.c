/* test_dcgm_retry.c — the nvml backend opens DCGM again after a failure, once a minute and not on
 * every sample: after a failed open (DCGM or its host engine not up yet) and after a failed read
 * (a restarted host engine no longer knows carma's connection). Against the fake libdcgm.so.4,
 * with the backend's clock moved by the test instead of waited for. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dcgm_fixture.h"
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

static int setup(void **state)
{
    (void)state;
    dcgm_fixture_setup("0:0:0.55:0.25:0.125:300.5:4200");
    return 0;
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

/* each test against a fresh fake DCGM */
#define WITH_DCGM(test) cmocka_unit_test_setup_teardown(test, setup, dcgm_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        WITH_DCGM(failed_open_is_tried_again_after_a_minute),
        WITH_DCGM(lost_hostengine_is_reconnected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
