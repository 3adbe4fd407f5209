/* test_sim_engine.c — the event engine driving the scheduling core: queueing, grace-delayed
 * collocation, start-up, out-of-memory crash (at allocation and at the memory ramp) and
 * recovery, interference stretch, time-sliced activity, energy and utilization. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "sim/engine.h"

static sim_setup setup_for(policy_id p, int ngpus, double startup_s)
{
    sim_setup s;
    memset(&s, 0, sizeof s);
    sched_config_defaults(&s.sched);
    s.sched.policy = p;
    sim_params_defaults(&s.params);
    s.params.startup_s = startup_s;
    int n;
    carma_err err;
    assert_int_equal(gpu_spec_parse("A100-40GB", NULL, &n, &s.gpu, &err), 0);
    s.ngpus = ngpus;
    return s;
}

static sim_job_spec job(double submit, double runtime, uint64_t peak, double smact)
{
    sim_job_spec j;
    memset(&j, 0, sizeof j);
    j.name = "job";
    j.submit_s = submit;
    j.ngpus = 1;
    j.early_mib = j.peak_mib = peak;
    mem_figures_set(&j.mem, MEM_ORACLE, peak);
    j.runtime_s = runtime;
    j.startup_s = NAN; /* the setup's default */
    j.util = NAN;      /* taken as its SMACT */
    j.lucid_class = -1;
    j.smact = smact;
    j.smocc = smact / 3;
    j.drama = smact / 3;
    return j;
}

static void exclusive_queues_behind_a_busy_gpu(void **state)
{
    (void)state;
    sim_setup s = setup_for(POLICY_EXCLUSIVE, 1, 0);
    sim_job_spec jobs[2] = {job(0, 100, 1000, 0.2), job(10, 50, 1000, 0.2)};
    sim_result r;
    carma_err err;
    assert_int_equal(sim_run(&s, jobs, 2, &r, &err), 0);
    assert_float_equal(r.jobs[1].first_start_s, 100, 1e-9);
    assert_float_equal(r.summary.makespan_s, 150, 1e-9);
    assert_float_equal(r.jobs[1].wait_s, 90, 1e-9);
    assert_float_equal(r.summary.mean_jct_s, (100 + 140) / 2.0, 1e-9);
    assert_int_equal(r.summary.collocated_placements, 0);
    sim_result_free(&r);
}

static void collocation_waits_for_grace_and_window(void **state)
{
    (void)state;
    sim_setup s = setup_for(POLICY_ORACLE_FF, 1, 10);
    sim_job_spec jobs[2] = {job(0, 1000, 2000, 0.3), job(0, 1000, 2000, 0.3)};
    sim_result r;
    carma_err err;
    assert_int_equal(sim_run(&s, jobs, 2, &r, &err), 0);
    /* A allocates at 10 (start-up), its grace ends at 40: B is placed then, beside A. */
    assert_float_equal(r.jobs[1].first_start_s, 40, 1e-3);
    assert_true(r.jobs[1].collocated);
    assert_int_equal(r.summary.collocated_placements, 1);
    /* A works alone 10..50 (B's start-up), then both at the speed B's pressure leaves A. */
    double speed = sim_speed(&s.params, sim_pressure(&s.params, 0.3, 0.1));
    assert_true(speed < 1.0);
    double left = (1000 - 10) - 40;
    assert_float_equal(r.jobs[0].end_s, 50 + left / speed, 1e-6);
    sim_result_free(&r);
}

static void oom_crash_goes_to_recovery_and_reruns(void **state)
{
    (void)state;
    sim_setup s = setup_for(POLICY_OR_RR, 1, 5); /* no memory filter: it will collide */
    sim_job_spec jobs[2] = {job(0, 500, 30000, 0.5), job(1, 200, 30000, 0.5)};
    sim_result r;
    carma_err err;
    assert_int_equal(sim_run(&s, jobs, 2, &r, &err), 0);
    assert_int_equal(r.summary.oom_crashes, 1);
    assert_int_equal(r.jobs[1].oom_crashes, 1);
    assert_int_equal(r.jobs[1].attempts, 2);
    assert_int_equal(r.summary.completed, 2);
    /* B crashed at allocation and is re-placed only when the GPU is idle again; a run's wall
     * time includes its start-up. */
    assert_float_equal(r.jobs[0].end_s, 500, 1e-6);
    assert_float_equal(r.jobs[1].end_s, 500 + 200, 1e-6);
    sim_result_free(&r);
}

static void retry_cap_fails_a_task_that_never_fits(void **state)
{
    (void)state;
    sim_setup s = setup_for(POLICY_EXCLUSIVE, 1, 0);
    sim_job_spec jobs[1] = {job(0, 100, 50000, 0.5)}; /* more than the GPU has */
    sim_result r;
    carma_err err;
    assert_int_equal(sim_run(&s, jobs, 1, &r, &err), 0);
    assert_int_equal(r.summary.completed, 0);
    assert_int_equal(r.summary.failed, 1);
    assert_int_equal(r.summary.oom_crashes, 1 + s.sched.retry_cap);
    assert_true(isnan(r.summary.makespan_s));
    sim_result_free(&r);
}

static void interference_stretches_busy_pairs(void **state)
{
    (void)state;
    sim_setup s = setup_for(POLICY_OR_RR, 1, 0);
    s.sched.grace_s = 0;
    sim_job_spec jobs[2] = {job(0, 1000, 1000, 0.9), job(0, 1000, 1000, 0.9)};
    sim_result r;
    carma_err err;
    assert_int_equal(sim_run(&s, jobs, 2, &r, &err), 0);
    double speed = sim_speed(&s.params, sim_pressure(&s.params, 0.9, 0.3));
    assert_true(speed < 0.8);
    assert_float_equal(r.jobs[0].end_s, 1000 / speed, 1e-3);
    sim_result_free(&r);
    s.params.interference = false;
    assert_int_equal(sim_run(&s, jobs, 2, &r, &err), 0);
    assert_float_equal(r.jobs[0].end_s, 1000, 1e-6);
    sim_result_free(&r);
}

static void energy_and_utilization_integrate_activity(void **state)
{
    (void)state;
    sim_setup s = setup_for(POLICY_EXCLUSIVE, 2, 0);
    sim_job_spec jobs[1] = {job(0, 100, 1000, 0.5)};
    sim_result r;
    carma_err err;
    assert_int_equal(sim_run(&s, jobs, 1, &r, &err), 0);
    /* Utilization unknown: its SMACT stands in. */
    double busy_w = s.gpu->max_w * (s.params.power_busy_frac + s.params.power_util_frac * 0.5);
    assert_float_equal(r.summary.energy_j, (busy_w + s.gpu->idle_w) * 100, 1e-3); /* J */
    assert_float_equal(r.summary.gpu_util_mean, 0.25, 1e-9);
    sim_result_free(&r);
}

/* A task that fails after the last completion runs past the makespan: energy and utilization
 * are figures over the makespan and count none of it (they counted its idle wait and its
 * crashing attempts: utilization above 100 %, energy no GPU could draw in the makespan). */
static void a_failure_after_the_last_completion_is_outside_the_figures(void **state)
{
    (void)state;
    sim_setup s = setup_for(POLICY_EXCLUSIVE, 1, 0);
    /* B allocates 1000 MiB at 1000 s and grows past the GPU 200 s later, at every attempt */
    sim_job_spec jobs[2] = {job(0, 100, 1000, 0.5), job(1000, 500, 50000, 0.9)};
    jobs[1].early_mib = 1000;
    sim_result r;
    carma_err err;
    assert_int_equal(sim_run(&s, jobs, 2, &r, &err), 0);
    assert_int_equal(r.summary.completed, 1);
    assert_int_equal(r.summary.failed, 1);
    assert_true(r.jobs[1].end_s > 1200);
    assert_float_equal(r.summary.makespan_s, 100, 1e-9);
    double busy_w = s.gpu->max_w * (s.params.power_busy_frac + s.params.power_util_frac * 0.5);
    assert_float_equal(r.summary.energy_j, busy_w * 100, 1e-6);
    assert_float_equal(r.summary.gpu_util_mean, 0.5, 1e-9);
    sim_result_free(&r);
}

static void measured_startup_and_memory_ramp(void **state)
{
    (void)state;
    sim_setup s = setup_for(POLICY_OR_RR, 1, 30);
    s.sched.grace_s = 0;
    s.params.interference = false;
    s.params.mem_ramp_s = 200;
    /* A: 1000 s, 5 s measured start-up, 10 GiB early, 30 GiB from 200 s after allocation.
     * B: 25 GiB early and full, placed beside A before A grows: A's growth does not fit. */
    sim_job_spec jobs[2] = {job(0, 1000, 30720, 0.2), job(1, 300, 25600, 0.2)};
    jobs[0].early_mib = 10240;
    jobs[0].startup_s = 5;
    jobs[1].startup_s = 0;
    sim_result r;
    carma_err err;
    assert_int_equal(sim_run(&s, jobs, 2, &r, &err), 0);
    assert_int_equal(r.jobs[0].oom_crashes, 1); /* mid-run, at 205 s */
    assert_int_equal(r.jobs[1].oom_crashes, 0);
    assert_int_equal(r.summary.completed, 2);
    /* B allocated at 5 and ran alone after A crashed: done at 5 + 300. A reruns on the idle
     * GPU then: 305 + 1000. */
    assert_float_equal(r.jobs[1].end_s, 305, 1e-6);
    assert_float_equal(r.jobs[0].end_s, 1305, 1e-6);
    assert_float_equal(r.jobs[0].busy_s, 205 + 1000, 1e-6);
    sim_result_free(&r);
    /* With room for both, A grows and nothing crashes. */
    jobs[1].early_mib = jobs[1].peak_mib = 4096;
    assert_int_equal(sim_run(&s, jobs, 2, &r, &err), 0);
    assert_int_equal(r.summary.oom_crashes, 0);
    assert_float_equal(r.jobs[0].end_s, 1000, 1e-6);
    sim_result_free(&r);
}

/* Two tasks time-slice one GPU: it is busy 1 - (1 - u1)(1 - u2) of the time, and a monitor
 * reads U / (u1 + u2) times the summed activity, not the sum. */
static void shared_gpu_reads_time_sliced_activity(void **state)
{
    (void)state;
    sim_setup s = setup_for(POLICY_OR_RR, 1, 0);
    s.sched.grace_s = 0;
    s.record_timeline = true;
    sim_job_spec jobs[2] = {job(0, 100, 1000, 0.6), job(0, 100, 1000, 0.6)};
    jobs[0].util = jobs[1].util = 0.8;
    sim_result r;
    carma_err err;
    assert_int_equal(sim_run(&s, jobs, 2, &r, &err), 0);
    const sim_timeline_row *both = NULL;
    for (size_t i = 0; i < r.ntimeline; i++)
        if (r.timeline[i].ntasks == 2)
            both = &r.timeline[i];
    assert_non_null(both);
    double u = 1 - 0.2 * 0.2;
    assert_float_equal(both->util, u, 1e-12);
    assert_float_equal(both->smact, u / 1.6 * 1.2, 1e-12);
    assert_float_equal(both->power_w,
                       s.gpu->max_w * (s.params.power_busy_frac + s.params.power_util_frac * u),
                       1e-9);
    sim_result_free(&r);
}

static void impossible_jobs_are_refused(void **state)
{
    (void)state;
    sim_setup s = setup_for(POLICY_EXCLUSIVE, 1, 0);
    sim_job_spec jobs[2] = {job(0, 100, 1000, 0.5), job(5, 100, 1000, 0.5)};
    jobs[1].ngpus = 2;
    sim_result r;
    carma_err err;
    assert_int_equal(sim_run(&s, jobs, 2, &r, &err), -1);
    assert_string_equal(err.msg, "job 2 (job) needs 2 GPUs; the server has 1");
    /* from a trace: its file and the job's seq, the row a reader finds (not its position) */
    s.source = "t.csv";
    jobs[1].seq = 20;
    assert_int_equal(sim_run(&s, jobs, 2, &r, &err), -1);
    assert_string_equal(err.msg, "t.csv: seq 20 (job) needs 2 GPUs; the server has 1");
    jobs[1].ngpus = 1;
    jobs[1].runtime_s = 0;
    assert_int_equal(sim_run(&s, jobs, 2, &r, &err), -1);
    assert_string_equal(err.msg, "t.csv: seq 20 (job) has no solo runtime");
    jobs[1].runtime_s = 10;
    jobs[1].early_mib = jobs[1].peak_mib + 1;
    assert_int_equal(sim_run(&s, jobs, 2, &r, &err), -1);
    assert_string_equal(err.msg, "t.csv: seq 20 (job): early peak above its full peak");
    jobs[1].early_mib = jobs[1].peak_mib;
    jobs[1].runtime_s = 10;
    jobs[1].submit_s = -1;
    assert_int_equal(sim_run(&s, jobs, 2, &r, &err), -1);
    assert_non_null(strstr(err.msg, "t.csv: seq 20 (job): submission times"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exclusive_queues_behind_a_busy_gpu),
        cmocka_unit_test(collocation_waits_for_grace_and_window),
        cmocka_unit_test(oom_crash_goes_to_recovery_and_reruns),
        cmocka_unit_test(retry_cap_fails_a_task_that_never_fits),
        cmocka_unit_test(interference_stretches_busy_pairs),
        cmocka_unit_test(energy_and_utilization_integrate_activity),
        cmocka_unit_test(a_failure_after_the_last_completion_is_outside_the_figures),
        cmocka_unit_test(measured_startup_and_memory_ramp),
        cmocka_unit_test(shared_gpu_reads_time_sliced_activity),
        cmocka_unit_test(impossible_jobs_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
