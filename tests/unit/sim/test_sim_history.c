/* test_sim_history.c — sim_history = on: a task is planned with the run time of an earlier run
 * of its task file only when that run ended done with its GPUs to itself (not beside another
 * task, and with none placed beside it later), as the daemon's run history works; off: with
 * the catalog's. And the history's grouping and its solo profile (start-up reads idle), and
 * identical jobs learning from one's out-of-memory crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "sim/engine.h"
#include "sim/sim_history.h"

static sim_job_spec job(const char *name, double submit, double runtime, uint64_t peak)
{
    sim_job_spec j;
    memset(&j, 0, sizeof j);
    j.name = name;
    j.submit_s = submit;
    j.ngpus = 1;
    j.early_mib = j.peak_mib = peak;
    mem_figures_set(&j.mem, MEM_ORACLE, peak);
    j.runtime_s = runtime;
    j.startup_s = 0;
    j.util = 0.5;
    j.lucid_class = 1;
    j.smact = 0.4;
    j.smocc = 0.1;
    j.drama = 0.2;
    return j;
}

static void only_solo_done_runs_are_known(void **state)
{
    (void)state;
    sim_setup s;
    memset(&s, 0, sizeof s);
    sched_config_defaults(&s.sched);
    s.sched.policy = POLICY_CARMA;
    sim_params_defaults(&s.params);
    int n;
    carma_err err;
    assert_int_equal(gpu_spec_parse("A100-40GB", NULL, &n, &s.gpu, &err), 0);
    s.ngpus = 1;
    sim_job_spec jobs[] = {
        job("a", 0, 100, 30000),     /* 0: alone throughout */
        job("a", 200, 100, 30000),   /* 1: planned with 0's run */
        job("b", 400, 100, 10000),   /* 2, 3: side by side */
        job("c", 400, 100, 10000),
        job("d", 1000, 100, 10000),  /* 4: alone when placed, joined by 5 */
        job("e", 1010, 30, 10000),
        job("b", 2000, 100, 10000),  /* 6..8: nothing to plan with */
        job("c", 2300, 100, 10000),
        job("d", 2600, 100, 10000),
        job("e", 2900, 30, 10000),   /* 9: 5 ran beside 4 */
    };
    size_t nj = sizeof jobs / sizeof jobs[0];
    sim_result r;
    s.params.history = true;
    assert_int_equal(sim_run(&s, jobs, nj, &r, &err), 0);
    assert_true(isnan(r.jobs[0].runtime_est_s));  /* the first run of a file: none */
    assert_float_equal(r.jobs[1].runtime_est_s, 100, 1e-9);
    /* they did share the GPU: 3 started before 2 ended, 5 while 4 ran */
    assert_true(r.jobs[3].first_start_s < r.jobs[2].end_s);
    assert_true(r.jobs[5].first_start_s > r.jobs[4].first_start_s &&
                r.jobs[5].first_start_s < r.jobs[4].end_s);
    for (size_t i = 2; i < nj; i++)
        assert_true(isnan(r.jobs[i].runtime_est_s));
    assert_int_equal(r.summary.completed, nj);
    sim_result_free(&r);
    s.params.history = false; /* the catalog's figure, for every task */
    assert_int_equal(sim_run(&s, jobs, nj, &r, &err), 0);
    for (size_t i = 0; i < nj; i++)
        assert_float_equal(r.jobs[i].runtime_est_s, jobs[i].runtime_s, 1e-9);
    sim_result_free(&r);
}

static void history_groups_by_task_file(void **state)
{
    (void)state;
    sim_job_spec jobs[] = {job("b", 0, 10, 1), job("a", 0, 10, 1), job(NULL, 0, 10, 1),
                           job("b", 0, 10, 1), job(NULL, 0, 10, 1)};
    jobs[0].startup_s = 25;
    sim_history h;
    carma_err err;
    assert_int_equal(sim_history_init(&h, jobs, 5, &err), 0);
    assert_int_equal(h.file[0], h.file[3]);
    assert_int_not_equal(h.file[0], h.file[1]);
    assert_int_not_equal(h.file[2], h.file[4]); /* no name: a file of its own */
    sched_task t;
    sched_task_init(&t);
    sim_history_fill(&h, 3, &t);
    assert_true(isnan(t.runtime_est_s) && isnan(t.solo_smact) && isnan(t.profiled_util));
    sim_history_record(&h, 0, &jobs[0], 100, 25); /* a quarter of it in start-up */
    sim_history_fill(&h, 3, &t);
    assert_float_equal(t.runtime_est_s, 100, 1e-12);
    assert_float_equal(t.solo_smact, 0.4 * 0.75, 1e-12);
    assert_float_equal(t.solo_drama, 0.2 * 0.75, 1e-12);
    assert_float_equal(t.profiled_util, 0.5 * 0.75, 1e-12);
    sim_history_fill(&h, 1, &t);
    assert_true(isnan(t.runtime_est_s));
    sim_history_free(&h);
}

/* An out-of-memory crash teaches its task file's other jobs what it was seen to need
 * (sim_learn.c, as the daemon's reap.c): the one queued meanwhile and the one arriving later
 * are placed by it, and neither crashes. Without it each would crash once. */
static void identical_jobs_learn_from_a_crash(void **state)
{
    (void)state;
    sim_setup s;
    memset(&s, 0, sizeof s);
    sched_config_defaults(&s.sched);
    s.sched.policy = POLICY_CARMA;
    s.sched.max_tasks_per_gpu = 2; /* the second "big" waits while s and the first run */
    sim_params_defaults(&s.params);
    int n;
    carma_err err;
    assert_int_equal(gpu_spec_parse("A100-40GB", NULL, &n, &s.gpu, &err), 0);
    s.ngpus = 1;
    sim_job_spec jobs[] = {job("s", 0, 5000, 15000), job("big", 10, 1000, 30000),
                           job("big", 20, 1000, 30000), job("s", 1500, 5000, 15000),
                           job("big", 2000, 1000, 30000)};
    for (int k = 0; k < 3; k++) { /* the "big" ones, told 5000 MiB: they reach 30000 */
        sim_job_spec *b = &jobs[(int[]){1, 2, 4}[k]];
        b->early_mib = 1000;
        mem_figures_set(&b->mem, MEM_ORACLE, 5000);
    }
    sim_result r;
    assert_int_equal(sim_run(&s, jobs, 5, &r, &err), 0);
    assert_int_equal(r.jobs[1].oom_crashes, 1); /* the first learns the hard way */
    assert_int_equal(r.jobs[2].oom_crashes, 0); /* queued then: taught */
    assert_int_equal(r.jobs[4].oom_crashes, 0); /* arrived later: taught */
    assert_int_equal(r.summary.completed, 5);
    sim_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(only_solo_done_runs_are_known),
        cmocka_unit_test(history_groups_by_task_file),
        cmocka_unit_test(identical_jobs_learn_from_a_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
