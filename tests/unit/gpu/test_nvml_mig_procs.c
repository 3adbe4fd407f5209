/* test_nvml_mig_procs.c — process lists of a GPU in MIG mode. nvml.h: in MIG mode the parent
 * device's nvmlDeviceGetComputeRunningProcesses gives aggregate information, one entry per
 * instance a process runs on (gpuInstanceId and computeInstanceId say which), each with that
 * instance's memory. A process on two instances holds the sum; carma used to keep the first
 * entry only. Without MIG (instance ids 0xFFFFFFFF) a pid listed twice still counts once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fake_nvml_fixture.h"
#include "gpu/backend.h"
#include "gpu/nvml_backend.h"

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

/* The direct read's open (GPUs in MIG mode kept) over `text`, one sample. */
static void read_all(const char *variant, const char *text)
{
    carma_err err = {""};
    scenario_path = fake_nvml_scenario(text);
    assert_int_equal(nvml_backend_open_all(&backend, fake_nvml_path(variant), &err), 0);
    assert_int_equal(gpu_backend_nvml.sample(backend, r, &err), 0);
}

static void assert_proc(const gpu_proc *p, int pid, bool known, uint64_t mib)
{
    assert_int_equal(p->pid, pid);
    assert_int_equal(p->used_known, known);
    assert_int_equal(p->used_mib, mib);
}

static const char *const mig_procs =
    "gpu uuid=GPU-mig-0 name=\"NVIDIA A100-SXM4-80GB\" total=81920 mig=1\n"
    "proc gpu=0 pid=500 used=1000 gi=1 ci=0\n"
    "proc gpu=0 pid=600 used=300 gi=1 ci=0\n"
    "proc gpu=0 pid=500 used=2000 gi=2 ci=0\n"
    "proc gpu=0 pid=500 used=24 gi=2 ci=1\n"   /* another compute instance of GI 2 */
    "proc gpu=0 pid=700 used=100 gi=1 ci=0\n"
    "proc gpu=0 pid=700 used=na gi=2 ci=0\n";  /* a part unknown: the whole unknown */

static void check_mig_sums(void)
{
    assert_int_equal(r[0].mig, GPU_MIG_ON);
    assert_true(r[0].procs_known);
    assert_int_equal(r[0].nprocs, 3);
    assert_proc(&r[0].procs[0], 500, true, 3024);
    assert_proc(&r[0].procs[1], 600, true, 300);
    assert_proc(&r[0].procs[2], 700, false, 0);
}

static void process_on_several_instances_holds_their_sum(void **state)
{
    (void)state;
    read_all("full", mig_procs);
    check_mig_sums();
}

/* The same with _v2 records (an older library) and the 32-byte _v3 records of drivers
 * 535.43-535.86: the instance ids sit at the same offsets. */
static void sum_with_every_record_layout(void **state)
{
    (void)state;
    read_all("old", mig_procs);
    check_mig_sums();
    teardown(state); /* a fresh backend on the other build */
    setup(state);
    read_all("stride32", mig_procs);
    check_mig_sums();
}

/* An instance's entry given twice, and a pid listed twice on a GPU without MIG: the entry
 * holds all of the process's memory there, counted once. */
static void an_entry_repeated_counts_once(void **state)
{
    (void)state;
    read_all("full", "gpu uuid=GPU-mig-0 mig=1\n"
                     "gpu uuid=GPU-whole-1 mig=0\n"
                     "proc gpu=0 pid=500 used=1000 gi=3 ci=0\n"
                     "proc gpu=0 pid=500 used=1000 gi=3 ci=0\n"
                     "proc gpu=1 pid=800 used=4096\n"
                     "proc gpu=1 pid=800 used=4096\n");
    assert_int_equal(r[0].nprocs, 1);
    assert_proc(&r[0].procs[0], 500, true, 1000);
    assert_int_equal(r[1].nprocs, 1);
    assert_proc(&r[1].procs[0], 800, true, 4096);
}

/* An MPS client the compute list named already keeps the compute list's entry (as before). */
static void a_pid_in_both_lists_keeps_the_first(void **state)
{
    (void)state;
    read_all("full", "gpu uuid=GPU-mig-0 mig=1\n"
                     "proc gpu=0 pid=500 used=1000 gi=1 ci=0\n"
                     "proc gpu=0 pid=500 used=500 gi=2 ci=0\n"
                     "mps gpu=0 pid=500 used=9999 gi=1 ci=0\n");
    assert_int_equal(r[0].nprocs, 1);
    assert_proc(&r[0].procs[0], 500, true, 1500);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(process_on_several_instances_holds_their_sum, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(sum_with_every_record_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(an_entry_repeated_counts_once, setup, teardown),
        cmocka_unit_test_setup_teardown(a_pid_in_both_lists_keeps_the_first, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
