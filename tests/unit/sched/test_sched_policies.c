/* test_sched_policies.c — each policy's choice on hand-built GPU states: exclusive-first,
 * filters, margins, sort orders, ties, multi-GPU and nothing-fits (carma-spec §4.3). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched_fixture.h"

/* Places a fresh copy of `proto` with `policy` on `views` (4 GPUs); returns the first GPU
 * chosen or -1. */
static int place_one(policy_id policy, const gpu_view *views, const sched_task *proto,
                     sched_decision *d)
{
    sched *s = make_sched(policy, 4);
    assert_non_null(s);
    sched_task copy = *proto, *t = &copy;
    assert_int_equal(sched_submit(s, t, NULL), 0);
    sched_decision local;
    if (!d)
        d = &local;
    int gpu = sched_next(s, 0.0, views, d) ? d->gpus[0] : -1;
    sched_destroy(s);
    return gpu;
}

/* No idle GPU; free memory 10000, 30000, 30000, 2000 MiB; activity 0.5, 0.3, 0.3, 0.1. */
static void busy_views(gpu_view v[4])
{
    v[0] = busy_gpu(10000, 0.5, 0.2, 0.1);
    v[1] = busy_gpu(30000, 0.3, 0.2, 0.1);
    v[2] = busy_gpu(30000, 0.3, 0.2, 0.1);
    v[3] = busy_gpu(2000, 0.1, 0.1, 0.1);
}

static void exclusive_takes_first_idle_gpus_in_index_order(void **state)
{
    (void)state;
    gpu_view v[4] = {busy_gpu(30000, 0.1, 0.1, 0.1), idle_gpu(), idle_gpu(), idle_gpu()};
    sched *s = make_sched(POLICY_EXCLUSIVE, 4);
    sched_task a = make_task(1, 1, 1000), b = make_task(2, 2, 1000);
    sched_submit(s, &a, NULL);
    sched_submit(s, &b, NULL);
    sched_decision d;
    assert_true(sched_next(s, 0, v, &d));
    assert_ptr_equal(d.task, &a);
    assert_int_equal(d.gpus[0], 1);
    assert_int_equal(d.rule, PLACE_EXCLUSIVE_FIRST);
    assert_false(d.collocated);
    /* GPU 1 is now LAUNCHING although still idle: b gets 2 and 3. */
    assert_true(sched_next(s, 0, v, &d));
    assert_ptr_equal(d.task, &b);
    assert_int_equal(d.ngpus, 2);
    assert_int_equal(d.gpus[0], 2);
    assert_int_equal(d.gpus[1], 3);
    assert_int_equal(a.attempts, 1);
    assert_int_equal(a.where, SCHED_RUNNING);
    sched_destroy(s);
}

static void exclusive_never_collocates(void **state)
{
    (void)state;
    gpu_view v[4];
    busy_views(v);
    sched_task t = make_task(1, 1, 100);
    assert_int_equal(place_one(POLICY_EXCLUSIVE, v, &t, NULL), -1);
    assert_int_equal(t.where, SCHED_NOWHERE);
}

static void exclusive_first_wins_over_the_policy(void **state)
{
    (void)state;
    gpu_view v[4];
    busy_views(v);
    v[3] = idle_gpu();
    v[3].free_mib = 5000; /* less than GPU 1 or 2 offer: magm would pick those */
    sched_task t = make_task(1, 1, 1000);
    sched_decision d;
    assert_int_equal(place_one(POLICY_ORACLE_MAGM, v, &t, &d), 3);
    assert_int_equal(d.rule, PLACE_EXCLUSIVE_FIRST);
}

static void first_fit_takes_lowest_index_that_fits(void **state)
{
    (void)state;
    gpu_view v[4];
    busy_views(v);
    sched_task t = make_task(1, 1, 5000);
    sched_decision d;
    assert_int_equal(place_one(POLICY_ORACLE_FF, v, &t, &d), 0);
    assert_int_equal(d.rule, PLACE_POLICY);
    assert_true(d.collocated);
    assert_int_equal(d.requirement_mib, 5000);
}

static void best_fit_takes_tightest_memory(void **state)
{
    (void)state;
    gpu_view v[4];
    busy_views(v);
    v[0].free_mib = 31000;
    sched_task t = make_task(1, 1, 5000);
    /* GPU 3 does not fit; 30000 on GPUs 1 and 2 is tighter than 31000, tie -> index 1. */
    assert_int_equal(place_one(POLICY_ORACLE_BF, v, &t, NULL), 1);
}

static void magm_takes_most_memory_ties_by_index(void **state)
{
    (void)state;
    gpu_view v[4];
    busy_views(v);
    sched_task t = make_task(1, 1, 5000);
    assert_int_equal(place_one(POLICY_ORACLE_MAGM, v, &t, NULL), 1);
    v[2].free_mib = 30001;
    assert_int_equal(place_one(POLICY_ORACLE_MAGM, v, &t, NULL), 2);
}

static void lug_takes_least_smact_among_those_that_fit(void **state)
{
    (void)state;
    gpu_view v[4];
    busy_views(v);
    sched_task t = make_task(1, 1, 5000);
    /* GPU 3 has the least smact but too little memory; 1 and 2 tie at 0.3 -> 1. */
    assert_int_equal(place_one(POLICY_ORACLE_LUG, v, &t, NULL), 1);
    v[2].smact = 0.29;
    assert_int_equal(place_one(POLICY_ORACLE_LUG, v, &t, NULL), 2);
}

static void oracle_margin_is_reserve_plus_2048(void **state)
{
    (void)state;
    gpu_view v[4];
    busy_views(v);
    for (int i = 0; i < 4; i++)
        v[i].free_mib = 1000;
    v[2].free_mib = 5000 + 2048 + 512; /* exactly enough */
    sched_task t = make_task(1, 1, 5000);
    assert_int_equal(place_one(POLICY_ORACLE_FF, v, &t, NULL), 2);
    v[2].free_mib -= 1;
    assert_int_equal(place_one(POLICY_ORACLE_FF, v, &t, NULL), -1);
}

static void unknown_free_memory_fails_the_memory_filter(void **state)
{
    (void)state;
    gpu_view v[4];
    busy_views(v);
    v[1].free_known = false;
    v[2].free_known = false;
    sched_task t = make_task(1, 1, 5000);
    assert_int_equal(place_one(POLICY_ORACLE_MAGM, v, &t, NULL), 0);
}

static void gate_rejects_busy_gpu_and_unknown_metrics(void **state)
{
    (void)state;
    gpu_view v[4];
    busy_views(v);
    v[1].smact = 0.85; /* rejected: smocc 0.2 but ... */
    v[1].smocc = 0.50;
    v[2].smact = 0.85; /* passes: high smact, low occupancy and DRAM activity */
    v[2].smocc = 0.30;
    v[2].drama = 0.30;
    sched_task t = make_task(1, 1, 5000);
    assert_int_equal(place_one(POLICY_ORACLE_MAGM, v, &t, NULL), 2);
    v[2].drama = NAN; /* could decide the gate: rejected */
    assert_int_equal(place_one(POLICY_ORACLE_MAGM, v, &t, NULL), 0);
    v[0].smact = NAN; /* unknown smact with smocc 0.2 and drama 0.1 known low: passes */
    assert_int_equal(place_one(POLICY_ORACLE_MAGM, v, &t, NULL), 0);
    v[0].drama = NAN; /* now nothing known decides it: rejected */
    assert_int_equal(place_one(POLICY_ORACLE_MAGM, v, &t, NULL), -1);
}

static void or_policies_use_the_fixed_floor_not_the_figure(void **state)
{
    (void)state;
    gpu_view v[4];
    busy_views(v);
    for (int i = 0; i < 4; i++)
        v[i].free_mib = 5000;
    v[3].free_mib = 5120 + 512;
    sched_task t = make_task(1, 1, 39000); /* far more than anything offers */
    assert_int_equal(place_one(POLICY_OR_MAGM, v, &t, NULL), 3);
    assert_int_equal(place_one(POLICY_OR_LUG, v, &t, NULL), 3);
    assert_int_equal(place_one(POLICY_ORACLE_MAGM, v, &t, NULL), -1);
    v[3].free_mib -= 1;
    assert_int_equal(place_one(POLICY_OR_MAGM, v, &t, NULL), -1);
}

static void or_rr_cursor_persists_and_advances_on_failure(void **state)
{
    (void)state;
    gpu_view v[4];
    busy_views(v);
    for (int i = 0; i < 4; i++)
        v[i].free_mib = 0; /* or-rr looks at no memory and no activity */
    sched *s = make_sched(POLICY_OR_RR, 4);
    sched_task t[6];
    sched_decision d;
    for (int i = 0; i < 3; i++) {
        t[i] = make_task((uint64_t)i + 1, 1, 1000);
        sched_submit(s, &t[i], NULL);
        assert_true(sched_next(s, 0, v, &d));
        assert_int_equal(d.gpus[0], i); /* 0, 1, 2 */
    }
    sched_task_ended(s, &t[0], TASK_DONE, 1); /* GPU 0 free again; 1 and 2 launching */
    t[3] = make_task(4, 2, 1000);
    sched_submit(s, &t[3], NULL);
    /* From cursor 3: GPU 3 and GPU 0 are available. */
    assert_true(sched_next(s, 1, v, &d));
    assert_int_equal(d.gpus[0], 3);
    assert_int_equal(d.gpus[1], 0);
    /* Cursor now 1. A 1-GPU task finds nothing available (all launching): fails, cursor moves
     * a full ring (back to 1). */
    t[4] = make_task(5, 1, 1000);
    sched_submit(s, &t[4], NULL);
    assert_false(sched_next(s, 1, v, &d));
    sched_task_ended(s, &t[2], TASK_DONE, 2); /* GPU 2 free */
    assert_true(sched_next(s, 2, v, &d));
    assert_int_equal(d.gpus[0], 2);
    sched_destroy(s);
}

static void est_policies_read_the_configured_estimator(void **state)
{
    (void)state;
    gpu_view v[4];
    busy_views(v);
    sched_config cfg;
    sched_config_defaults(&cfg);
    cfg.policy = POLICY_EST_MAGM;
    cfg.estimator = MEM_GPUMEMNET;
    sched *s = sched_create(&cfg, 4, NULL);
    sched_task t = make_task(1, 1, 1000);
    sched_decision d;
    sched_submit(s, &t, NULL);
    /* No gpumemnet figure: cannot be collocated (no guess, no silent oracle fallback). */
    assert_false(sched_next(s, 0, v, &d));
    mem_figures_set(&t.mem, MEM_GPUMEMNET, 32000); /* needs 34560 free: nowhere */
    assert_false(sched_next(s, 0, v, &d));
    mem_figures_set(&t.mem, MEM_GPUMEMNET, 24000);
    assert_true(sched_next(s, 0, v, &d));
    assert_int_equal(d.gpus[0], 1);
    assert_int_equal(d.requirement_mib, 24000);
    sched_destroy(s);

    /* estimator "none" is the measured figure, as in the reference. */
    cfg.estimator = MEM_ORACLE;
    s = sched_create(&cfg, 4, NULL);
    sched_task u = make_task(2, 1, 26000); /* needs 28560 free: GPU 1 */
    sched_submit(s, &u, NULL);
    assert_true(sched_next(s, 0, v, &d));
    assert_int_equal(d.requirement_mib, 26000);
    sched_destroy(s);
}

static void multi_gpu_takes_the_n_best_or_nothing(void **state)
{
    (void)state;
    gpu_view v[4];
    busy_views(v);
    v[0].free_mib = 20000;
    sched_task t = make_task(1, 2, 5000);
    sched_decision d;
    assert_int_equal(place_one(POLICY_ORACLE_MAGM, v, &t, &d), 1);
    assert_int_equal(d.ngpus, 2);
    assert_int_equal(d.gpus[1], 2);
    t = make_task(1, 3, 5000); /* 0, 1, 2 fit; 3 does not */
    assert_int_equal(place_one(POLICY_ORACLE_BF, v, &t, &d), 0);
    assert_int_equal(d.gpus[1], 1);
    assert_int_equal(d.gpus[2], 2);
    t = make_task(1, 4, 5000);
    assert_int_equal(place_one(POLICY_ORACLE_MAGM, v, &t, &d), -1);
}

static void multi_gpu_mixes_idle_and_busy_gpus(void **state)
{
    (void)state;
    gpu_view v[4];
    busy_views(v);
    v[3] = idle_gpu(); /* one idle GPU is not enough for 2: the policy decides */
    sched_task t = make_task(1, 2, 5000);
    sched_decision d;
    assert_int_equal(place_one(POLICY_ORACLE_MAGM, v, &t, &d), 3);
    assert_int_equal(d.gpus[1], 1);
    assert_true(d.collocated);
    assert_int_equal(d.rule, PLACE_POLICY);
}

static void head_of_line_blocks_the_queue(void **state)
{
    (void)state;
    gpu_view v[4];
    busy_views(v);
    v[3] = idle_gpu();
    sched *s = make_sched(POLICY_EXCLUSIVE, 4);
    sched_task big = make_task(1, 2, 1000), small = make_task(2, 1, 1000);
    sched_submit(s, &big, NULL);
    sched_submit(s, &small, NULL);
    sched_decision d;
    assert_false(sched_next(s, 0, v, &d)); /* small would fit on GPU 3, but FIFO is strict */
    assert_ptr_equal(sched_main_head(s), &big);
    assert_int_equal(sched_main_len(s), 2);
    sched_destroy(s);
}

/* Which figure each policy places with (the daemon shows and MPS-caps that one). */
static void policy_figure_by_policy(void **state)
{
    (void)state;
    sched_config c;
    sched_config_defaults(&c);
    mem_source src = MEM_CARMA;
    const struct { policy_id p; sched_figure f; mem_source src; } want[] = {
        {POLICY_EXCLUSIVE, SCHED_FIGURE_NONE, MEM_CARMA},
        {POLICY_OR_RR, SCHED_FIGURE_NONE, MEM_CARMA},
        {POLICY_HORUS, SCHED_FIGURE_NONE, MEM_CARMA},
        {POLICY_OR_MAGM, SCHED_FIGURE_FLOOR, MEM_CARMA},
        {POLICY_OR_LUG, SCHED_FIGURE_FLOOR, MEM_CARMA},
        {POLICY_ORACLE_FF, SCHED_FIGURE_TASK, MEM_ORACLE},
        {POLICY_LUCID, SCHED_FIGURE_TASK, MEM_ORACLE},
        {POLICY_EST_LUG, SCHED_FIGURE_TASK, MEM_GPUMEMNET},
    };
    c.estimator = MEM_GPUMEMNET;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        c.policy = want[i].p;
        src = MEM_CARMA; /* untouched unless the policy reads a task's figure */
        assert_int_equal(sched_policy_figure(&c, &src), want[i].f);
        assert_int_equal(src, want[i].src);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exclusive_takes_first_idle_gpus_in_index_order),
        cmocka_unit_test(exclusive_never_collocates),
        cmocka_unit_test(exclusive_first_wins_over_the_policy),
        cmocka_unit_test(first_fit_takes_lowest_index_that_fits),
        cmocka_unit_test(best_fit_takes_tightest_memory),
        cmocka_unit_test(magm_takes_most_memory_ties_by_index),
        cmocka_unit_test(lug_takes_least_smact_among_those_that_fit),
        cmocka_unit_test(oracle_margin_is_reserve_plus_2048),
        cmocka_unit_test(unknown_free_memory_fails_the_memory_filter),
        cmocka_unit_test(gate_rejects_busy_gpu_and_unknown_metrics),
        cmocka_unit_test(or_policies_use_the_fixed_floor_not_the_figure),
        cmocka_unit_test(or_rr_cursor_persists_and_advances_on_failure),
        cmocka_unit_test(est_policies_read_the_configured_estimator),
        cmocka_unit_test(multi_gpu_takes_the_n_best_or_nothing),
        cmocka_unit_test(multi_gpu_mixes_idle_and_busy_gpus),
        cmocka_unit_test(head_of_line_blocks_the_queue),
        cmocka_unit_test(policy_figure_by_policy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
