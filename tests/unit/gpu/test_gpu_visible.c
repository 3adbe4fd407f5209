/* test_gpu_visible.c — the allocation filter (src/gpu/visible.c) alone: SLURM_JOB_GPUS by minor
 * number (NVML index when the library has no nvmlDeviceGetMinorNumber), CUDA_VISIBLE_DEVICES by
 * UUID, UUID prefix or NVML index, and every entry that names no GPU stopping with its name;
 * then the nvml backend over the fake libnvidia-ml.so.1 keeping only the job's GPUs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fake_nvml_fixture.h"
#include "gpu/nvml_backend.h"
#include "gpu/visible.h"

/* Four GPUs whose minor numbers do not follow NVML's order, as on machines where NVML sorts by
 * PCI bus id and the driver numbered the device files otherwise. */
static const gpu_ident four[4] = {
    {0, true, 2, "GPU-aaaa-1111"},
    {1, true, 0, "GPU-bbbb-2222"},
    {2, true, 3, "GPU-aaab-3333"},
    {3, true, 1, "GPU-cccc-4444"},
};

typedef struct outcome {
    int rc;
    bool keep[4];
    char note[GPU_VISIBLE_NOTE_MAX];
    carma_err err;
} outcome;

static outcome run(const char *slurm, const char *cuda, bool minor_supported)
{
    outcome o;
    memset(&o, 0, sizeof o);
    gpu_visible_env env = {slurm, cuda, minor_supported};
    o.rc = gpu_visible_select(four, 4, &env, o.keep, o.note, sizeof o.note, &o.err);
    return o;
}

static void assert_kept(const outcome *o, bool k0, bool k1, bool k2, bool k3)
{
    if (o->rc)
        print_error("error: %s\n", o->err.msg);
    assert_int_equal(o->rc, 0);
    assert_int_equal(o->keep[0], k0);
    assert_int_equal(o->keep[1], k1);
    assert_int_equal(o->keep[2], k2);
    assert_int_equal(o->keep[3], k3);
}

static void assert_error_has(const outcome *o, const char *text)
{
    assert_int_equal(o->rc, -1);
    if (!strstr(o->err.msg, text))
        print_error("'%s' lacks '%s'\n", o->err.msg, text);
    assert_non_null(strstr(o->err.msg, text));
}

static void no_variable_keeps_every_gpu_and_says_nothing(void **state)
{
    (void)state;
    outcome o = run(NULL, NULL, true);
    assert_kept(&o, true, true, true, true);
    assert_string_equal(o.note, "");
}

static void slurm_gpus_match_minor_numbers_not_nvml_order(void **state)
{
    (void)state;
    outcome o = run("1,3", NULL, true); /* minors 1 and 3: NVML GPUs 3 and 2 */
    assert_kept(&o, false, false, true, true);
    assert_non_null(strstr(o.note, "SLURM_JOB_GPUS=1,3"));
    assert_non_null(strstr(o.note, "minor numbers"));
    assert_non_null(strstr(o.note, "GPU-aaab-3333"));
    assert_non_null(strstr(o.note, "2 of the node's 4 GPU(s) left out"));
}

static void slurm_gpus_fall_back_to_nvml_index_without_minor_numbers(void **state)
{
    (void)state;
    outcome o = run("1,3", NULL, false);
    assert_kept(&o, false, true, false, true);
    assert_non_null(strstr(o.note, "no nvmlDeviceGetMinorNumber"));
}

static void slurm_gpus_win_over_cuda_visible_devices(void **state)
{
    (void)state;
    outcome o = run("0", "GPU-aaaa", true); /* minor 0 is NVML GPU 1 */
    assert_kept(&o, false, true, false, false);
}

static void slurm_entry_naming_no_gpu_is_an_error(void **state)
{
    (void)state;
    outcome o = run("1,7", NULL, true);
    assert_error_has(&o, "SLURM_JOB_GPUS=1,7");
    assert_error_has(&o, "minor number (/dev/nvidiaN) 7");
    o = run("1,x", NULL, true);
    assert_error_has(&o, "'x' is not a GPU index");
    o = run("", NULL, true);
    assert_error_has(&o, "SLURM_JOB_GPUS is set but empty");
}

static void slurm_gpu_whose_minor_is_unknown_is_not_matched(void **state)
{
    (void)state;
    gpu_ident two[2] = {{0, true, 0, "GPU-x"}, {1, false, 0, "GPU-y"}};
    gpu_visible_env env = {"0,1", NULL, true};
    bool keep[2];
    char note[256];
    carma_err err;
    /* GPU 1's minor reads as 0 but is unknown: minor 1 names nothing we can vouch for */
    assert_int_equal(gpu_visible_select(two, 2, &env, keep, note, sizeof note, &err), -1);
    assert_non_null(strstr(err.msg, "minor number (/dev/nvidiaN) 1"));
}

static void cuda_uuids_and_unique_prefixes(void **state)
{
    (void)state;
    outcome o = run(NULL, "GPU-cccc-4444, GPU-bbbb", true);
    assert_kept(&o, false, true, false, true);
    assert_non_null(strstr(o.note, "CUDA_VISIBLE_DEVICES="));
}

static void cuda_ambiguous_or_unknown_uuid_is_an_error(void **state)
{
    (void)state;
    outcome o = run(NULL, "GPU-aaa", true);
    assert_error_has(&o, "'GPU-aaa' is the start of 2 GPUs' UUIDs");
    o = run(NULL, "GPU-dddd", true);
    assert_error_has(&o, "no GPU of this node has a UUID starting with 'GPU-dddd'");
}

static void cuda_integers_are_nvml_indices(void **state)
{
    (void)state;
    outcome o = run(NULL, "2,0", true);
    assert_kept(&o, true, false, true, false);
    o = run(NULL, "0,4", true);
    assert_error_has(&o, "no GPU has index 4");
    o = run(NULL, "-1", true); /* CUDA's "no device" idiom: here, a daemon with nothing to do */
    assert_error_has(&o, "'-1' makes no GPU visible (the job holds no GPU)");
    o = run(NULL, "x1", true);
    assert_error_has(&o, "'x1' is neither a GPU index nor a GPU UUID");
}

static void cuda_empty_mig_or_junk_is_an_error(void **state)
{
    (void)state;
    outcome o = run(NULL, "", true);
    assert_error_has(&o, "CUDA_VISIBLE_DEVICES is set but empty");
    o = run(NULL, "MIG-aaaa-1111/1/0", true);
    assert_error_has(&o, "MIG instance");
    o = run(NULL, "NoDevFiles", true);
    assert_error_has(&o, "'NoDevFiles' makes no GPU visible (the job holds no GPU)");
}

/* ---- the nvml backend over the fake library ---- */

static const char *const four_fake =
    "gpu uuid=GPU-f0 name=\"Fake A\"\n"
    "gpu uuid=GPU-f1 name=\"Fake B\"\n"
    "gpu uuid=GPU-f2 name=\"Fake C\" minor=3\n"
    "gpu uuid=GPU-f3 name=\"Fake D\" minor=2 total=81920\n";

static const char *scenario;

static int setup(void **state)
{
    (void)state;
    fake_nvml_clean_env();
    scenario = fake_nvml_scenario(four_fake);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fake_nvml_cleanup(scenario);
    unsetenv("SLURM_JOB_GPUS");
    unsetenv("CUDA_VISIBLE_DEVICES");
    return 0;
}

static void backend_keeps_the_jobs_gpus_numbered_from_zero(void **state)
{
    (void)state;
    setenv("SLURM_JOB_GPUS", "1,2", 1); /* minor 2 is NVML GPU 3 */
    gpu_backend *b;
    carma_err err;
    assert_int_equal(gpu_backend_nvml.open(&b, fake_nvml_path("full"), &err), 0);
    assert_int_equal(gpu_backend_nvml.count(b), 2);
    gpu_reading r[2];
    assert_int_equal(gpu_backend_nvml.sample(b, r, &err), 0);
    assert_int_equal(r[0].index, 0);
    assert_string_equal(r[0].uuid, "GPU-f1");
    assert_int_equal(r[1].index, 1);
    assert_string_equal(r[1].uuid, "GPU-f3");
    assert_true(r[1].mem_known);
    assert_int_equal(r[1].total_mib, 81920); /* its own memory, not NVML GPU 1's */
    assert_non_null(strstr(nvml_backend_visible_note(b), "NVML GPU 3 GPU-f3"));
    gpu_backend_nvml.close(b);
}

static void backend_without_minor_numbers_uses_nvml_indices(void **state)
{
    (void)state;
    setenv("SLURM_JOB_GPUS", "2", 1);
    gpu_backend *b;
    carma_err err;
    assert_int_equal(gpu_backend_nvml.open(&b, fake_nvml_path("bare"), &err), 0);
    assert_int_equal(gpu_backend_nvml.count(b), 1);
    assert_non_null(strstr(nvml_backend_visible_note(b), "no nvmlDeviceGetMinorNumber"));
    assert_non_null(strstr(nvml_backend_visible_note(b), "NVML GPU 2"));
    gpu_backend_nvml.close(b);
}

static void backend_refuses_to_open_on_a_bad_entry(void **state)
{
    (void)state;
    setenv("CUDA_VISIBLE_DEVICES", "GPU-f1,GPU-nope", 1);
    gpu_backend *b = (gpu_backend *)&b; /* must come back NULL */
    carma_err err;
    assert_int_equal(gpu_backend_nvml.open(&b, fake_nvml_path("full"), &err), -1);
    assert_null(b);
    assert_non_null(strstr(err.msg, "'GPU-nope'"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_variable_keeps_every_gpu_and_says_nothing),
        cmocka_unit_test(slurm_gpus_match_minor_numbers_not_nvml_order),
        cmocka_unit_test(slurm_gpus_fall_back_to_nvml_index_without_minor_numbers),
        cmocka_unit_test(slurm_gpus_win_over_cuda_visible_devices),
        cmocka_unit_test(slurm_entry_naming_no_gpu_is_an_error),
        cmocka_unit_test(slurm_gpu_whose_minor_is_unknown_is_not_matched),
        cmocka_unit_test(cuda_uuids_and_unique_prefixes),
        cmocka_unit_test(cuda_ambiguous_or_unknown_uuid_is_an_error),
        cmocka_unit_test(cuda_integers_are_nvml_indices),
        cmocka_unit_test(cuda_empty_mig_or_junk_is_an_error),
        cmocka_unit_test_setup_teardown(backend_keeps_the_jobs_gpus_numbered_from_zero, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(backend_without_minor_numbers_uses_nvml_indices, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(backend_refuses_to_open_on_a_bad_entry, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
