/* test_nvml_parts.c — the pieces under the nvml backend on their own: the process-record stride
 * probe, a process list longer than carma keeps, GPM's interval and percent-to-fraction edge,
 * the memory version word, DCGM's absent path. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpu/dcgm.h"
#include "gpu/gpm.h"
#include "gpu/nvml_procs.h"

/* n records of `size` bytes written the way a driver would, over the sentinel. */
static void fill(unsigned char *buf, unsigned n, size_t size)
{
    memset(buf, NVML_PROC_SENTINEL, 8 * 32);
    for (unsigned i = 0; i < n; i++) {
        unsigned char rec[32] = {0};
        unsigned pid = 1000 + i;
        unsigned long long used = 0; /* zeros, as a CC-off driver writes */
        memcpy(rec, &pid, 4);
        memcpy(rec + 8, &used, 8);
        memcpy(buf + i * size, rec, size);
    }
}

static void stride_probe_tells_24_from_32(void **state)
{
    (void)state;
    unsigned char buf[8 * 32];
    for (unsigned n = 1; n <= 4; n++) {
        fill(buf, n, 24);
        assert_int_equal(nvml_proc_stride(NVML_PROCS_V3, buf, n), 24);
        fill(buf, n, 32);
        assert_int_equal(nvml_proc_stride(NVML_PROCS_V3, buf, n), 32);
    }
    /* fixed layouts are never probed */
    fill(buf, 2, 32);
    assert_int_equal(nvml_proc_stride(NVML_PROCS_V2, buf, 2), 24);
    assert_int_equal(nvml_proc_stride(NVML_PROCS_V1, buf, 2), 16);
    assert_int_equal(nvml_proc_stride(NVML_PROCS_V3, buf, 0), 24);
}

static void memory_v2_version_word_is_nvmls(void **state)
{
    (void)state;
    assert_int_equal(sizeof(nvmlMemory_v2_t), 40);
    assert_int_equal(NVML_MEMORY_V2_VERSION, 0x02000028u);
    assert_int_equal(sizeof(nvmlProcessInfo_v1_t), 16);
    assert_int_equal(sizeof(nvmlProcessInfo_v2_t), 24);
    assert_int_equal(offsetof(nvmlGpmMetricsGet_t, metrics), 24);
    assert_int_equal(sizeof(nvmlGpmMetric_t), 40);
}

static void gpm_percent_becomes_fraction(void **state)
{
    (void)state;
    assert_true(fabs(gpm_percent_to_fraction(40.5) - 0.405) < 1e-12);
    assert_true(gpm_percent_to_fraction(0) == 0.0);
    assert_true(gpm_percent_to_fraction(100.4) == 1.0);
    assert_true(gpm_percent_to_fraction(-0.1) == 0.0);
    assert_true(isnan(gpm_percent_to_fraction(NAN)));
}

static void dcgm_absent_is_a_clear_error(void **state)
{
    (void)state;
    carma_err err = {""};
    dcgm_reader *d = (dcgm_reader *)1;
    setenv(DCGM_LIBRARY_ENV, "/nonexistent/libdcgm.so.4", 1);
    assert_int_equal(dcgm_reader_open(&d, &err), -1);
    assert_null(d);
    assert_non_null(strstr(err.msg, "cannot load DCGM"));
    assert_non_null(strstr(err.msg, "/nonexistent/libdcgm.so.4"));
    /* a library that is not DCGM */
    setenv(DCGM_LIBRARY_ENV, "libm.so.6", 1);
    assert_int_equal(dcgm_reader_open(&d, &err), -1);
    assert_non_null(strstr(err.msg, "lacks dcgmInit"));
    unsetenv(DCGM_LIBRARY_ENV);
    dcgm_reader_close(NULL); /* harmless */
}

/* A driver's list of `listed` processes (pids 2000...), v2 records, with NVML's size query. */
static unsigned listed;
static unsigned long long listed_used = 1 << 20; /* each process's usedGpuMemory */
static nvmlReturn_t many_procs(nvmlDevice_t dev, unsigned *count, void *infos)
{
    (void)dev;
    if (*count < listed || !infos) {
        *count = listed;
        return listed ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
    }
    for (unsigned i = 0; i < listed; i++) {
        nvmlProcessInfo_v2_t r = {0};
        r.pid = 2000 + i;
        r.usedGpuMemory = listed_used;
        memcpy((unsigned char *)infos + i * sizeof r, &r, sizeof r);
    }
    *count = listed;
    return NVML_SUCCESS;
}

static void a_list_cut_short_is_not_known(void **state)
{
    (void)state;
    gpu_proc out[8];
    int n = 0;
    listed = 8; /* exactly what fits */
    assert_int_equal(nvml_read_proc_list(many_procs, NVML_PROCS_V2, NULL, out, &n, 8),
                     NVML_SUCCESS);
    assert_int_equal(n, 8);
    assert_int_equal(out[7].pid, 2007);
    n = 0;
    listed = 9; /* one more than fits: a process left out could be anyone's */
    assert_int_equal(nvml_read_proc_list(many_procs, NVML_PROCS_V2, NULL, out, &n, 8),
                     NVML_ERROR_INSUFFICIENT_SIZE);
}

/* A byte count just short of NVML_VALUE_NOT_AVAILABLE is a known, huge figure, rounded up to
 * 2^44 MiB: rounding by adding 1 MiB - 1 first wrapped it to 0 MiB. */
static void a_huge_process_is_not_zero(void **state)
{
    (void)state;
    gpu_proc out[1];
    int n = 0;
    listed = 1;
    listed_used = NVML_VALUE_NOT_AVAILABLE_ULL - 1;
    assert_int_equal(nvml_read_proc_list(many_procs, NVML_PROCS_V2, NULL, out, &n, 1),
                     NVML_SUCCESS);
    listed_used = 1 << 20;
    assert_int_equal(n, 1);
    assert_true(out[0].used_known);
    assert_int_equal(out[0].used_mib, 1ULL << 44);
}

/* nvml.h asks for more than 100 ms between two GPM samples: 100 ms on carma's clock is too
 * soon (the clock is read before the GPUs are sampled), a little more is not. */
static int gpm_gets;
static nvmlReturn_t counting_gpm_get(nvmlDevice_t dev, nvmlGpmSample_t s)
{
    (void)dev;
    (void)s;
    gpm_gets++;
    return NVML_ERROR_UNKNOWN; /* enough: only whether it was asked counts here */
}

static void gpm_waits_more_than_100_ms(void **state)
{
    (void)state;
    nvml_lib lib = {.gpm_sample_get = counting_gpm_get};
    gpm_reader g = {.supported = true, .have_prev = true, .prev_t = 0.0};
    double a, b, c;
    nvmlReturn_t rc;
    gpm_gets = 0;
    gpm_reader_sample(&g, &lib, NULL, 0.1, &a, &b, &c, &rc);
    assert_int_equal(gpm_gets, 0);
    gpm_reader_sample(&g, &lib, NULL, 0.2, &a, &b, &c, &rc);
    assert_int_equal(gpm_gets, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stride_probe_tells_24_from_32),
        cmocka_unit_test(a_list_cut_short_is_not_known),
        cmocka_unit_test(a_huge_process_is_not_zero),
        cmocka_unit_test(memory_v2_version_word_is_nvmls),
        cmocka_unit_test(gpm_percent_becomes_fraction),
        cmocka_unit_test(gpm_waits_more_than_100_ms),
        cmocka_unit_test(dcgm_absent_is_a_clear_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
