/* test_nvml_late_facts.c — a GPU's static facts (name, MIG mode, GPM support) whose first read
 * fails with a transient NVML error at open are read again on later samples, and what was read
 * is kept: they used to be read once, leaving the GPU nameless, its MIG mode unknown and
 * without GPM for the daemon's life. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fake_nvml_fixture.h"
#include "gpu/backend.h"
#include "gpu/nvml_backend.h"

/* NVML_ERROR_TIMEOUT, NVML_ERROR_UNKNOWN (nvml.h) */
#define TIMEOUT "10"
#define UNKNOWN "999"

static const char *const h100 =
    "gpu uuid=GPU-aaaa-0001 name=\"NVIDIA H100 80GB HBM3\" total=81559 mig=0 gpm=1 smact=40"
    " smocc=20 drama=30\n";

static const char *scenario_path;
static gpu_backend *backend;
static gpu_reading r[2];

static int setup(void **state)
{
    (void)state;
    fake_nvml_clean_env();
    backend = NULL;
    scenario_path = NULL;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (backend)
        gpu_backend_nvml.close(backend);
    fake_nvml_cleanup(scenario_path);
    return 0;
}

static void sample(void)
{
    carma_err err;
    assert_int_equal(gpu_backend_nvml.sample(backend, r, &err), 0);
}

static void open_over(const char *text)
{
    carma_err err = {""};
    scenario_path = fake_nvml_scenario(text);
    assert_int_equal(gpu_backend_nvml.open(&backend, fake_nvml_path("full"), &err), 0);
    assert_int_equal(gpu_backend_nvml.count(backend), 1);
    sample();
}

static void scenario_with(const char *extra)
{
    char text[1024];
    snprintf(text, sizeof text, "%s%s", h100, extra);
    fake_nvml_replace(scenario_path, text);
}

static void name_mig_mode_and_gpm_failed_at_open_are_read_later(void **state)
{
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, "%sfail nvmlDeviceGetName " UNKNOWN "\n"
                                "fail nvmlDeviceGetMigMode " TIMEOUT "\n"
                                "fail nvmlGpmQueryDeviceSupport " UNKNOWN "\n", h100);
    open_over(text);
    assert_string_equal(r[0].uuid, "GPU-aaaa-0001"); /* its UUID was read */
    assert_string_equal(r[0].name, "");
    assert_int_equal(r[0].mig, GPU_MIG_UNKNOWN);
    sleep_ms(120);
    sample();
    assert_int_equal(r[0].src_activity, SRC_UNKNOWN); /* no GPM reader yet */
    scenario_with(""); /* the faults pass */
    sample();
    assert_string_equal(r[0].name, "NVIDIA H100 80GB HBM3");
    assert_int_equal(r[0].mig, GPU_MIG_OFF);
    sleep_ms(120);
    sample();
    assert_int_equal(r[0].src_activity, SRC_GPM);
    assert_double_equal(r[0].smact, 0.40, 1e-9);
}

/* What was read stays: a later failure does not blank it, and the MIG mode, once read, is not
 * followed (a change takes a GPU reset). A GPU that answered "no GPM" is not asked again. */
static void facts_read_are_kept(void **state)
{
    (void)state;
    open_over("gpu uuid=GPU-b name=\"NVIDIA A100-SXM4-40GB\" mig=0 gpm=0\n");
    assert_string_equal(r[0].name, "NVIDIA A100-SXM4-40GB");
    fake_nvml_replace(scenario_path, "gpu uuid=GPU-b name=\"NVIDIA A100-SXM4-40GB\" mig=1 gpm=1"
                                     " smact=50\n"
                                     "fail nvmlDeviceGetName " UNKNOWN "\n");
    sample();
    assert_string_equal(r[0].name, "NVIDIA A100-SXM4-40GB");
    assert_int_equal(r[0].mig, GPU_MIG_OFF);
    sleep_ms(120);
    sample();
    assert_int_equal(r[0].src_activity, SRC_UNKNOWN);
}

/* A GPU in MIG mode whose mode could not be read at open is kept (nvml_backend.h); its mode,
 * read later, says MIG, so that the daemon places nothing there (monitor.c). */
static void mig_mode_read_late_is_reported(void **state)
{
    (void)state;
    open_over("gpu uuid=GPU-m mig=1\nfail nvmlDeviceGetMigMode " UNKNOWN "\n");
    assert_int_equal(r[0].mig, GPU_MIG_UNKNOWN);
    fake_nvml_replace(scenario_path, "gpu uuid=GPU-m mig=1\n");
    sample();
    assert_int_equal(r[0].mig, GPU_MIG_ON);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(name_mig_mode_and_gpm_failed_at_open_are_read_later,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(facts_read_are_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(mig_mode_read_late_is_reported, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
