/* test_sched_lifecycle.c — grace state (carma-spec §5), recovery queue priority and retry cap
 * (§7), submission errors, removal and restoring state after a restart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched_fixture.h"

static void all_busy(gpu_view v[4], uint64_t free_mib)
{
    for (int i = 0; i < 4; i++)
        v[i] = busy_gpu(free_mib, 0.2, 0.1, 0.1);
}

static void grace_holds_gpu_from_launch_until_30s_after_seen(void **state)
{
    (void)state;
    gpu_view v[4];
    all_busy(v, 1000);
    v[0] = busy_gpu(30000, 0.2, 0.1, 0.1); /* the only GPU with room */
    sched *s = make_sched(POLICY_ORACLE_MAGM, 4);
    sched_task a = make_task(1, 1, 2000), b = make_task(2, 1, 2000);
    sched_submit(s, &a, NULL);
    sched_submit(s, &b, NULL);
    sched_decision d;
    assert_true(sched_next(s, 0, v, &d));
    assert_int_equal(d.gpus[0], 0);
    assert_int_equal(sched_gpu_grace(s, 0).state, GPU_LAUNCHING);
    assert_ptr_equal(sched_gpu_grace(s, 0).task, &a);
    /* Still launching long after: no second placement (start-up may take minutes). */
    assert_false(sched_next(s, 500, v, &d));
    sched_process_seen(s, &a, 0, 600);
    assert_int_equal(sched_gpu_grace(s, 0).state, GPU_GRACE);
    assert_false(sched_next(s, 629.9, v, &d));
    assert_true(sched_next(s, 630, v, &d));
    assert_ptr_equal(d.task, &b);
    sched_destroy(s);
}

static void ending_task_frees_its_gpus_at_once(void **state)
{
    (void)state;
    gpu_view v[4];
    all_busy(v, 30000);
    sched *s = make_sched(POLICY_ORACLE_FF, 4);
    sched_task a = make_task(1, 2, 1000), b = make_task(2, 1, 1000);
    sched_submit(s, &a, NULL);
    sched_decision d;
    assert_true(sched_next(s, 0, v, &d)); /* GPUs 0 and 1 */
    sched_submit(s, &b, NULL);
    assert_true(sched_next(s, 0, v, &d)); /* GPU 2 */
    assert_int_equal(d.gpus[0], 2);
    assert_int_equal(sched_task_ended(s, &a, TASK_FAILED, 5), SCHED_END_FINAL);
    assert_int_equal(sched_gpu_grace(s, 0).state, GPU_AVAILABLE);
    assert_int_equal(sched_gpu_grace(s, 1).state, GPU_AVAILABLE);
    assert_int_equal(sched_gpu_grace(s, 2).state, GPU_LAUNCHING); /* b's hold stays */
    assert_int_equal(a.where, SCHED_NOWHERE);
    sched_destroy(s);
}

static void seen_by_another_task_does_not_touch_the_hold(void **state)
{
    (void)state;
    gpu_view v[4];
    all_busy(v, 30000);
    sched *s = make_sched(POLICY_ORACLE_FF, 4);
    sched_task a = make_task(1, 1, 1000), other = make_task(9, 1, 1000);
    sched_submit(s, &a, NULL);
    sched_decision d;
    assert_true(sched_next(s, 0, v, &d));
    sched_process_seen(s, &other, 0, 1);
    assert_int_equal(sched_gpu_grace(s, 0).state, GPU_LAUNCHING);
    sched_process_seen(s, &a, 7, 1); /* no such GPU: ignored */
    sched_destroy(s);
}

static void oom_goes_to_recovery_which_has_priority_and_blocks(void **state)
{
    (void)state;
    gpu_view v[4];
    all_busy(v, 30000);
    sched *s = make_sched(POLICY_ORACLE_MAGM, 4);
    sched_task a = make_task(1, 1, 2000), b = make_task(2, 1, 2000);
    sched_submit(s, &a, NULL);
    sched_decision d;
    assert_true(sched_next(s, 0, v, &d));
    sched_submit(s, &b, NULL);
    assert_int_equal(sched_task_ended(s, &a, TASK_OOM, 10), SCHED_END_RETRY);
    assert_int_equal(a.where, SCHED_IN_RECOVERY);
    assert_int_equal(sched_recovery_len(s), 1);
    /* b could be collocated, but the recovered a waits for an idle GPU and blocks b. */
    assert_false(sched_next(s, 10, v, &d));
    v[2] = idle_gpu();
    assert_true(sched_next(s, 11, v, &d));
    assert_ptr_equal(d.task, &a);
    assert_true(d.from_recovery);
    assert_int_equal(d.rule, PLACE_EXCLUSIVE_FIRST);
    assert_int_equal(d.gpus[0], 2);
    assert_int_equal(a.attempts, 2);
    /* The queue moves again. */
    assert_true(sched_next(s, 11, v, &d));
    assert_ptr_equal(d.task, &b);
    sched_destroy(s);
}

static void retry_cap_bounds_relaunches(void **state)
{
    (void)state;
    gpu_view v[4] = {idle_gpu(), idle_gpu(), idle_gpu(), idle_gpu()};
    sched_config cfg;
    sched_config_defaults(&cfg);
    cfg.policy = POLICY_EXCLUSIVE; /* CARMA's blind retries (carma learns: test_sched_carma) */
    cfg.retry_cap = 2;
    sched *s = sched_create(&cfg, 4, NULL);
    sched_task t = make_task(1, 1, 1000);
    sched_submit(s, &t, NULL);
    sched_decision d;
    for (int attempt = 1; attempt <= 3; attempt++) {
        assert_true(sched_next(s, attempt, v, &d));
        assert_int_equal(t.attempts, attempt);
        sched_end end = sched_task_ended(s, &t, TASK_OOM, attempt);
        assert_int_equal(end, attempt < 3 ? SCHED_END_RETRY : SCHED_END_FINAL);
    }
    assert_int_equal(t.where, SCHED_NOWHERE);
    assert_int_equal(sched_recovery_len(s), 0);

    /* A per-task cap overrides the config: 0 means one launch only. */
    sched_task u = make_task(2, 1, 1000);
    u.max_retries = 0;
    sched_submit(s, &u, NULL);
    assert_true(sched_next(s, 10, v, &d));
    assert_int_equal(sched_task_ended(s, &u, TASK_OOM, 11), SCHED_END_FINAL);
    sched_destroy(s);
}

static void non_oom_endings_are_final(void **state)
{
    (void)state;
    gpu_view v[4] = {idle_gpu(), idle_gpu(), idle_gpu(), idle_gpu()};
    sched *s = make_sched(POLICY_EXCLUSIVE, 4);
    task_outcome outcomes[] = {TASK_DONE, TASK_FAILED, TASK_CANCELLED};
    for (int i = 0; i < 3; i++) {
        sched_task t = make_task((uint64_t)i, 1, 1000);
        sched_decision d;
        sched_submit(s, &t, NULL);
        assert_true(sched_next(s, 0, v, &d));
        assert_int_equal(sched_task_ended(s, &t, outcomes[i], 1), SCHED_END_FINAL);
        assert_int_equal(sched_recovery_len(s), 0);
    }
    sched_destroy(s);
}

static void submission_errors_are_reported(void **state)
{
    (void)state;
    sched *s = make_sched(POLICY_EXCLUSIVE, 4);
    carma_err err;
    sched_task t = make_task(1, 0, 1000);
    assert_int_equal(sched_submit(s, &t, &err), -1);
    assert_non_null(strstr(err.msg, "0 GPUs"));
    t.ngpus = 5;
    assert_int_equal(sched_submit(s, &t, &err), -1);
    assert_non_null(strstr(err.msg, "server has 4"));
    t.ngpus = 1;
    assert_int_equal(sched_submit(s, &t, &err), 0);
    assert_int_equal(sched_submit(s, &t, &err), -1);
    assert_non_null(strstr(err.msg, "already"));
    sched_destroy(s);

    sched_config cfg;
    sched_config_defaults(&cfg);
    assert_null(sched_create(&cfg, 0, &err));
    cfg.thr_smact = 1.5;
    assert_null(sched_create(&cfg, 4, &err));
    assert_non_null(strstr(err.msg, "threshold"));
}

static void queued_tasks_can_be_removed_keeping_order(void **state)
{
    (void)state;
    sched *s = make_sched(POLICY_EXCLUSIVE, 4);
    sched_task t[3] = {make_task(1, 1, 1), make_task(2, 1, 1), make_task(3, 1, 1)};
    for (int i = 0; i < 3; i++)
        sched_submit(s, &t[i], NULL);
    assert_true(sched_remove_queued(s, &t[1]));
    assert_false(sched_remove_queued(s, &t[1]));
    assert_ptr_equal(sched_main_head(s), &t[0]);
    assert_ptr_equal(t[0].qnext, &t[2]);
    assert_int_equal(sched_main_len(s), 2);
    assert_true(sched_remove_queued(s, &t[0]));
    assert_true(sched_remove_queued(s, &t[2]));
    assert_null(sched_main_head(s));
    sched_destroy(s);
}

static void restored_running_tasks_hold_their_gpus(void **state)
{
    (void)state;
    gpu_view v[4];
    all_busy(v, 30000);
    sched *s = make_sched(POLICY_ORACLE_FF, 4);
    sched_task r = make_task(1, 2, 1000), q = make_task(2, 1, 1000);
    int gpus[2] = {0, 1};
    carma_err err;
    assert_int_equal(sched_restore_running(s, &r, gpus, 2, GPU_GRACE, 100, &err), 0);
    assert_int_equal(sched_gpu_grace(s, 0).state, GPU_GRACE);
    int bad[1] = {7};
    sched_task x = make_task(3, 1, 1);
    assert_int_equal(sched_restore_running(s, &x, bad, 1, GPU_LAUNCHING, 0, &err), -1);
    sched_submit(s, &q, NULL);
    sched_decision d;
    assert_true(sched_next(s, 110, v, &d));
    assert_int_equal(d.gpus[0], 2);
    sched_task_ended(s, &q, TASK_DONE, 111);
    assert_int_equal(sched_gpu_grace(s, 1).state, GPU_GRACE);
    sched_advance(s, 130);
    assert_int_equal(sched_gpu_grace(s, 1).state, GPU_AVAILABLE);
    assert_int_equal(sched_task_ended(s, &r, TASK_DONE, 200), SCHED_END_FINAL);
    sched_destroy(s);
}

static void config_names_round_trip(void **state)
{
    (void)state;
    for (int p = 0; p < POLICY_COUNT; p++) {
        policy_id back;
        assert_int_equal(policy_from_name(policy_name((policy_id)p), &back), 0);
        assert_int_equal(back, p);
    }
    policy_id p;
    assert_int_equal(policy_from_name("oracle-MAGM", &p), 0);
    assert_int_equal(p, POLICY_ORACLE_MAGM);
    assert_int_equal(policy_from_name("round-robin", &p), -1); /* no silent fallback */
    mem_source m;
    assert_int_equal(mem_source_from_estimator("GPUMemNet", &m), 0);
    assert_int_equal(m, MEM_GPUMEMNET);
    assert_int_equal(mem_source_from_estimator("None", &m), 0);
    assert_int_equal(m, MEM_ORACLE);
    assert_int_equal(mem_source_from_estimator("bogus", &m), -1);
}

/* sched_check sees a broken invariant (it is asserted after every operation in debug builds). */
static void check_catches_broken_invariants(void **state)
{
    (void)state;
    gpu_view v[4];
    all_busy(v, 1000);
    v[0] = busy_gpu(30000, 0.2, 0.1, 0.1);
    sched *s = make_sched(POLICY_ORACLE_MAGM, 4);
    sched_task a = make_task(1, 1, 2000), b = make_task(2, 1, 2000), c = make_task(3, 1, 2000);
    sched_submit(s, &a, NULL);
    sched_submit(s, &b, NULL);
    sched_submit(s, &c, NULL);
    assert_true(sched_check(s));
    b.where = SCHED_IN_RECOVERY; /* a queued task that says it is elsewhere */
    assert_false(sched_check(s));
    b.where = SCHED_IN_MAIN;
    sched_task *saved = c.qprev;
    c.qprev = &a; /* a broken back link */
    assert_false(sched_check(s));
    c.qprev = saved;
    sched_decision d;
    assert_true(sched_next(s, 0, v, &d)); /* a runs on GPU 0, which it holds (launching) */
    assert_true(sched_check(s));
    a.where = SCHED_NOWHERE; /* a GPU held by a task that is not running */
    assert_false(sched_check(s));
    a.where = SCHED_RUNNING;
    assert_true(sched_check(s));
    sched_destroy(s);
}

/* Found by fuzz/fuzz_sched.c: a GPU listed twice (a damaged state file's GPU numbers) was taken,
 * linking the task twice into that GPU's ledger. */
static void restore_refuses_a_gpu_listed_twice(void **state)
{
    (void)state;
    sched *s = make_sched(POLICY_CARMA, 2);
    sched_task r = make_task(1, 2, 1000);
    int twice[2] = {1, 1};
    carma_err err;
    assert_int_equal(sched_restore_running(s, &r, twice, 2, GPU_LAUNCHING, 0, &err), -1);
    assert_int_equal(r.where, SCHED_NOWHERE);
    assert_int_equal(sched_gpu_ledger(s, 1).ntasks, 0);
    assert_int_equal(sched_gpu_grace(s, 1).state, GPU_AVAILABLE);
    assert_true(sched_check(s));
    int both[2] = {1, 0};
    assert_int_equal(sched_restore_running(s, &r, both, 2, GPU_LAUNCHING, 0, &err), 0);
    assert_int_equal(sched_task_ended(s, &r, TASK_DONE, 1), SCHED_END_FINAL);
    assert_true(sched_check(s));
    sched_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(grace_holds_gpu_from_launch_until_30s_after_seen),
        cmocka_unit_test(ending_task_frees_its_gpus_at_once),
        cmocka_unit_test(seen_by_another_task_does_not_touch_the_hold),
        cmocka_unit_test(oom_goes_to_recovery_which_has_priority_and_blocks),
        cmocka_unit_test(retry_cap_bounds_relaunches),
        cmocka_unit_test(non_oom_endings_are_final),
        cmocka_unit_test(submission_errors_are_reported),
        cmocka_unit_test(queued_tasks_can_be_removed_keeping_order),
        cmocka_unit_test(restored_running_tasks_hold_their_gpus),
        cmocka_unit_test(restore_refuses_a_gpu_listed_twice),
        cmocka_unit_test(config_names_round_trip),
        cmocka_unit_test(check_catches_broken_invariants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
