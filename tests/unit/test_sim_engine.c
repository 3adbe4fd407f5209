/* test_sim_engine.c — the event engine driving the scheduling core: queueing, grace-delayed
 * collocation, out-of-memory crash and recovery, interference stretch, energy and utilization. */
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
    j.peak_mib = peak;
    mem_figures_set(&j.mem, MEM_ORACLE, peak);
    j.runtime_s = runtime;
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
    /* Summed solo SMACT 0.6 is below the knee: both run at speed a while together. */
    double a = s.params.interf_a;
    double done_a_while_shared_until_b = 0; /* A runs alone 10..50 */
    double left = 1000 - 40 - done_a_while_shared_until_b;
    assert_float_equal(r.jobs[0].end_s, 50 + left / a, 1e-6);
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
    /* B crashed at allocation and is re-placed only when the GPU is idle again. */
    assert_float_equal(r.jobs[0].end_s, 505, 1e-6);
    assert_float_equal(r.jobs[1].end_s, 505 + 5 + 200, 1e-6);
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
    double speed = sim_speed(&s.params, 1.8, 2);
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
    double busy_w = s.gpu->idle_w + (s.gpu->max_w - s.gpu->idle_w) * 0.5;
    assert_float_equal(r.summary.energy_mj, (busy_w + s.gpu->idle_w) * 100 / 1e6, 1e-9);
    assert_float_equal(r.summary.gpu_util_mean, 0.25, 1e-9);
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
    assert_non_null(strstr(err.msg, "needs 2 GPUs"));
    jobs[1].ngpus = 1;
    jobs[1].runtime_s = 0;
    assert_int_equal(sim_run(&s, jobs, 2, &r, &err), -1);
    assert_non_null(strstr(err.msg, "no solo runtime"));
    jobs[1].runtime_s = 10;
    jobs[1].submit_s = -1;
    assert_int_equal(sim_run(&s, jobs, 2, &r, &err), -1);
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
        cmocka_unit_test(impossible_jobs_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
