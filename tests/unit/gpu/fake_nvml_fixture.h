/* fake_nvml_fixture.h — helpers for tests that drive the nvml backend against the fake
 * libnvidia-ml.so.1 (tests/fake_nvml): scenario files, library paths, a short sleep. */
#ifndef CARMA_TEST_FAKE_NVML_FIXTURE_H
#define CARMA_TEST_FAKE_NVML_FIXTURE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* cmocka 1.1 has no assert_double_equal; NaN never passes. */
#ifndef assert_double_equal
#define assert_double_equal(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))
#endif

/* Path of one fake build: "full", "old", "bare" or "stride32". */
static inline const char *fake_nvml_path(const char *variant)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s/libnvidia-ml.so.1", FAKE_NVML_DIR, variant);
    return path;
}

/* Writes `text` to a fresh scenario file and points $FAKE_NVML_SCENARIO at it. The caller
 * unlinks it. */
static inline const char *fake_nvml_scenario(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/carma-fake-nvml-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0)
        abort();
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    setenv("FAKE_NVML_SCENARIO", path, 1);
    return path;
}

/* Replaces the scenario file atomically (write + rename), as a test does mid-run. */
static inline void fake_nvml_replace(const char *path, const char *text)
{
    char tmp[128];
    snprintf(tmp, sizeof tmp, "%s.new", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        abort();
    fputs(text, f);
    fclose(f);
    if (rename(tmp, path))
        abort();
}

/* The environment a test of the nvml backend starts from: DCGM absent, every GPU (the
 * allocation filter has its own tests), no library path or DCGM host engine of the caller's. */
static inline void fake_nvml_clean_env(void)
{
    setenv("CARMA_DCGM_LIBRARY", "/nonexistent/libdcgm.so.4", 1);
    unsetenv("CARMA_NVML_LIBRARY");
    unsetenv("SLURM_JOB_GPUS");
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("CARMA_DCGM_HOSTENGINE"); /* nv-hostengine's default address, where none answers */
    unsetenv("FAKE_DCGM_HOSTENGINE");
}

/* A test's end, after its backend was closed: its scenario file (NULL: none) removed. */
static inline void fake_nvml_cleanup(const char *scenario)
{
    if (scenario)
        unlink(scenario);
    unsetenv("FAKE_NVML_SCENARIO");
}

static inline void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

#endif
