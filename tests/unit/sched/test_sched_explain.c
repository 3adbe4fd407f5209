/* test_sched_explain.c — sched_explain: the reason a queued task waits, for CARMA's policies
 * (idle GPUs, memory, the gate, grace, behind the head) and for carma (memory by its ledger,
 * no figure, interference, the head's backfill reservation or its skip count, behind the head
 * without backfill); a recovered head, horus's grace and budget;
 * and that explaining places nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched_fixture.h"

static sched_task ctask(uint64_t id, int ngpus, uint64_t mib, double runtime, double smact,
                        double drama)
{
    sched_task t;
    sched_task_init(&t);
    t.id = id;
    t.ngpus = ngpus;
    if (mib)
        mem_figures_set(&t.mem, MEM_ORACLE, mib);
    t.runtime_est_s = runtime;
    t.solo_smact = smact;
    t.solo_drama = drama;
    return t;
}

static sched *with_policy(policy_id p, int ngpus, bool backfill)
{
    sched_config cfg;
    sched_config_defaults(&cfg);
    cfg.policy = p;
    cfg.margin_mib = 512;
    cfg.carma_backfill = backfill;
    sched *s = sched_create(&cfg, ngpus, NULL);
    assert_non_null(s);
    return s;
}

static sched_reason explain(const sched *s, const sched_task *t, const gpu_view *v, double now)
{
    sched_reason r;
    sched_explain(s, t, v, now, &r);
    return r;
}

static void exclusive_waits_for_idle_gpus_and_behind_the_head(void **state)
{
    (void)state;
    gpu_view v[2] = {busy_gpu(30 * GB, 0.1, 0.1, 0.1), busy_gpu(30 * GB, 0.1, 0.1, 0.1)};
    sched *s = with_policy(POLICY_EXCLUSIVE, 2, false);
    sched_task a = ctask(1, 1, GB, NAN, NAN, NAN), b = ctask(2, 1, GB, NAN, NAN, NAN);
    sched_submit(s, &a, NULL);
    sched_submit(s, &b, NULL);
    sched_reason r = explain(s, &a, v, 0);
    assert_int_equal(r.kind, SCHED_REASON_IDLE_GPUS);
    assert_int_equal(r.have, 0);
    assert_int_equal(r.ngpus, 1);
    r = explain(s, &b, v, 0);
    assert_int_equal(r.kind, SCHED_REASON_BEHIND);
    assert_int_equal(r.task, 1);
    v[1] = idle_gpu();
    assert_int_equal(explain(s, &a, v, 0).kind, SCHED_REASON_STARTING);
    assert_int_equal(sched_main_len(s), 2); /* nothing was placed */
    assert_string_equal(sched_reason_name(SCHED_REASON_IDLE_GPUS), "idle_gpus");
    sched_destroy(s);
}

static void oracle_memory_gate_and_grace(void **state)
{
    (void)state;
    gpu_view v[2] = {busy_gpu(5 * GB, 0.1, 0.1, 0.1), busy_gpu(10 * GB, 0.1, 0.1, 0.1)};
    sched *s = with_policy(POLICY_ORACLE_MAGM, 2, false);
    sched_task a = ctask(1, 1, 30 * GB, NAN, NAN, NAN);
    sched_submit(s, &a, NULL);
    sched_reason r = explain(s, &a, v, 0);
    assert_int_equal(r.kind, SCHED_REASON_MEMORY);
    assert_int_equal(r.need_mib, 30 * GB + 512);
    assert_int_equal(r.most_mib, 10 * GB - 512);
    assert_int_equal(r.gpu, 1);
    /* room enough, but GPU 1 is too busy: the gate */
    v[1] = busy_gpu(39 * GB, 0.9, 0.6, 0.1);
    r = explain(s, &a, v, 0);
    assert_int_equal(r.kind, SCHED_REASON_GATE);
    assert_int_equal(r.gpu, 1);
    /* a task placed on GPU 1 holds it while it launches: grace */
    sched_task b = ctask(2, 1, 2 * GB, NAN, NAN, NAN);
    sched_remove_queued(s, &a);
    v[1] = idle_gpu();
    sched_submit(s, &b, NULL);
    sched_decision d;
    assert_true(sched_next(s, 0, v, &d));
    assert_int_equal(d.gpus[0], 1);
    v[1] = busy_gpu(37 * GB, 0.1, 0.1, 0.1);
    sched_task c = ctask(3, 1, 20 * GB, NAN, NAN, NAN);
    sched_submit(s, &c, NULL);
    r = explain(s, &c, v, 1);
    assert_int_equal(r.kind, SCHED_REASON_GRACE);
    assert_int_equal(r.gpu, 1);
    sched_destroy(s);
}

/* Two GPUs, each running a 30 GB task (ends at 100 and 200). */
static void two_busy(sched *s, gpu_view *v, sched_task *a, sched_task *c)
{
    sched_decision d;
    v[0] = idle_gpu();
    v[1] = idle_gpu();
    sched_submit(s, a, NULL);
    assert_true(sched_next(s, 0, v, &d));
    v[0] = busy_gpu(10 * GB, 0.1, 0.05, 0.05);
    sched_submit(s, c, NULL);
    assert_true(sched_next(s, 0, v, &d));
    v[1] = busy_gpu(10 * GB, 0.1, 0.05, 0.05);
}

static void carma_memory_and_backfill_reservation(void **state)
{
    (void)state;
    gpu_view v[2];
    sched *s = with_policy(POLICY_CARMA, 2, true);
    sched_task a = ctask(1, 1, 30 * GB, 100, 0.1, 0.05), c = ctask(2, 1, 30 * GB, 200, 0.1, 0.05);
    two_busy(s, v, &a, &c);
    sched_task h = ctask(3, 2, 35 * GB, 1000, 0.1, 0.05), b = ctask(4, 1, 8 * GB, 1000, 0.1, 0.05);
    sched_submit(s, &h, NULL);
    sched_submit(s, &b, NULL);
    sched_reason r = explain(s, &h, v, 0);
    assert_int_equal(r.kind, SCHED_REASON_MEMORY);
    assert_int_equal(r.need_mib, 35 * GB + 512);
    assert_int_equal(r.most_mib, 9 * GB); /* the ledger: 40 GB - 512 - (30 GB + 512) */
    /* b fits now, but would still hold the GPUs the head has reserved from t = 200 */
    r = explain(s, &b, v, 0);
    assert_int_equal(r.kind, SCHED_REASON_RESERVED);
    assert_int_equal(r.task, 3);
    assert_float_equal(r.until, 200, 1e-6);
    /* and sched_next agrees: nothing starts */
    sched_decision d;
    assert_false(sched_next(s, 0, v, &d));
    sched_destroy(s);
}

static void carma_without_backfill_is_behind_the_head(void **state)
{
    (void)state;
    gpu_view v[2];
    sched *s = with_policy(POLICY_CARMA, 2, false);
    sched_task a = ctask(1, 1, 30 * GB, 100, 0.1, 0.05), c = ctask(2, 1, 30 * GB, 200, 0.1, 0.05);
    two_busy(s, v, &a, &c);
    sched_task h = ctask(3, 2, 35 * GB, 1000, 0.1, 0.05), b = ctask(4, 1, 8 * GB, 10, 0.1, 0.05);
    sched_submit(s, &h, NULL);
    sched_submit(s, &b, NULL);
    sched_reason r = explain(s, &b, v, 0);
    assert_int_equal(r.kind, SCHED_REASON_BEHIND);
    assert_int_equal(r.task, 3);
    sched_destroy(s);
}

static void carma_no_figure_and_interference(void **state)
{
    (void)state;
    gpu_view v[1] = {idle_gpu()};
    sched *s = with_policy(POLICY_CARMA, 1, true);
    sched_task a = ctask(1, 1, 10 * GB, 100, 0.95, 0.20);
    sched_submit(s, &a, NULL);
    sched_decision d;
    assert_true(sched_next(s, 0, v, &d));
    v[0] = busy_gpu(29 * GB, 0.95, 0.5, 0.2);
    sched_task heavy = ctask(2, 1, 5 * GB, 100, 0.95, 0.20);
    sched_task nofig = ctask(3, 1, 0, 100, 0.1, 0.05);
    sched_submit(s, &heavy, NULL);
    sched_submit(s, &nofig, NULL);
    sched_reason r = explain(s, &heavy, v, 0);
    assert_int_equal(r.kind, SCHED_REASON_INTERFERENCE);
    assert_int_equal(r.gpu, 0);
    r = explain(s, &nofig, v, 0);
    assert_int_equal(r.kind, SCHED_REASON_IDLE_GPUS);
    assert_int_equal(r.have, 0);
    /* a running task has no reason */
    assert_int_equal(explain(s, &a, v, 0).kind, SCHED_REASON_NONE);
    sched_destroy(s);
}

static void recovery_first_and_horus_budget(void **state)
{
    (void)state;
    gpu_view v[1] = {busy_gpu(30 * GB, 0.1, 0.1, 0.1)};
    sched *s = with_policy(POLICY_ORACLE_MAGM, 1, false);
    sched_task r = ctask(1, 1, GB, NAN, NAN, NAN), m = ctask(2, 1, GB, NAN, NAN, NAN);
    sched_submit_recovery(s, &r, NULL);
    sched_submit(s, &m, NULL);
    sched_reason why = explain(s, &r, v, 0); /* a recovered task takes idle GPUs only */
    assert_int_equal(why.kind, SCHED_REASON_IDLE_GPUS);
    why = explain(s, &m, v, 0);
    assert_int_equal(why.kind, SCHED_REASON_BEHIND);
    assert_int_equal(why.task, 1);
    sched_destroy(s);

    s = with_policy(POLICY_HORUS, 1, false);
    gpu_view idle[1] = {idle_gpu()};
    sched_task a = ctask(3, 1, GB, NAN, NAN, NAN), b = ctask(4, 1, GB, NAN, NAN, NAN);
    a.profiled_util = 0.8;
    b.profiled_util = 0.5;
    sched_submit(s, &a, NULL);
    sched_decision d;
    assert_true(sched_next(s, 0, idle, &d));
    sched_process_seen(s, &a, 0, 0);
    sched_submit(s, &b, NULL);
    assert_int_equal(explain(s, &b, v, 1).kind, SCHED_REASON_GRACE);
    /* past the grace period, 0.8 + 0.5 is over horus's budget of 1 */
    assert_int_equal(explain(s, &b, v, 100).kind, SCHED_REASON_LEDGER);
    b.profiled_util = NAN;
    assert_int_equal(explain(s, &b, v, 100).kind, SCHED_REASON_NO_PROFILE);
    b.profiled_util = 0.1;
    assert_int_equal(explain(s, &b, v, 100).kind, SCHED_REASON_STARTING);
    sched_destroy(s);
}

static void carma_skip_count_lets_it_pass(void **state)
{
    (void)state;
    gpu_view v[2];
    sched *s = with_policy(POLICY_CARMA, 2, true);
    sched_task a = ctask(1, 1, 30 * GB, 100, 0.1, 0.05), c = ctask(2, 1, 30 * GB, 200, 0.1, 0.05);
    two_busy(s, v, &a, &c);
    /* no runtime estimate: backfill cannot judge it, and passes the head on its skip count */
    sched_task h = ctask(3, 2, 35 * GB, 1000, 0.1, 0.05), b = ctask(4, 1, 8 * GB, NAN, 0.1, 0.05);
    sched_submit(s, &h, NULL);
    sched_submit(s, &b, NULL);
    assert_int_equal(explain(s, &b, v, 0).kind, SCHED_REASON_STARTING);
    sched_decision d;
    assert_int_equal(explain(s, &h, v, 0).passed, 0);
    assert_true(sched_next(s, 0, v, &d));
    assert_int_equal(d.task->id, 4);
    assert_int_equal(explain(s, &h, v, 0).passed, 1); /* the head says it was passed */
    sched_destroy(s);
}

/* Found by fuzz/fuzz_sched.c: the head's reservation judged a learned figure against the GPUs'
 * memory of the last sched_next's views, not of the views explained with, so after a failed
 * reading (total 0) explain said "starting" for a task sched_next then held back. */
static void carma_reservation_reads_the_views_explained_with(void **state)
{
    (void)state;
    sched *s = with_policy(POLICY_CARMA, 2, true);
    sched_task h = ctask(1, 2, 0, NAN, 0.1, 0.05), b = ctask(2, 1, 0, 100, 0.1, 0.05);
    gpu_view v[2] = {idle_gpu(), idle_gpu()};
    sched_decision d;
    sched_submit(s, &h, NULL);
    assert_true(sched_next(s, 0, v, &d));
    sched_oom_seen seen = {true, 10 * GB}; /* learns 10 GB: fits either GPU */
    assert_int_equal(sched_task_oom(s, &h, &seen, 1), SCHED_END_RETRY);
    sched_submit(s, &b, NULL); /* no figure: idle GPUs only */
    gpu_view failed = {0, 0, false, NAN, NAN, NAN, false}; /* memory reading failed */
    gpu_view unread[2] = {failed, failed};
    assert_false(sched_next(s, 2, unread, &d));
    /* GPU 1 busy (someone else's), memory unknown; GPU 0 idle: h is reserved both, now */
    v[1] = busy_gpu(0, NAN, NAN, NAN);
    v[1].free_known = false;
    sched_reason why = explain(s, &b, v, 3);
    assert_int_equal(why.kind, SCHED_REASON_RESERVED);
    assert_int_equal(why.task, 1);
    assert_false(sched_next(s, 3, v, &d));
    sched_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exclusive_waits_for_idle_gpus_and_behind_the_head),
        cmocka_unit_test(oracle_memory_gate_and_grace),
        cmocka_unit_test(carma_memory_and_backfill_reservation),
        cmocka_unit_test(carma_without_backfill_is_behind_the_head),
        cmocka_unit_test(carma_no_figure_and_interference),
        cmocka_unit_test(recovery_first_and_horus_budget),
        cmocka_unit_test(carma_skip_count_lets_it_pass),
        cmocka_unit_test(carma_reservation_reads_the_views_explained_with),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
