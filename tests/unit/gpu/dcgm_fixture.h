/* dcgm_fixture.h — the set-up the tests of the nvml backend's DCGM path share
 * (test_nvml_dcgm.c, test_dcgm_retry.c): the fake libdcgm.so.4 with given field values, its
 * call log in a fresh file, no environment left over from another test; and the log read
 * back. Include after cmocka.h. */
#ifndef CARMA_TEST_DCGM_FIXTURE_H
#define CARMA_TEST_DCGM_FIXTURE_H

#include "fake_nvml_fixture.h"
#include "gpu/backend.h"
#include "gpu/nvml_backend.h"

typedef struct dcgm_fixture {
    const char *scenario;
    char log[64];
    gpu_backend *b;
    gpu_reading r[2];
} dcgm_fixture;

static dcgm_fixture F;

/* FAKE_DCGM_VALUES for the fake (see tests/fake_nvml/fake_dcgm.c). */
static inline void dcgm_fixture_setup(const char *values)
{
    memset(&F, 0, sizeof F);
    char lib[512];
    snprintf(lib, sizeof lib, "%s/dcgm/libdcgm.so.4", FAKE_NVML_DIR);
    setenv("CARMA_DCGM_LIBRARY", lib, 1);
    setenv("FAKE_DCGM_VALUES", values, 1);
    snprintf(F.log, sizeof F.log, "/tmp/carma-fake-dcgm-log-XXXXXX");
    int fd = mkstemp(F.log);
    assert_true(fd >= 0);
    close(fd);
    setenv("FAKE_DCGM_LOG", F.log, 1);
    const char *unset[] = {"CARMA_NVML_LIBRARY", "CARMA_DCGM_HOSTENGINE", "SLURM_JOB_GPUS",
                           "CUDA_VISIBLE_DEVICES"};
    for (size_t i = 0; i < sizeof unset / sizeof *unset; i++)
        unsetenv(unset[i]);
}

static inline int dcgm_teardown(void **state)
{
    (void)state;
    if (F.b)
        gpu_backend_nvml.close(F.b);
    if (F.scenario)
        unlink(F.scenario);
    unlink(F.log);
    const char *vars[] = {"FAKE_NVML_SCENARIO",    "FAKE_DCGM_VALUES",
                          "FAKE_DCGM_LOG",         "FAKE_DCGM_FAIL",
                          "FAKE_DCGM_HOSTENGINE",  "FAKE_DCGM_HOSTENGINE_AFTER",
                          "FAKE_DCGM_PROF_LOCKED", "FAKE_DCGM_NAMES_IN_USE"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        unsetenv(vars[i]);
    return 0;
}

/* The fake's call log so far (one call per line). */
static inline const char *dcgm_calls(void)
{
    static char buf[8192];
    FILE *f = fopen(F.log, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

#endif
