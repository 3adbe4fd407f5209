/* test_nvml_backend.c — the nvml backend end to end against the fake libnvidia-ml.so.1: every
 * metric read and converted at the edge, every unknown path (unsupported query, scripted failure,
 * GPU lost at start and mid-run) left unknown rather than zero, GPM's two-sample rule, and GPUs
 * in MIG mode left out (or, for the direct read, marked). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "fake_nvml_fixture.h"
#include "gpu/backend.h"
#include "gpu/nvml_backend.h"

static const char *const two_gpus =
    "# an H100 with GPM and an A100 without\n"
    "gpu uuid=GPU-aaaa-0001 name=\"NVIDIA H100 80GB HBM3\" total=81559 used=20480 reserved=512"
    " util=35 power=251500 energy=987654321 gpm=1 smact=40.5 smocc=20 drama=30\n"
    "gpu uuid=GPU-bbbb-0002 name=\"NVIDIA A100-SXM4-40GB\" total=40960 used=0 reserved=256"
    " util=0 power=61000 energy=1000 gpm=0\n"
    "proc gpu=0 pid=4242 used=10240\n"
    "proc gpu=0 pid=4343 used=na\n"
    "mps gpu=0 pid=4444 used=2048\n"
    "mps gpu=0 pid=4242 used=10240\n";

typedef struct fixture {
    const char *scenario;
    gpu_backend *b;
    gpu_reading r[4];
} fixture;

static fixture F;

static int setup(void **state)
{
    (void)state;
    memset(&F, 0, sizeof F);
    fake_nvml_clean_env();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (F.b)
        gpu_backend_nvml.close(F.b);
    fake_nvml_cleanup(F.scenario);
    return 0;
}

/* Opens the given fake build over `scenario` and takes one sample. */
static void open_and_sample(const char *variant, const char *scenario)
{
    carma_err err = {""};
    F.scenario = fake_nvml_scenario(scenario);
    int rc = gpu_backend_nvml.open(&F.b, fake_nvml_path(variant), &err);
    if (rc)
        print_error("open: %s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(gpu_backend_nvml.sample(F.b, F.r, &err), 0);
}

static void sample_again(void)
{
    carma_err err;
    assert_int_equal(gpu_backend_nvml.sample(F.b, F.r, &err), 0);
}

static void assert_all_unknown_but_identity(const gpu_reading *r)
{
    assert_false(r->mem_known);
    assert_true(isnan(r->util_gpu));
    assert_true(isnan(r->power_w));
    assert_true(isnan(r->energy_mj));
    assert_true(isnan(r->smact) && isnan(r->smocc) && isnan(r->drama));
    assert_int_equal(r->src_activity, SRC_UNKNOWN);
    assert_int_equal(r->src_power, SRC_UNKNOWN);
    assert_false(r->procs_known);
    assert_int_equal(r->nprocs, 0);
}

static void reads_every_metric_in_carma_units(void **state)
{
    (void)state;
    open_and_sample("full", two_gpus);
    assert_int_equal(gpu_backend_nvml.count(F.b), 2);
    const gpu_reading *a = &F.r[0], *b = &F.r[1];
    assert_int_equal(a->index, 0);
    assert_string_equal(a->uuid, "GPU-aaaa-0001");
    assert_string_equal(a->name, "NVIDIA H100 80GB HBM3");
    assert_true(a->mem_known);
    assert_int_equal(a->total_mib, 81559);
    assert_int_equal(a->used_mib, 20480); /* v2: reserved memory is not "used" */
    assert_int_equal(a->free_mib, 81559 - 20480 - 512);
    assert_double_equal(a->util_gpu, 0.35, 1e-9);
    assert_double_equal(a->power_w, 251.5, 1e-9);
    assert_double_equal(a->energy_mj, 987654321.0, 1e-3);
    assert_int_equal(a->src_power, SRC_NVML);
    assert_string_equal(b->uuid, "GPU-bbbb-0002");
    assert_int_equal(b->used_mib, 0);
    assert_double_equal(b->util_gpu, 0.0, 1e-12); /* a real zero is a known zero */
    assert_double_equal(b->power_w, 61.0, 1e-9);
}

static void process_lists_merge_compute_and_mps_clients(void **state)
{
    (void)state;
    open_and_sample("full", two_gpus);
    const gpu_reading *a = &F.r[0];
    assert_true(a->procs_known);
    assert_int_equal(a->nprocs, 3); /* 4242 listed twice counts once */
    assert_int_equal(a->procs[0].pid, 4242);
    assert_true(a->procs[0].used_known);
    assert_int_equal(a->procs[0].used_mib, 10240);
    assert_int_equal(a->procs[1].pid, 4343);
    assert_false(a->procs[1].used_known); /* NVML_VALUE_NOT_AVAILABLE */
    assert_int_equal(a->procs[2].pid, 4444);
    assert_int_equal(a->procs[2].used_mib, 2048);
    /* which are MPS clients: in the client list (4242 in both), not in the compute list only */
    assert_true(a->mps_known);
    assert_true(a->procs[0].mps_client);
    assert_false(a->procs[1].mps_client);
    assert_true(a->procs[2].mps_client);
    assert_true(F.r[1].procs_known);
    assert_int_equal(F.r[1].nprocs, 0);
}

static void gpm_needs_two_samples_100ms_apart(void **state)
{
    (void)state;
    open_and_sample("full", two_gpus);
    assert_true(isnan(F.r[0].smact)); /* one sample: no interval yet */
    assert_int_equal(F.r[0].src_activity, SRC_UNKNOWN);
    sample_again(); /* well under 100 ms later: still nothing */
    assert_true(isnan(F.r[0].smact));
    sleep_ms(120);
    sample_again();
    assert_int_equal(F.r[0].src_activity, SRC_GPM);
    assert_double_equal(F.r[0].smact, 0.405, 1e-9); /* 0..100 became 0..1 */
    assert_double_equal(F.r[0].smocc, 0.20, 1e-9);
    assert_double_equal(F.r[0].drama, 0.30, 1e-9);
    /* the A100 has no GPM and DCGM is absent: unknown, and the backend says why */
    assert_true(isnan(F.r[1].smact) && isnan(F.r[1].smocc) && isnan(F.r[1].drama));
    assert_int_equal(F.r[1].src_activity, SRC_UNKNOWN);
    assert_non_null(strstr(nvml_backend_activity_note(F.b), "libdcgm"));
    sample_again(); /* too soon again: the last values are kept */
    assert_double_equal(F.r[0].smact, 0.405, 1e-9);
}

static void unsupported_gpm_metric_stays_unknown(void **state)
{
    (void)state;
    open_and_sample("full", "gpu gpm=1 smact=50 smocc=na drama=10 util=1\n");
    sleep_ms(120);
    sample_again();
    assert_int_equal(F.r[0].src_activity, SRC_GPM);
    assert_double_equal(F.r[0].smact, 0.5, 1e-9);
    assert_true(isnan(F.r[0].smocc));
    assert_double_equal(F.r[0].drama, 0.1, 1e-9);
}

static void unsupported_queries_leave_metrics_unknown(void **state)
{
    (void)state;
    open_and_sample("full", "gpu util=na power=na energy=na gpm=0 used=100\n"
                            "fail nvmlDeviceGetComputeRunningProcesses_v3 3\n");
    const gpu_reading *r = &F.r[0];
    assert_true(r->mem_known);
    assert_true(isnan(r->util_gpu));
    assert_true(isnan(r->power_w));
    assert_true(isnan(r->energy_mj));
    assert_int_equal(r->src_power, SRC_UNKNOWN);
    assert_false(r->procs_known);
}

static void memory_v2_failure_falls_back_to_v1(void **state)
{
    (void)state;
    open_and_sample("full", "gpu total=1000 used=100 reserved=50\n"
                            "fail nvmlDeviceGetMemoryInfo_v2 13\n");
    assert_true(F.r[0].mem_known);
    assert_int_equal(F.r[0].used_mib, 150); /* v1 counts reserved memory as used */
    assert_int_equal(F.r[0].free_mib, 850);
}

static void memory_unknown_when_both_queries_fail(void **state)
{
    (void)state;
    open_and_sample("full", "gpu total=1000 used=100\n"
                            "fail nvmlDeviceGetMemoryInfo_v2 3\n"
                            "fail nvmlDeviceGetMemoryInfo 3\n");
    assert_false(F.r[0].mem_known);
}

static void scripted_failure_on_one_gpu_only(void **state)
{
    (void)state;
    char text[2048];
    snprintf(text, sizeof text, "%sfail nvmlDeviceGetPowerUsage 999 gpu=1\n", two_gpus);
    open_and_sample("full", text);
    assert_double_equal(F.r[0].power_w, 251.5, 1e-9);
    assert_true(isnan(F.r[1].power_w));
    assert_double_equal(F.r[1].energy_mj, 1000.0, 1e-9); /* energy still read */
    assert_int_equal(F.r[1].src_power, SRC_NVML);
}

static void gpu_lost_at_start_is_all_unknown(void **state)
{
    (void)state;
    char text[2048];
    snprintf(text, sizeof text, "%slost 1\n", two_gpus);
    open_and_sample("full", text);
    assert_true(F.r[0].mem_known);
    assert_string_equal(F.r[1].uuid, ""); /* a lost GPU cannot even tell its UUID */
    assert_all_unknown_but_identity(&F.r[1]);
    fake_nvml_replace(F.scenario, two_gpus); /* it comes back: its UUID is read then */
    sample_again();
    assert_string_equal(F.r[1].uuid, "GPU-bbbb-0002");
    assert_true(F.r[1].mem_known);
}

static void gpu_without_handle_keeps_its_index(void **state)
{
    (void)state;
    char text[2048];
    snprintf(text, sizeof text, "%sfail nvmlDeviceGetHandleByIndex 15 gpu=0\n", two_gpus);
    open_and_sample("full", text);
    assert_int_equal(gpu_backend_nvml.count(F.b), 2);
    assert_int_equal(F.r[0].index, 0);
    assert_string_equal(F.r[0].uuid, "");
    assert_all_unknown_but_identity(&F.r[0]);
    assert_string_equal(F.r[1].uuid, "GPU-bbbb-0002");
    fake_nvml_replace(F.scenario, two_gpus); /* the handle can be had now */
    sample_again();
    assert_string_equal(F.r[0].uuid, "GPU-aaaa-0001");
    assert_true(F.r[0].mem_known);
}

static void gpu_lost_mid_run_then_back(void **state)
{
    (void)state;
    open_and_sample("full", two_gpus);
    sleep_ms(120);
    sample_again();
    assert_int_equal(F.r[0].src_activity, SRC_GPM);
    char text[2048];
    snprintf(text, sizeof text, "%slost 0\n", two_gpus);
    fake_nvml_replace(F.scenario, text);
    sleep_ms(120);
    sample_again();
    assert_all_unknown_but_identity(&F.r[0]);
    assert_true(F.r[1].mem_known); /* the other GPU is unaffected */
    fake_nvml_replace(F.scenario, two_gpus);
    sample_again();
    assert_true(F.r[0].mem_known);
    assert_true(isnan(F.r[0].smact)); /* GPM starts a new interval after the loss */
    sleep_ms(120);
    sample_again();
    assert_double_equal(F.r[0].smact, 0.405, 1e-9);
}

static void old_library_uses_fallback_entry_points(void **state)
{
    (void)state;
    open_and_sample("old", two_gpus);
    const gpu_reading *a = &F.r[0];
    assert_string_equal(a->uuid, "GPU-aaaa-0001");
    assert_int_equal(a->used_mib, 20480 + 512); /* memory v1 */
    assert_true(isnan(a->energy_mj)); /* no nvmlDeviceGetTotalEnergyConsumption */
    assert_double_equal(a->power_w, 251.5, 1e-9);
    assert_true(a->procs_known); /* via the _v2 list; no MPS list in this library */
    assert_false(a->mps_known);  /* so no process can be told an MPS client or not */
    assert_int_equal(a->nprocs, 2);
    assert_int_equal(a->procs[0].pid, 4242);
    assert_int_equal(a->procs[0].used_mib, 10240);
    sleep_ms(120);
    sample_again();
    assert_true(isnan(F.r[0].smact)); /* no GPM symbols */
    assert_int_equal(F.r[0].src_activity, SRC_UNKNOWN);
}

static void bare_library_gives_only_unknowns(void **state)
{
    (void)state;
    open_and_sample("bare", two_gpus);
    assert_int_equal(gpu_backend_nvml.count(F.b), 2);
    for (int i = 0; i < 2; i++) {
        assert_string_equal(F.r[i].uuid, "");
        assert_string_equal(F.r[i].name, "");
        assert_all_unknown_but_identity(&F.r[i]);
    }
}

static void stride32_process_records_are_read_right(void **state)
{
    (void)state;
    open_and_sample("stride32", "gpu\n"
                                "proc gpu=0 pid=101 used=1000\n"
                                "proc gpu=0 pid=102 used=2000\n"
                                "proc gpu=0 pid=103 used=3000\n");
    assert_int_equal(F.r[0].nprocs, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(F.r[0].procs[i].pid, 101 + i);
        assert_int_equal(F.r[0].procs[i].used_mib, 1000u * (unsigned)(i + 1));
    }
}

/* The fake can attach live processes by their command line, as a driver would see them. */
static void process_matched_by_command_line(void **state)
{
    (void)state;
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        execlp("sleep", "sleep", "7.25", (char *)NULL);
        _exit(127);
    }
    /* wait until the child has become `sleep 7.25` */
    char path[64], buf[64] = "";
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)child);
    for (int i = 0; i < 500 && strcmp(buf, "sleep"); i++) {
        FILE *f = fopen(path, "r");
        size_t k = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[k] = '\0';
        if (strcmp(buf, "sleep"))
            sleep_ms(10);
    }
    open_and_sample("full", "gpu\nproc gpu=0 match=\"sleep 7.25\" used=333\n");
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    assert_int_equal(F.r[0].nprocs, 1);
    assert_int_equal(F.r[0].procs[0].pid, child);
    assert_int_equal(F.r[0].procs[0].used_mib, 333);
    sample_again(); /* it is gone */
    assert_int_equal(F.r[0].nprocs, 0);
}

/* MIG: an A100 in MIG mode, one with MIG pending (on only after a reset: a whole GPU now), one
 * that cannot do MIG (NOT_SUPPORTED) and one whose query fails. */
static const char *const mig_gpus =
    "gpu uuid=GPU-mig-0 name=\"NVIDIA A100-SXM4-40GB\" total=40960 mig=1\n"
    "gpu uuid=GPU-pending-1 name=\"NVIDIA A100-SXM4-40GB\" total=40960 mig=0 mig_pending=1\n"
    "gpu uuid=GPU-nomig-2 name=\"NVIDIA L40S\" total=46068\n"
    "gpu uuid=GPU-fails-3 name=\"NVIDIA H100 80GB HBM3\" total=81559 mig=1\n"
    "fail nvmlDeviceGetMigMode 999 gpu=3\n";

static void gpu_in_mig_mode_is_left_out(void **state)
{
    (void)state;
    open_and_sample("full", mig_gpus);
    assert_int_equal(gpu_backend_nvml.count(F.b), 3);
    assert_string_equal(F.r[0].uuid, "GPU-pending-1"); /* renumbered from 0 */
    assert_int_equal(F.r[0].index, 0);
    assert_int_equal(F.r[0].mig, GPU_MIG_OFF); /* the current mode counts, not the pending */
    assert_string_equal(F.r[1].uuid, "GPU-nomig-2");
    assert_int_equal(F.r[1].mig, GPU_MIG_OFF); /* NOT_SUPPORTED: no MIG on this GPU */
    assert_string_equal(F.r[2].uuid, "GPU-fails-3");
    assert_int_equal(F.r[2].mig, GPU_MIG_UNKNOWN); /* a failed query: unknown, and kept */
    assert_true(F.r[2].mem_known);
    int n = -1;
    const nvml_mig_gpu *m = nvml_backend_mig_left_out(F.b, &n);
    assert_int_equal(n, 1);
    assert_int_equal(m[0].nvml_index, 0);
    assert_string_equal(m[0].uuid, "GPU-mig-0");
}

static void open_all_keeps_and_marks_gpus_in_mig_mode(void **state)
{
    (void)state;
    carma_err err = {""};
    F.scenario = fake_nvml_scenario(mig_gpus);
    assert_int_equal(nvml_backend_open_all(&F.b, fake_nvml_path("full"), &err), 0);
    assert_int_equal(gpu_backend_nvml.count(F.b), 4);
    assert_int_equal(gpu_backend_nvml.sample(F.b, F.r, &err), 0);
    assert_string_equal(F.r[0].uuid, "GPU-mig-0");
    assert_int_equal(F.r[0].mig, GPU_MIG_ON);
    assert_true(F.r[0].mem_known); /* still read: what NVML says of the whole GPU */
    assert_int_equal(F.r[1].mig, GPU_MIG_OFF);
    assert_int_equal(F.r[2].mig, GPU_MIG_OFF);
    assert_int_equal(F.r[3].mig, GPU_MIG_UNKNOWN);
    int n = -1;
    nvml_backend_mig_left_out(F.b, &n);
    assert_int_equal(n, 0);
}

static void every_gpu_in_mig_mode_leaves_none(void **state)
{
    (void)state;
    open_and_sample("full", "gpu uuid=GPU-a mig=1\ngpu uuid=GPU-b mig=1\n");
    assert_int_equal(gpu_backend_nvml.count(F.b), 0);
    int n = -1;
    const nvml_mig_gpu *m = nvml_backend_mig_left_out(F.b, &n);
    assert_int_equal(n, 2);
    assert_int_equal(m[1].nvml_index, 1);
    assert_string_equal(m[1].uuid, "GPU-b");
}

/* A library without nvmlDeviceGetMigMode predates MIG: no GPU is in MIG mode. */
static void library_without_mig_entry_point_has_mig_off(void **state)
{
    (void)state;
    open_and_sample("bare", "gpu mig=1\n");
    assert_int_equal(gpu_backend_nvml.count(F.b), 1);
    assert_int_equal(F.r[0].mig, GPU_MIG_OFF);
}

/* A GPU lost at start cannot tell its mode: kept, its mode read once it answers again. */
static void gpu_lost_at_start_has_mig_unknown_until_back(void **state)
{
    (void)state;
    open_and_sample("full", "gpu uuid=GPU-a\nlost 0\n");
    assert_int_equal(gpu_backend_nvml.count(F.b), 1);
    assert_int_equal(F.r[0].mig, GPU_MIG_UNKNOWN);
    fake_nvml_replace(F.scenario, "gpu uuid=GPU-a\n");
    sample_again();
    assert_int_equal(F.r[0].mig, GPU_MIG_OFF);
}

static void missing_library_error_names_it(void **state)
{
    (void)state;
    carma_err err = {""};
    gpu_backend *b = (gpu_backend *)1;
    assert_int_equal(gpu_backend_nvml.open(&b, "/nonexistent/libnvidia-ml.so.1", &err), -1);
    assert_null(b);
    assert_non_null(strstr(err.msg, "/nonexistent/libnvidia-ml.so.1"));
    assert_non_null(strstr(err.msg, "CARMA_NVML_LIBRARY"));
    setenv("CARMA_NVML_LIBRARY", "/nowhere/libnvidia-ml.so.1", 1);
    assert_int_equal(gpu_backend_nvml.open(&b, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "/nowhere/libnvidia-ml.so.1"));
    unsetenv("CARMA_NVML_LIBRARY");
}

static void library_without_nvml_symbols_is_rejected(void **state)
{
    (void)state;
    carma_err err = {""};
    gpu_backend *b = NULL;
    assert_int_equal(gpu_backend_nvml.open(&b, "libm.so.6", &err), -1);
    assert_non_null(strstr(err.msg, "lacks nvmlInit_v2"));
}

static void init_failure_is_reported_with_nvml_text(void **state)
{
    (void)state;
    carma_err err = {""};
    F.scenario = fake_nvml_scenario("gpu\ninit_fail 9\n");
    assert_int_equal(gpu_backend_nvml.open(&F.b, fake_nvml_path("full"), &err), -1);
    assert_null(F.b);
    assert_non_null(strstr(err.msg, "nvmlInit failed"));
    assert_non_null(strstr(err.msg, "Driver Not Loaded"));
}

static void dcgm_fills_activity_where_gpm_is_missing(void **state)
{
    (void)state;
    char lib[512];
    snprintf(lib, sizeof lib, "%s/dcgm/libdcgm.so.4", FAKE_NVML_DIR);
    setenv("CARMA_DCGM_LIBRARY", lib, 1);
    /* DCGM numbers the A100 7; field 52 says it is NVML's GPU 1. Its power query fails in
     * NVML, so power and energy come from DCGM too. */
    setenv("FAKE_DCGM_VALUES", "7:1:0.55:0.25:na:300.5:4200;9:0:0.9:0.9:0.9:1:1", 1);
    char text[2048];
    snprintf(text, sizeof text, "%sfail nvmlDeviceGetPowerUsage 3 gpu=1\n"
                                "fail nvmlDeviceGetTotalEnergyConsumption 3 gpu=1\n", two_gpus);
    open_and_sample("full", text);
    const gpu_reading *b = &F.r[1];
    assert_int_equal(b->src_activity, SRC_DCGM);
    assert_double_equal(b->smact, 0.55, 1e-12); /* DCGM ratios are already 0..1 */
    assert_double_equal(b->smocc, 0.25, 1e-12);
    assert_true(isnan(b->drama)); /* a blank value is unknown */
    assert_int_equal(b->src_power, SRC_DCGM);
    assert_double_equal(b->power_w, 300.5, 1e-12);
    assert_double_equal(b->energy_mj, 4200.0, 1e-12);
    /* the H100 keeps GPM (unknown on the first sample) and NVML power: DCGM does not override */
    assert_int_equal(F.r[0].src_activity, SRC_UNKNOWN);
    assert_int_equal(F.r[0].src_power, SRC_NVML);
    /* no host engine answers here: DCGM runs embedded, and the note says so */
    assert_string_equal(nvml_backend_activity_note(F.b),
                        "DCGM embedded (no nv-hostengine at 127.0.0.1)");
    sleep_ms(120);
    sample_again();
    assert_int_equal(F.r[0].src_activity, SRC_GPM);
    assert_double_equal(F.r[0].smact, 0.405, 1e-9);
    unsetenv("FAKE_DCGM_VALUES");
}

/* Real DCGM hands each value to the callback on its own (numValues 1), so SM activity,
 * occupancy and DRAM activity of one GPU arrive in separate calls, field 52 among them. */
static void dcgm_reads_every_activity_field_delivered_one_value_per_call(void **state)
{
    (void)state;
    char lib[512];
    snprintf(lib, sizeof lib, "%s/dcgm/libdcgm.so.4", FAKE_NVML_DIR);
    setenv("CARMA_DCGM_LIBRARY", lib, 1);
    setenv("FAKE_DCGM_VALUES", "3:1:0.62:0.31:0.47:250:9000", 1);
    open_and_sample("full", two_gpus);
    const gpu_reading *b = &F.r[1];
    assert_int_equal(b->src_activity, SRC_DCGM);
    assert_double_equal(b->smact, 0.62, 1e-12);
    assert_double_equal(b->smocc, 0.31, 1e-12);
    assert_double_equal(b->drama, 0.47, 1e-12);
    unsetenv("FAKE_DCGM_VALUES");
}

static void dcgm_failing_to_start_leaves_activity_unknown(void **state)
{
    (void)state;
    char lib[512];
    snprintf(lib, sizeof lib, "%s/dcgm/libdcgm.so.4", FAKE_NVML_DIR);
    setenv("CARMA_DCGM_LIBRARY", lib, 1);
    setenv("FAKE_DCGM_VALUES", "0:1:0.55:0.25:0.1:300:4200", 1);
    setenv("FAKE_DCGM_FAIL", "dcgmWatchFields", 1);
    open_and_sample("full", two_gpus);
    assert_int_equal(F.r[1].src_activity, SRC_UNKNOWN);
    assert_true(isnan(F.r[1].smact));
    assert_non_null(strstr(nvml_backend_activity_note(F.b), "dcgmWatchFields failed"));
    assert_non_null(strstr(nvml_backend_activity_note(F.b), "Profiling is not supported"));
    unsetenv("FAKE_DCGM_FAIL");
    unsetenv("FAKE_DCGM_VALUES");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(reads_every_metric_in_carma_units, setup, teardown),
        cmocka_unit_test_setup_teardown(process_lists_merge_compute_and_mps_clients, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(gpm_needs_two_samples_100ms_apart, setup, teardown),
        cmocka_unit_test_setup_teardown(unsupported_gpm_metric_stays_unknown, setup, teardown),
        cmocka_unit_test_setup_teardown(unsupported_queries_leave_metrics_unknown, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(memory_v2_failure_falls_back_to_v1, setup, teardown),
        cmocka_unit_test_setup_teardown(memory_unknown_when_both_queries_fail, setup, teardown),
        cmocka_unit_test_setup_teardown(scripted_failure_on_one_gpu_only, setup, teardown),
        cmocka_unit_test_setup_teardown(gpu_lost_at_start_is_all_unknown, setup, teardown),
        cmocka_unit_test_setup_teardown(gpu_without_handle_keeps_its_index, setup, teardown),
        cmocka_unit_test_setup_teardown(gpu_lost_mid_run_then_back, setup, teardown),
        cmocka_unit_test_setup_teardown(old_library_uses_fallback_entry_points, setup, teardown),
        cmocka_unit_test_setup_teardown(bare_library_gives_only_unknowns, setup, teardown),
        cmocka_unit_test_setup_teardown(stride32_process_records_are_read_right, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(process_matched_by_command_line, setup, teardown),
        cmocka_unit_test_setup_teardown(gpu_in_mig_mode_is_left_out, setup, teardown),
        cmocka_unit_test_setup_teardown(open_all_keeps_and_marks_gpus_in_mig_mode, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(every_gpu_in_mig_mode_leaves_none, setup, teardown),
        cmocka_unit_test_setup_teardown(library_without_mig_entry_point_has_mig_off, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(gpu_lost_at_start_has_mig_unknown_until_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(missing_library_error_names_it, setup, teardown),
        cmocka_unit_test_setup_teardown(library_without_nvml_symbols_is_rejected, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(init_failure_is_reported_with_nvml_text, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(dcgm_fills_activity_where_gpm_is_missing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            dcgm_reads_every_activity_field_delivered_one_value_per_call, setup, teardown),
        cmocka_unit_test_setup_teardown(dcgm_failing_to_start_leaves_activity_unknown, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
