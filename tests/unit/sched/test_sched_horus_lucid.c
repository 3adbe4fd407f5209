/* test_sched_horus_lucid.c — AEGIS's horus and lucid baselines and the per-GPU ledger they place
 * by: budgets, caps, sort orders, unknown figures, the ledger's bookkeeping through placements,
 * restores and endings, and the rules every policy keeps (exclusive-first, FIFO, recovery). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched_fixture.h"

#define NO_FIGURE UINT64_MAX

static sched_task task_of(uint64_t id, int ngpus, double util, int lucid_class, uint64_t oracle)
{
    sched_task t;
    sched_task_init(&t);
    t.id = id;
    t.ngpus = ngpus;
    t.profiled_util = util;
    t.lucid_class = lucid_class;
    if (oracle != NO_FIGURE)
        mem_figures_set(&t.mem, MEM_ORACLE, oracle);
    return t;
}

/* Four busy GPUs (none idle) whose telemetry would fail every gate and memory filter: horus
 * and lucid must not look at it. */
static void hostile_views(gpu_view v[4])
{
    for (int i = 0; i < 4; i++) {
        v[i] = busy_gpu(0, 0.99, 0.99, 0.99);
        v[i].free_known = i % 2 == 0;
    }
}

/* A running task on one GPU, restored without a grace hold so the GPU stays available. */
static void put_on(sched *s, sched_task *t, int gpu)
{
    assert_int_equal(sched_restore_running(s, t, &gpu, 1, GPU_AVAILABLE, 0, NULL), 0);
}

/* Submits t and returns the first GPU it was placed on, or -1. */
static int place(sched *s, sched_task *t, const gpu_view *v, sched_decision *d)
{
    sched_decision local;
    if (!d)
        d = &local;
    assert_int_equal(sched_submit(s, t, NULL), 0);
    if (!sched_next(s, 0, v, d)) {
        assert_true(sched_remove_queued(s, t));
        return -1;
    }
    return d->gpus[0];
}

static void assert_ledger_empty(const sched *s)
{
    for (int g = 0; g < sched_ngpus(s); g++) {
        sched_gpu_load l = sched_gpu_ledger(s, g);
        assert_int_equal(l.ntasks, 0);
        assert_true(l.util_sum == 0.0);
        assert_int_equal(l.class_sum, 0);
        assert_int_equal(l.class_unknown, 0);
        assert_int_equal(l.oracle_mib, 0);
        assert_int_equal(l.oracle_unknown, 0);
    }
}

/* ---- horus ------------------------------------------------------------------------------ */

static void horus_picks_lowest_projected_util_and_refuses_over_budget(void **state)
{
    (void)state;
    gpu_view v[4];
    hostile_views(v);
    sched *s = make_sched(POLICY_HORUS, 4);
    sched_task r[4] = {task_of(1, 1, 0.5, -1, NO_FIGURE), task_of(2, 1, 0.3, -1, NO_FIGURE),
                       task_of(3, 1, 0.3, -1, NO_FIGURE), task_of(4, 1, 0.8, -1, NO_FIGURE)};
    for (int g = 0; g < 4; g++)
        put_on(s, &r[g], g);

    /* 0.2 -> projected 0.7, 0.5, 0.5, 1.0: GPUs 1 and 2 tie, the lower index wins. */
    sched_task a = task_of(10, 1, 0.2, -1, NO_FIGURE);
    sched_decision d;
    assert_int_equal(place(s, &a, v, &d), 1);
    assert_int_equal(d.rule, PLACE_POLICY);
    assert_true(d.collocated);
    assert_int_equal(d.requirement_mib, 0);
    assert_true(fabs(sched_gpu_ledger(s, 1).util_sum - 0.5) < 1e-12);
    /* GPU 1 is LAUNCHING now; 0.5 -> 1.0 on GPU 0 (exactly the budget), 0.8 on GPU 2: 2. */
    sched_task b = task_of(11, 1, 0.5, -1, NO_FIGURE);
    assert_int_equal(place(s, &b, v, &d), 2);
    /* 0.75 fits nowhere among 0 (0.5) and 3 (0.8): refused. */
    sched_task c = task_of(12, 1, 0.75, -1, NO_FIGURE);
    assert_int_equal(place(s, &c, v, NULL), -1);
    /* 0.5 fits only on GPU 0, exactly at the budget. */
    c.profiled_util = 0.5;
    assert_int_equal(place(s, &c, v, NULL), 0);
    sched_destroy(s);
}

static void horus_budget_is_exact_and_configurable(void **state)
{
    (void)state;
    gpu_view v[4];
    hostile_views(v);
    sched_config cfg;
    sched_config_defaults(&cfg);
    cfg.policy = POLICY_HORUS;
    sched *s = sched_create(&cfg, 1, NULL);
    /* 0.1 + 0.2 + 0.7 is 1.0000000000000002 in doubles, but exactly 100 % as AEGIS summed it. */
    sched_task r1 = task_of(1, 1, 0.1, -1, NO_FIGURE), r2 = task_of(2, 1, 0.2, -1, NO_FIGURE);
    put_on(s, &r1, 0);
    put_on(s, &r2, 0);
    sched_task t = task_of(3, 1, 0.7, -1, NO_FIGURE);
    assert_int_equal(place(s, &t, v, NULL), 0);
    sched_destroy(s);

    cfg.horus_util_budget = 1.5; /* a larger budget collocates more */
    s = sched_create(&cfg, 1, NULL);
    sched_task a = task_of(1, 1, 0.9, -1, NO_FIGURE), b = task_of(2, 1, 0.6, -1, NO_FIGURE);
    put_on(s, &a, 0);
    assert_int_equal(place(s, &b, v, NULL), 0);
    sched_destroy(s);
}

static void horus_refuses_unknown_util(void **state)
{
    (void)state;
    gpu_view v[4];
    hostile_views(v);
    sched *s = make_sched(POLICY_HORUS, 4);
    sched_task r0 = task_of(1, 1, NAN, -1, NO_FIGURE), r1 = task_of(2, 1, 0.9, -1, NO_FIGURE);
    put_on(s, &r0, 0); /* GPU 0: sum unknown; GPUs 2 and 3 hold nothing */
    put_on(s, &r1, 1);
    assert_true(isnan(sched_gpu_ledger(s, 0).util_sum));
    sched_task t = task_of(10, 1, NAN, -1, NO_FIGURE); /* unknown task: nowhere */
    assert_int_equal(place(s, &t, v, NULL), -1);
    t.profiled_util = 0.05; /* 0 is unknown, 1 would be 0.95: an empty GPU (2) is lower */
    assert_int_equal(place(s, &t, v, NULL), 2);
    sched_task u = task_of(11, 2, 0.05, -1, NO_FIGURE); /* 2 GPUs: 1 and 3 feasible */
    sched_decision d;
    assert_int_equal(place(s, &u, v, &d), 3);
    assert_int_equal(d.gpus[1], 1);
    sched_destroy(s);
}

static void horus_skips_gpus_in_launching_or_grace(void **state)
{
    (void)state;
    gpu_view v[4];
    hostile_views(v);
    sched *s = make_sched(POLICY_HORUS, 2);
    sched_task a = task_of(1, 1, 0.1, -1, NO_FIGURE), b = task_of(2, 1, 0.5, -1, NO_FIGURE);
    int g0 = 0;
    assert_int_equal(sched_restore_running(s, &a, &g0, 1, GPU_GRACE, 0, NULL), 0);
    put_on(s, &b, 1);
    sched_task t = task_of(3, 1, 0.1, -1, NO_FIGURE);
    /* GPU 0 would project 0.2, GPU 1 0.6; but 0 is in grace until 30 s. */
    assert_int_equal(place(s, &t, v, NULL), 1);
    sched_task_ended(s, &t, TASK_DONE, 1);
    sched_process_seen(s, &a, 0, 0);
    sched_advance(s, 30);
    sched_task u = task_of(4, 1, 0.1, -1, NO_FIGURE);
    assert_int_equal(sched_submit(s, &u, NULL), 0);
    sched_decision d;
    assert_true(sched_next(s, 30, v, &d));
    assert_int_equal(d.gpus[0], 0);
    sched_destroy(s);
}

/* ---- lucid ------------------------------------------------------------------------------ */

static void lucid_refuses_a_third_job(void **state)
{
    (void)state;
    gpu_view v[4];
    hostile_views(v);
    sched *s = make_sched(POLICY_LUCID, 1);
    sched_task a = task_of(1, 1, NAN, LUCID_TINY, 1000), b = task_of(2, 1, NAN, LUCID_TINY, 1000);
    sched_task t = task_of(3, 1, NAN, LUCID_TINY, 1000);
    put_on(s, &a, 0);
    put_on(s, &b, 0);
    assert_int_equal(sched_gpu_ledger(s, 0).ntasks, 2);
    assert_int_equal(place(s, &t, v, NULL), -1); /* third: refused although all are Tiny */
    sched_task_ended(s, &b, TASK_DONE, 1);
    sched_decision d;
    assert_int_equal(place(s, &t, v, &d), 0); /* second: fine */
    assert_int_equal(d.rule, PLACE_POLICY);
    assert_int_equal(d.requirement_mib, 1000);
    sched_destroy(s);

    sched_config cfg;
    sched_config_defaults(&cfg);
    cfg.policy = POLICY_LUCID;
    cfg.lucid_max_jobs = 3;
    s = sched_create(&cfg, 1, NULL);
    sched_task a2 = task_of(1, 1, NAN, LUCID_TINY, 1000), b2 = task_of(2, 1, NAN, LUCID_TINY, 1000);
    sched_task t2 = task_of(3, 1, NAN, LUCID_TINY, 1000);
    put_on(s, &a2, 0);
    put_on(s, &b2, 0);
    assert_int_equal(place(s, &t2, v, NULL), 0); /* with a cap of 3 */
    sched_destroy(s);
}

static void lucid_class_capacity(void **state)
{
    (void)state;
    gpu_view v[4];
    hostile_views(v);
    sched *s = make_sched(POLICY_LUCID, 1);
    sched_task j = task_of(1, 1, NAN, LUCID_JUMBO, 1000);
    put_on(s, &j, 0);
    sched_task m = task_of(2, 1, NAN, LUCID_MEDIUM, 1000);
    assert_int_equal(place(s, &m, v, NULL), -1); /* 2 + 1 > 2 */
    sched_task t = task_of(3, 1, NAN, LUCID_TINY, 1000);
    assert_int_equal(place(s, &t, v, NULL), 0); /* 2 + 0 */
    sched_destroy(s);

    s = make_sched(POLICY_LUCID, 1);
    sched_task m1 = task_of(1, 1, NAN, LUCID_MEDIUM, 1000);
    put_on(s, &m1, 0);
    assert_int_equal(place(s, &m, v, NULL), 0); /* 1 + 1 */
    sched_destroy(s);
}

static void lucid_memory_is_total_minus_reserve(void **state)
{
    (void)state;
    gpu_view v[4];
    hostile_views(v); /* 40 GB total, 512 MiB reserve: 40448 usable */
    sched *s = make_sched(POLICY_LUCID, 1);
    sched_task r = task_of(1, 1, NAN, LUCID_TINY, 30000);
    put_on(s, &r, 0);
    sched_task t = task_of(2, 1, NAN, LUCID_TINY, 40960 - 512 - 30000 + 1);
    assert_int_equal(place(s, &t, v, NULL), -1);
    mem_figures_set(&t.mem, MEM_ORACLE, 40960 - 512 - 30000);
    assert_int_equal(place(s, &t, v, NULL), 0);
    sched_destroy(s);

    s = make_sched(POLICY_LUCID, 1); /* alone, a figure over the usable memory never fits */
    sched_task big = task_of(3, 1, NAN, LUCID_TINY, 40449);
    assert_int_equal(place(s, &big, v, NULL), -1);
    sched_destroy(s);
}

/* GPU 0: Medium, 1000 MiB; 1: Tiny, 20000; 2: Tiny, 10000 (unless !on2); 3: two Tiny jobs. */
static sched *lucid_sort_setup(sched_task r[5], bool on2)
{
    sched *s = make_sched(POLICY_LUCID, 4);
    r[0] = task_of(1, 1, NAN, LUCID_MEDIUM, 1000);
    r[1] = task_of(2, 1, NAN, LUCID_TINY, 20000);
    r[2] = task_of(3, 1, NAN, LUCID_TINY, 10000);
    r[3] = task_of(4, 1, NAN, LUCID_TINY, 100);
    r[4] = task_of(5, 1, NAN, LUCID_TINY, 100);
    for (int i = 0; i < 5; i++)
        if (i != 2 || on2)
            put_on(s, &r[i], i < 4 ? i : 3);
    return s;
}

static void lucid_sorts_by_class_sum_then_memory(void **state)
{
    (void)state;
    gpu_view v[4];
    hostile_views(v);
    sched_task r[5];
    sched *s = lucid_sort_setup(r, true);
    /* Tiny: class sums 1, 0, 0, (full) -> GPU 1 or 2, and 2 has less memory. */
    sched_task t = task_of(10, 1, NAN, LUCID_TINY, 1000);
    assert_int_equal(place(s, &t, v, NULL), 2);
    sched_destroy(s);

    /* Class first: GPU 0 projects less memory (2000) than GPU 1 (21000), but class sum 1. */
    s = lucid_sort_setup(r, false);
    sched_task u = task_of(11, 2, NAN, LUCID_TINY, 1000);
    sched_decision d;
    assert_int_equal(place(s, &u, v, &d), 2); /* (0, 1000) */
    assert_int_equal(d.gpus[1], 1);           /* (0, 21000) before (1, 2000) */
    sched_destroy(s);

    /* Memory ties go by index. */
    s = lucid_sort_setup(r, false);
    sched_task_ended(s, &r[1], TASK_DONE, 1); /* GPUs 1 and 2 both empty */
    sched_task w = task_of(12, 1, NAN, LUCID_TINY, 1000);
    assert_int_equal(place(s, &w, v, NULL), 1);
    sched_destroy(s);
}

static void lucid_refuses_unknown_class_or_memory(void **state)
{
    (void)state;
    gpu_view v[4];
    hostile_views(v);
    sched *s = make_sched(POLICY_LUCID, 2);
    sched_task r0 = task_of(1, 1, NAN, LUCID_TINY, NO_FIGURE), r1 = task_of(2, 1, NAN, -1, 100);
    put_on(s, &r0, 0);
    put_on(s, &r1, 1);
    assert_int_equal(sched_gpu_ledger(s, 0).oracle_unknown, 1);
    assert_int_equal(sched_gpu_ledger(s, 1).class_unknown, 1);
    sched_task t = task_of(3, 1, NAN, LUCID_TINY, 100);
    assert_int_equal(place(s, &t, v, NULL), -1); /* each GPU holds an unknown */
    sched_destroy(s);

    s = make_sched(POLICY_LUCID, 2);
    sched_task a = task_of(4, 1, NAN, -1, 100), b = task_of(5, 1, NAN, LUCID_TINY, NO_FIGURE);
    sched_task r = task_of(6, 1, NAN, LUCID_TINY, 100);
    put_on(s, &r, 0);
    assert_int_equal(place(s, &a, v, NULL), -1);
    assert_int_equal(place(s, &b, v, NULL), -1);
    assert_int_equal(place(s, &t, v, NULL), 1);
    sched_destroy(s);
}

/* ---- rules every policy keeps -------------------------------------------------------------- */

static void exclusive_first_still_takes_idle_gpus_first(void **state)
{
    (void)state;
    for (policy_id p = POLICY_HORUS; p <= POLICY_LUCID; p++) {
        gpu_view v[4];
        hostile_views(v);
        v[3] = idle_gpu();
        sched *s = make_sched(p, 4);
        /* Unknown figures: no policy placement possible, but an idle GPU is. */
        sched_task t = task_of(1, 1, NAN, -1, NO_FIGURE);
        sched_decision d;
        assert_int_equal(place(s, &t, v, &d), 3);
        assert_int_equal(d.rule, PLACE_EXCLUSIVE_FIRST);
        assert_false(d.collocated);
        /* Known figures, room everywhere: the idle GPU still comes first (GPU 3 now LAUNCHING,
         * so the next one is collocated on the emptiest busy GPU, 0). */
        sched_task_ended(s, &t, TASK_DONE, 1);
        sched_task u = task_of(2, 1, 0.1, LUCID_TINY, 100), w = task_of(3, 1, 0.1, LUCID_TINY, 100);
        assert_int_equal(place(s, &u, v, &d), 3);
        assert_int_equal(d.rule, PLACE_EXCLUSIVE_FIRST);
        assert_int_equal(place(s, &w, v, &d), 0);
        assert_int_equal(d.rule, PLACE_POLICY);
        sched_destroy(s);
    }
}

static void recovered_tasks_wait_for_idle_gpus_and_block_fifo(void **state)
{
    (void)state;
    gpu_view v[4];
    hostile_views(v);
    sched *s = make_sched(POLICY_HORUS, 4);
    sched_task rec = task_of(1, 1, 0.1, LUCID_TINY, 100), next = task_of(2, 1, 0.1, 0, 100);
    assert_int_equal(sched_submit_recovery(s, &rec, NULL), 0);
    assert_int_equal(sched_submit(s, &next, NULL), 0);
    sched_decision d;
    assert_false(sched_next(s, 0, v, &d)); /* room everywhere, but no collocation on recovery */
    v[2] = idle_gpu();
    assert_true(sched_next(s, 0, v, &d));
    assert_ptr_equal(d.task, &rec);
    assert_int_equal(d.gpus[0], 2);
    assert_true(d.from_recovery);
    assert_true(sched_next(s, 0, v, &d)); /* now the main queue may collocate */
    assert_ptr_equal(d.task, &next);
    assert_int_equal(d.rule, PLACE_POLICY);
    sched_destroy(s);
}

/* ---- the ledger ------------------------------------------------------------------------------ */

static void ledger_follows_placements_and_goes_back_to_zero(void **state)
{
    (void)state;
    gpu_view v[4] = {idle_gpu(), idle_gpu(), idle_gpu(), idle_gpu()};
    sched *s = make_sched(POLICY_EXCLUSIVE, 4); /* every policy keeps the ledger */
    sched_task a = task_of(1, 2, 0.25, LUCID_JUMBO, 3000), b = task_of(2, 1, NAN, -1, NO_FIGURE);
    sched_decision d;
    assert_int_equal(sched_submit(s, &a, NULL), 0);
    assert_int_equal(sched_submit(s, &b, NULL), 0);
    assert_true(sched_next(s, 0, v, &d)); /* a on 0 and 1 */
    assert_true(sched_next(s, 0, v, &d)); /* b on 2 */
    for (int g = 0; g < 2; g++) {
        sched_gpu_load l = sched_gpu_ledger(s, g);
        assert_int_equal(l.ntasks, 1);
        assert_true(l.util_sum == 0.25);
        assert_int_equal(l.class_sum, 2);
        assert_int_equal(l.oracle_mib, 3000);
        assert_int_equal(l.class_unknown + l.oracle_unknown, 0);
    }
    sched_gpu_load l2 = sched_gpu_ledger(s, 2);
    assert_int_equal(l2.ntasks, 1);
    assert_true(isnan(l2.util_sum));
    assert_int_equal(l2.class_unknown, 1);
    assert_int_equal(l2.oracle_unknown, 1);
    assert_int_equal(sched_gpu_ledger(s, 3).ntasks, 0);
    assert_int_equal(sched_gpu_ledger(s, 9).ntasks, 0); /* no such GPU */

    /* The figures counted are those at placement: a driver updating them is harmless. */
    a.profiled_util = 0.9;
    mem_figures_set(&b.mem, MEM_ORACLE, 7000);
    /* OOM with retries left: back to the recovery queue, off the ledger. */
    assert_int_equal(sched_task_ended(s, &a, TASK_OOM, 1), SCHED_END_RETRY);
    assert_int_equal(sched_task_ended(s, &b, TASK_DONE, 1), SCHED_END_FINAL);
    assert_ledger_empty(s);
    sched_task_ended(s, &b, TASK_DONE, 2); /* ending twice takes nothing off twice */
    assert_ledger_empty(s);
    assert_true(sched_next(s, 2, v, &d)); /* a relaunched: counted again, new figures */
    assert_true(sched_gpu_ledger(s, d.gpus[0]).util_sum == 0.9);
    sched_task_ended(s, &a, TASK_DONE, 3);
    assert_ledger_empty(s);
    sched_destroy(s);
}

static void ledger_counts_restored_tasks(void **state)
{
    (void)state;
    sched *s = make_sched(POLICY_LUCID, 4);
    sched_task a = task_of(1, 2, 0.4, LUCID_MEDIUM, 5000), b = task_of(2, 1, 0.3, LUCID_TINY, 700);
    int ga[2] = {1, 2}, gb = 1;
    assert_int_equal(sched_restore_running(s, &a, ga, 2, GPU_GRACE, 0, NULL), 0);
    assert_int_equal(sched_restore_running(s, &b, &gb, 1, GPU_LAUNCHING, 0, NULL), 0);
    sched_gpu_load l1 = sched_gpu_ledger(s, 1), l2 = sched_gpu_ledger(s, 2);
    assert_int_equal(l1.ntasks, 2); /* b shares GPU 1 with a (a keeps the grace hold) */
    assert_true(fabs(l1.util_sum - 0.7) < 1e-12);
    assert_int_equal(l1.class_sum, 1);
    assert_int_equal(l1.oracle_mib, 5700);
    assert_int_equal(l2.ntasks, 1);
    assert_int_equal(l2.oracle_mib, 5000);
    /* A restore that fails changes nothing. */
    sched_task c = task_of(3, 1, 0.1, 0, 1);
    int bad = 7;
    assert_int_not_equal(sched_restore_running(s, &c, &bad, 1, GPU_GRACE, 0, NULL), 0);
    assert_int_equal(sched_gpu_ledger(s, 1).ntasks, 2);
    sched_task_ended(s, &a, TASK_DONE, 10);
    assert_int_equal(sched_gpu_ledger(s, 1).ntasks, 1);
    assert_int_equal(sched_gpu_ledger(s, 1).oracle_mib, 700);
    sched_task_ended(s, &b, TASK_FAILED, 11);
    assert_ledger_empty(s);
    sched_destroy(s);
}

/* ---- the API around them ---------------------------------------------------------------- */

static void task_init_config_and_names(void **state)
{
    (void)state;
    sched_task t;
    memset(&t, 0x5a, sizeof t);
    sched_task_init(&t);
    assert_int_equal(t.max_retries, -1);
    assert_true(isnan(t.profiled_util));
    assert_int_equal(t.lucid_class, LUCID_UNKNOWN);
    assert_int_equal(t.where, SCHED_NOWHERE);
    assert_false(t.charge.held);

    sched *s = make_sched(POLICY_HORUS, 2);
    t.ngpus = 1;
    t.profiled_util = 1.5;
    assert_int_not_equal(sched_submit(s, &t, NULL), 0);
    t.profiled_util = -0.1;
    assert_int_not_equal(sched_submit(s, &t, NULL), 0);
    t.profiled_util = 1.0;
    t.lucid_class = 3;
    assert_int_not_equal(sched_submit(s, &t, NULL), 0);
    t.lucid_class = -2;
    assert_int_not_equal(sched_submit(s, &t, NULL), 0);
    t.lucid_class = LUCID_JUMBO;
    assert_int_equal(sched_submit(s, &t, NULL), 0);
    sched_destroy(s);

    sched_config cfg;
    sched_config_defaults(&cfg);
    assert_true(cfg.horus_util_budget == 1.0);
    assert_int_equal(cfg.lucid_max_jobs, 2);
    assert_int_equal(cfg.lucid_class_capacity, 2);
    assert_int_equal(sched_config_validate(&cfg, NULL), 0);
    double bad_budgets[] = {0.0, -1.0, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad_budgets / sizeof *bad_budgets; i++) {
        sched_config c = cfg;
        c.horus_util_budget = bad_budgets[i];
        assert_int_not_equal(sched_config_validate(&c, NULL), 0);
    }
    sched_config c = cfg;
    c.lucid_max_jobs = 0;
    assert_int_not_equal(sched_config_validate(&c, NULL), 0);
    c = cfg;
    c.lucid_class_capacity = -1;
    assert_int_not_equal(sched_config_validate(&c, NULL), 0);
    c.lucid_class_capacity = 0; /* only Tiny jobs share */
    assert_int_equal(sched_config_validate(&c, NULL), 0);

    policy_id p;
    assert_int_equal(policy_from_name("horus", &p), 0);
    assert_int_equal(p, POLICY_HORUS);
    assert_int_equal(policy_from_name("LUCID", &p), 0);
    assert_int_equal(p, POLICY_LUCID);
    assert_string_equal(policy_name(POLICY_LUCID), "lucid");
    assert_int_equal(POLICY_EST_LUG, 9); /* the older ids keep their values */
    assert_int_equal(POLICY_HORUS, 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(horus_picks_lowest_projected_util_and_refuses_over_budget),
        cmocka_unit_test(horus_budget_is_exact_and_configurable),
        cmocka_unit_test(horus_refuses_unknown_util),
        cmocka_unit_test(horus_skips_gpus_in_launching_or_grace),
        cmocka_unit_test(lucid_refuses_a_third_job),
        cmocka_unit_test(lucid_class_capacity),
        cmocka_unit_test(lucid_memory_is_total_minus_reserve),
        cmocka_unit_test(lucid_sorts_by_class_sum_then_memory),
        cmocka_unit_test(lucid_refuses_unknown_class_or_memory),
        cmocka_unit_test(exclusive_first_still_takes_idle_gpus_first),
        cmocka_unit_test(recovered_tasks_wait_for_idle_gpus_and_block_fifo),
        cmocka_unit_test(ledger_follows_placements_and_goes_back_to_zero),
        cmocka_unit_test(ledger_counts_restored_tasks),
        cmocka_unit_test(task_init_config_and_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
