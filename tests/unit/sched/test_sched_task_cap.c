/* test_sched_task_cap.c — max_tasks_per_gpu: a GPU that runs that many tasks takes no more
 * under CARMA's policies, horus, lucid and carma, and sched_explain says so (task_cap); carma's
 * backfill does not fill the last place under the cap on a GPU the head has reserved; 0 caps
 * nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched_fixture.h"

static sched_task ptask(uint64_t id, int ngpus, uint64_t mib, double runtime)
{
    sched_task t;
    sched_task_init(&t);
    t.id = id;
    t.ngpus = ngpus;
    mem_figures_set(&t.mem, MEM_ORACLE, mib);
    t.runtime_est_s = runtime;
    t.solo_smact = 0.1;
    t.solo_drama = 0.05;
    t.profiled_util = 0.1;
    t.lucid_class = 0;
    return t;
}

static sched *capped(policy_id p, int ngpus, int cap)
{
    sched_config cfg;
    sched_config_defaults(&cfg);
    cfg.policy = p;
    cfg.margin_mib = 512;
    cfg.max_tasks_per_gpu = cap;
    cfg.lucid_max_jobs = 8;
    cfg.lucid_class_capacity = 8;
    sched *s = sched_create(&cfg, ngpus, NULL);
    assert_non_null(s);
    return s;
}

/* Places task t now (past any grace period: its process seen long ago); returns its GPU. */
static int place_now(sched *s, sched_task *t, gpu_view *v, double now)
{
    sched_decision d;
    assert_int_equal(sched_submit(s, t, NULL), 0);
    assert_true(sched_next(s, now, v, &d));
    for (int k = 0; k < d.ngpus; k++) {
        sched_process_seen(s, t, d.gpus[k], now);
        v[d.gpus[k]] = busy_gpu(v[d.gpus[k]].free_mib - 2 * GB, 0.1, 0.05, 0.05);
    }
    return d.gpus[0];
}

/* One GPU, cap 2: two 2 GB tasks run, a third that fits by memory waits for one to end. */
static void one_policy(policy_id p)
{
    sched *s = capped(p, 1, 2);
    gpu_view v[1] = {idle_gpu()};
    sched_task a = ptask(1, 1, 2 * GB, 100), b = ptask(2, 1, 2 * GB, 100),
               c = ptask(3, 1, 2 * GB, 100);
    place_now(s, &a, v, 0);
    assert_int_equal(place_now(s, &b, v, 100), 0);
    assert_int_equal(sched_gpu_ledger(s, 0).ntasks, 2);
    assert_int_equal(sched_submit(s, &c, NULL), 0);
    sched_decision d;
    assert_false(sched_next(s, 200, v, &d));
    sched_reason r;
    sched_explain(s, &c, v, 200, &r);
    assert_int_equal(r.kind, SCHED_REASON_TASK_CAP);
    assert_int_equal(r.gpu, 0);
    sched_task_ended(s, &a, TASK_DONE, 300);
    v[0] = busy_gpu(38 * GB, 0.1, 0.05, 0.05);
    assert_true(sched_next(s, 300, v, &d));
    assert_ptr_equal(d.task, &c);
    assert_true(sched_check(s));
    sched_destroy(s);
}

static void every_policy_keeps_the_cap(void **state)
{
    (void)state;
    const policy_id sharing[] = {POLICY_OR_RR, POLICY_ORACLE_FF, POLICY_ORACLE_BF,
                                 POLICY_ORACLE_MAGM, POLICY_EST_MAGM, POLICY_HORUS, POLICY_LUCID,
                                 POLICY_CARMA};
    for (size_t i = 0; i < sizeof sharing / sizeof *sharing; i++)
        one_policy(sharing[i]);
    assert_string_equal(sched_reason_name(SCHED_REASON_TASK_CAP), "task_cap");
}

/* Two GPUs: x (30 GB, ends at 100) on GPU 0, y (5 GB, runs long) on GPU 1. The head h needs
 * 20 GB on both GPUs: GPU 1 can take it now, GPU 0 from t = 100. b (10 GB, 1000 s) fits only
 * on GPU 1 and would still run at 100: with cap 2 it would leave no place for h there. */
static void backfill_leaves_the_head_a_place(int cap, bool b_starts)
{
    sched *s = capped(POLICY_CARMA, 2, cap);
    gpu_view v[2] = {idle_gpu(), idle_gpu()};
    sched_task x = ptask(1, 1, 30 * GB, 100), y = ptask(2, 1, 5 * GB, 5000);
    sched_decision d;
    assert_int_equal(sched_submit(s, &x, NULL), 0);
    assert_true(sched_next(s, 0, v, &d));
    assert_int_equal(d.gpus[0], 0);
    v[0] = busy_gpu(10 * GB, 0.1, 0.05, 0.05);
    assert_int_equal(sched_submit(s, &y, NULL), 0);
    assert_true(sched_next(s, 0, v, &d));
    assert_int_equal(d.gpus[0], 1);
    v[1] = busy_gpu(35 * GB, 0.1, 0.05, 0.05);
    sched_task h = ptask(3, 2, 20 * GB, 2000), b = ptask(4, 1, 10 * GB, 1000);
    assert_int_equal(sched_submit(s, &h, NULL), 0);
    assert_int_equal(sched_submit(s, &b, NULL), 0);
    assert_int_equal(sched_next(s, 1, v, &d), b_starts);
    if (b_starts) {
        assert_ptr_equal(d.task, &b);
        assert_int_equal(d.gpus[0], 1);
    } else {
        sched_reason r;
        sched_explain(s, &b, v, 1, &r);
        assert_int_equal(r.kind, SCHED_REASON_RESERVED);
        assert_int_equal(r.task, 3);
    }
    assert_true(sched_check(s));
    sched_destroy(s);
}

static void carma_backfill_respects_the_cap(void **state)
{
    (void)state;
    backfill_leaves_the_head_a_place(0, true);  /* no cap: memory alone allows it */
    backfill_leaves_the_head_a_place(3, true);  /* y, b and h fit under 3 */
    backfill_leaves_the_head_a_place(2, false); /* y and b would fill GPU 1 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_policy_keeps_the_cap),
        cmocka_unit_test(carma_backfill_respects_the_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
