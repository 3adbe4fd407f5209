/* test_sched_carma.c — the carma policy's four parts, each alone: ledger placement without a
 * grace wait (and its reconciliation with measured memory), backfill that keeps the head's
 * reservation (and the skip bound where runtimes are unknown), interference-aware placement
 * (highest predicted gain, no collocation that lowers progress), out-of-memory learning (alone
 * and seen filling the GPU: never fits, unless a GPU's memory is unknown; seen low: grows), and
 * longest-first heads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched_fixture.h"

/* A task with a measured figure, a runtime estimate (NAN: none) and a solo profile. */
static sched_task ctask(uint64_t id, uint64_t mib, double runtime, double smact, double drama)
{
    sched_task t;
    sched_task_init(&t);
    t.id = id;
    t.ngpus = 1;
    mem_figures_set(&t.mem, MEM_ORACLE, mib);
    t.runtime_est_s = runtime;
    t.solo_smact = smact;
    t.solo_drama = drama;
    return t;
}

#define LIGHT 0.10, 0.05 /* pressure 0.03 */
#define HEAVY 0.95, 0.20 /* pressure 3.1 */

static sched *carma_sched(int ngpus, void (*tweak)(sched_config *))
{
    sched_config cfg;
    sched_config_defaults(&cfg);
    cfg.policy = POLICY_CARMA;
    cfg.margin_mib = 512;
    if (tweak)
        tweak(&cfg);
    sched *s = sched_create(&cfg, ngpus, NULL);
    assert_non_null(s);
    return s;
}

static bool next_on(sched *s, double now, const gpu_view *v, uint64_t want_id, int want_gpu)
{
    sched_decision d;
    if (!sched_next(s, now, v, &d))
        return false;
    assert_int_equal(d.task->id, want_id);
    assert_int_equal(d.gpus[0], want_gpu);
    return true;
}

/* ---- ledger ---------------------------------------------------------------------------------- */

static void no_ledger(sched_config *c) { c->carma_ledger = false; }

static void ledger_places_during_launch_and_counts_commitments(void **state)
{
    (void)state;
    gpu_view v[1] = {idle_gpu()};
    sched *s = carma_sched(1, NULL);
    sched_task a = ctask(1, 10 * GB, 100, LIGHT), b = ctask(2, 10 * GB, 100, LIGHT),
               c = ctask(3, 25 * GB, 100, LIGHT);
    sched_submit(s, &a, NULL);
    sched_submit(s, &b, NULL);
    sched_submit(s, &c, NULL);
    assert_true(next_on(s, 0, v, 1, 0));
    /* a is still starting: the GPU looks idle and empty, and is LAUNCHING. b goes beside it. */
    assert_int_equal(sched_gpu_grace(s, 0).state, GPU_LAUNCHING);
    v[0].idle = true;
    assert_true(next_on(s, 0, v, 2, 0));
    /* 40 GB - 512 reserve - 2 x (10 GB + 512): 18.5 GB left by the ledger, though 40 GB free. */
    assert_false(sched_next(s, 0, v, &(sched_decision){0}));
    assert_int_equal(sched_main_len(s), 1);
    sched_destroy(s);
}

/* A task placed beside one that has not reached the GPU yet (the sample still shows it idle)
 * shares it: the decision says collocated, as the MPS cap, the log and the metric need. */
static void placement_beside_a_starting_task_is_collocated(void **state)
{
    (void)state;
    gpu_view v[1] = {idle_gpu()};
    sched *s = carma_sched(1, NULL);
    sched_task a = ctask(1, 10 * GB, 100, LIGHT), b = ctask(2, 10 * GB, 100, LIGHT);
    sched_submit(s, &a, NULL);
    sched_submit(s, &b, NULL);
    sched_decision d;
    assert_true(sched_next(s, 0, v, &d));
    assert_false(d.collocated);
    assert_true(sched_next(s, 0, v, &d));
    assert_int_equal(d.task->id, 2);
    assert_true(d.collocated);
    sched_destroy(s);
}

static void ledger_never_gives_more_than_measured(void **state)
{
    (void)state;
    gpu_view v[1] = {idle_gpu()};
    sched *s = carma_sched(1, NULL);
    sched_task a = ctask(1, 5 * GB, 100, LIGHT), b = ctask(2, 5 * GB, 100, LIGHT);
    sched_submit(s, &a, NULL);
    sched_submit(s, &b, NULL);
    assert_true(next_on(s, 0, v, 1, 0));
    v[0] = busy_gpu(4 * GB, 0.1, 0.1, 0.1); /* someone else holds 31 GB */
    assert_false(sched_next(s, 0, v, &(sched_decision){0}));
    v[0].free_mib = 20 * GB;
    assert_true(next_on(s, 0, v, 2, 0));
    sched_destroy(s);
}

static void without_ledger_the_grace_period_holds(void **state)
{
    (void)state;
    gpu_view v[1] = {idle_gpu()};
    sched *s = carma_sched(1, no_ledger);
    sched_task a = ctask(1, 5 * GB, 100, LIGHT), b = ctask(2, 5 * GB, 100, LIGHT);
    sched_submit(s, &a, NULL);
    sched_submit(s, &b, NULL);
    assert_true(next_on(s, 0, v, 1, 0));
    v[0] = busy_gpu(30 * GB, 0.1, 0.1, 0.1);
    assert_false(sched_next(s, 1, v, &(sched_decision){0})); /* launching */
    sched_process_seen(s, &a, 0, 1);
    assert_false(sched_next(s, 2, v, &(sched_decision){0})); /* grace */
    assert_true(next_on(s, 40, v, 2, 0));
    sched_destroy(s);
}

/* ---- backfill ------------------------------------------------------------------------------- */

static void fifo_by_memory(sched_config *c)
{
    c->carma_interference = false;
    c->carma_longest_first = false;
}

/* GPU 0 frees at t=100, GPU 1 at t=1000; the head (35 GB) is reserved GPU 0 at t=100. */
static sched *blocked_head(sched_task run[2], sched_task *head, gpu_view v[2])
{
    sched *s = carma_sched(2, fifo_by_memory);
    run[0] = ctask(10, 30 * GB, 100, LIGHT);
    run[1] = ctask(11, 30 * GB, 1000, LIGHT);
    for (int g = 0; g < 2; g++) {
        assert_int_equal(sched_restore_running(s, &run[g], &g, 1, GPU_AVAILABLE, 0, NULL), 0);
        v[g] = busy_gpu(10 * GB, 0.1, 0.1, 0.1);
    }
    *head = ctask(1, 35 * GB, 500, LIGHT);
    sched_submit(s, head, NULL);
    return s;
}

static void backfill_keeps_the_heads_reservation(void **state)
{
    (void)state;
    sched_task run[2], h, shortb = ctask(2, 4 * GB, 50, LIGHT);
    sched_task longb = ctask(3, 4 * GB, 5000, LIGHT), big = ctask(4, 8 * GB, 5000, LIGHT);
    gpu_view v[2];
    sched *s = blocked_head(run, &h, v);
    sched_submit(s, &shortb, NULL);
    sched_submit(s, &longb, NULL);
    sched_submit(s, &big, NULL);
    sched_decision d;
    /* The short one ends before t=100: it may use GPU 0 (most room, index first). */
    assert_true(sched_next(s, 0, v, &d));
    assert_int_equal(d.task->id, 2);
    /* The long one would outlive t=100: not on the reserved GPU 0, but GPU 1 is free of the
     * reservation. */
    v[0].free_mib = 5 * GB;
    assert_true(sched_next(s, 0, v, &d));
    assert_int_equal(d.task->id, 3);
    assert_int_equal(d.gpus[0], 1);
    /* Nothing else fits anywhere now; the head still waits, first in the queue. */
    v[1].free_mib = 5 * GB;
    assert_false(sched_next(s, 0, v, &d));
    assert_ptr_equal(sched_main_head(s), &h);
    sched_task_ended(s, &shortb, TASK_DONE, 50);
    sched_task_ended(s, &run[0], TASK_DONE, 100);
    v[0] = idle_gpu();
    assert_true(sched_next(s, 100, v, &d));
    assert_int_equal(d.task->id, 1);
    assert_int_equal(d.gpus[0], 0);
    sched_destroy(s);
}

static void backfill_refuses_what_would_delay_the_head(void **state)
{
    (void)state;
    sched_task run[2], h, slow = ctask(2, 5 * GB, 5000, LIGHT),
                          quick = ctask(3, 5 * GB, 60, 0.1, 0.0);
    gpu_view v[2];
    sched *s = blocked_head(run, &h, v);
    v[1].free_mib = 1 * GB; /* only GPU 0, the reserved one, has room */
    sched_submit(s, &slow, NULL);
    sched_submit(s, &quick, NULL);
    sched_decision d;
    /* slow would still hold 5 GB at t=100, when the head needs 35 of GPU 0's 39.5: refused.
     * quick (no pressure: it slows nothing there past t=100) ends by then: it goes. */
    assert_true(sched_next(s, 0, v, &d));
    assert_int_equal(d.task->id, 3);
    assert_false(sched_next(s, 0, v, &d));
    assert_int_equal(sched_main_len(s), 2);
    sched_destroy(s);
}

static void strict_fifo(sched_config *c)
{
    c->carma_interference = false;
    c->carma_backfill = false;
}

static void without_backfill_the_head_blocks(void **state)
{
    (void)state;
    sched *s = carma_sched(1, strict_fifo);
    sched_task r = ctask(10, 30 * GB, 100, LIGHT), h = ctask(1, 35 * GB, 10, LIGHT),
               b = ctask(2, 1 * GB, 10, LIGHT);
    int g0 = 0;
    sched_restore_running(s, &r, &g0, 1, GPU_AVAILABLE, 0, NULL);
    gpu_view v[1] = {busy_gpu(10 * GB, 0.1, 0.1, 0.1)};
    sched_submit(s, &h, NULL);
    sched_submit(s, &b, NULL);
    assert_false(sched_next(s, 0, v, &(sched_decision){0}));
    sched_destroy(s);
}

static void unknown_runtimes_pass_the_head_a_bounded_number_of_times(void **state)
{
    (void)state;
    sched *s = carma_sched(1, NULL);
    sched_task r = ctask(10, 30 * GB, NAN, LIGHT), h = ctask(1, 35 * GB, NAN, LIGHT);
    int g0 = 0;
    sched_restore_running(s, &r, &g0, 1, GPU_AVAILABLE, 0, NULL);
    gpu_view v[1] = {busy_gpu(10 * GB, 0.1, 0.1, 0.1)};
    sched_submit(s, &h, NULL);
    const sched_config *c = sched_get_config(s);
    sched_task b[20];
    int placed = 0;
    for (int i = 0; i < 20; i++) {
        b[i] = ctask(100 + (uint64_t)i, 64, NAN, LIGHT);
        sched_submit(s, &b[i], NULL);
    }
    sched_decision d;
    while (sched_next(s, 0, v, &d))
        placed++;
    assert_int_equal(placed, c->backfill_max_skips);
    assert_ptr_equal(sched_main_head(s), &h);
    sched_destroy(s);
}

/* ---- interference ---------------------------------------------------------------------------- */

static void collocates_only_where_progress_rises_most(void **state)
{
    (void)state;
    sched *s = carma_sched(2, NULL);
    sched_task heavy = ctask(10, 5 * GB, 1000, HEAVY), light = ctask(11, 5 * GB, 1000, LIGHT);
    int g0 = 0, g1 = 1;
    sched_restore_running(s, &heavy, &g0, 1, GPU_AVAILABLE, 0, NULL);
    sched_restore_running(s, &light, &g1, 1, GPU_AVAILABLE, 0, NULL);
    gpu_view v[2] = {busy_gpu(30 * GB, 0.95, 0.5, 0.2), busy_gpu(30 * GB, 0.1, 0.1, 0.05)};
    /* A light newcomer goes beside the light task (both keep ~97 % speed), not the heavy one. */
    sched_task x = ctask(1, 1 * GB, 100, LIGHT);
    sched_submit(s, &x, NULL);
    assert_true(next_on(s, 0, v, 1, 1));
    /* A heavy newcomer would halve or worse everyone's speed wherever it goes: it waits. */
    sched_task y = ctask(2, 1 * GB, 100, HEAVY);
    sched_submit(s, &y, NULL);
    assert_false(sched_next(s, 0, v, &(sched_decision){0}));
    sched_destroy(s);
}

/* ---- out-of-memory learning ------------------------------------------------------------------ */

/* Submits t and places it alone on the idle GPU 0. */
static void start_alone(sched *s, sched_task *t)
{
    gpu_view v[1] = {idle_gpu()};
    sched_submit(s, t, NULL);
    assert_true(next_on(s, 0, v, t->id, 0));
}

static void oom_alone_on_the_largest_gpu_is_not_retried(void **state)
{
    (void)state;
    sched *s = carma_sched(1, NULL);
    sched_task t = ctask(1, 20 * GB, 100, LIGHT);
    start_alone(s, &t);
    sched_oom_seen seen = {true, 39 * GB};
    assert_int_equal(sched_task_oom(s, &t, &seen, 5), SCHED_END_NEVER_FITS);
    assert_true(t.learned_known);
    assert_true(t.learned_mib > 40 * GB - 512);
    assert_int_equal(sched_recovery_len(s), 0);
    sched_destroy(s);
}

static void oom_alone_seen_low_grows_and_retries(void **state)
{
    (void)state;
    sched *s = carma_sched(1, NULL);
    sched_task t = ctask(1, 8 * GB, 100, LIGHT);
    start_alone(s, &t);
    /* Crashed alone, but not seen filling the GPU (another process may have held the rest):
     * not "too big": its figure is raised to the 9 GB seen. */
    sched_oom_seen seen = {true, 9 * GB};
    assert_int_equal(sched_task_oom(s, &t, &seen, 5), SCHED_END_RETRY);
    assert_int_equal(t.learned_mib, 9 * GB);
    sched_destroy(s);
}

static void collocated_oom_retries_with_the_peak_seen(void **state)
{
    (void)state;
    sched *s = carma_sched(1, NULL);
    gpu_view v[1] = {idle_gpu()};
    sched_task a = ctask(1, 5 * GB, 100, LIGHT), b = ctask(2, 5 * GB, 100, LIGHT);
    sched_submit(s, &a, NULL);
    sched_submit(s, &b, NULL);
    assert_true(next_on(s, 0, v, 1, 0));
    assert_true(next_on(s, 0, v, 2, 0));
    sched_oom_seen seen = {true, 12 * GB};
    assert_int_equal(sched_task_oom(s, &b, &seen, 5), SCHED_END_RETRY);
    uint64_t mib;
    mem_source src;
    bool learned;
    assert_true(sched_task_figure(sched_get_config(s), &b, &mib, &src, &learned));
    assert_true(learned);
    assert_int_equal(mib, 12 * GB);
    /* Retried with the learned figure, beside a (not on an idle GPU only). */
    v[0] = busy_gpu(30 * GB, 0.1, 0.1, 0.05);
    assert_true(next_on(s, 6, v, 2, 0));
    sched_destroy(s);
}

/* A collocated crash with nothing seen above the figure: the figure doubles, but no further
 * than the largest GPU, so that the guess alone never fails the task (a 25 GB task doubled to
 * 50 GB was failed as needing more than any GPU holds): it retries with a GPU to itself. */
static void an_unseen_crash_is_not_doubled_past_the_largest_gpu(void **state)
{
    (void)state;
    sched *s = carma_sched(1, NULL);
    gpu_view v[1] = {idle_gpu()};
    sched_task a = ctask(1, 5 * GB, 100, LIGHT), b = ctask(2, 25 * GB, 100, LIGHT);
    sched_submit(s, &a, NULL);
    sched_submit(s, &b, NULL);
    assert_true(next_on(s, 0, v, 1, 0));
    assert_true(next_on(s, 0, v, 2, 0));
    sched_oom_seen seen = {false, 0};
    assert_int_equal(sched_task_oom(s, &b, &seen, 5), SCHED_END_RETRY);
    uint64_t mib;
    mem_source src;
    bool learned;
    assert_true(sched_task_figure(sched_get_config(s), &b, &mib, &src, &learned));
    assert_true(learned && mib > 25 * GB && mib <= 40 * GB);
    /* not beside a, but on the GPU alone once a is gone */
    v[0] = busy_gpu(6 * GB, 0.1, 0.1, 0.05);
    assert_false(sched_next(s, 6, v, &(sched_decision){0}));
    sched_task_ended(s, &a, TASK_DONE, 7);
    v[0] = idle_gpu();
    assert_true(next_on(s, 8, v, 2, 0));
    sched_destroy(s);
}

/* A figure already above the largest GPU (a --mem bigger than any GPU, placed on an idle
 * one), crashed with nothing seen above it: the cap on doubling must not lower the figure to
 * the largest GPU (it was retried, each time knowing less than it was told); it never fits. */
static void a_figure_above_every_gpu_is_not_lowered(void **state)
{
    (void)state;
    sched *s = carma_sched(1, NULL);
    sched_task t = ctask(1, 60 * GB, 100, LIGHT);
    start_alone(s, &t);
    sched_oom_seen seen = {false, 0};
    assert_int_equal(sched_task_oom(s, &t, &seen, 5), SCHED_END_NEVER_FITS);
    assert_true(t.learned_known);
    assert_true(t.learned_mib >= 60 * GB);
    assert_int_equal(sched_recovery_len(s), 0);
    sched_destroy(s);
}

/* Seen filling GPU 0 alone while GPU 1's memory is unknown (total 0: its sample failed): GPU 1
 * may hold it, so it is retried, not ended as needing more than any GPU. */
static void a_gpu_of_unknown_memory_may_hold_it(void **state)
{
    (void)state;
    sched *s = carma_sched(2, NULL);
    gpu_view v[2] = {idle_gpu(), {0}};
    v[1].free_known = false;
    sched_task t = ctask(1, 20 * GB, 100, LIGHT);
    sched_submit(s, &t, NULL);
    assert_true(next_on(s, 0, v, 1, 0));
    sched_oom_seen seen = {true, 39 * GB};
    assert_int_equal(sched_task_oom(s, &t, &seen, 5), SCHED_END_RETRY);
    assert_true(t.learned_known && t.learned_mib > 40 * GB - 512);
    assert_int_equal(sched_recovery_len(s), 1);
    assert_null(sched_take_never_fits(s, v)); /* GPU 1 may still hold it */
    v[1] = idle_gpu(); /* seen, and no larger: it would wait in its queue for good */
    assert_ptr_equal(sched_take_never_fits(s, v), &t);
    assert_int_equal(sched_recovery_len(s), 0);
    sched_destroy(s);
}

static void no_learning(sched_config *c) { c->carma_oom_learning = false; }

/* Before any GPU's memory was seen a crash cannot be judged under carma's learning; the other
 * policies (and carma without learning) judge without memory. */
static void oom_judgeable_once_some_gpu_memory_is_seen(void **state)
{
    (void)state;
    gpu_view unknown[2] = {{0}, {0}}, known[2] = {{0}, idle_gpu()};
    sched *s = carma_sched(2, NULL);
    assert_false(sched_oom_judgeable(s));
    sched_see_gpus(s, unknown);
    assert_false(sched_oom_judgeable(s));
    sched_see_gpus(s, known);
    assert_true(sched_oom_judgeable(s));
    sched_destroy(s);
    s = carma_sched(2, no_learning);
    assert_true(sched_oom_judgeable(s));
    sched_destroy(s);
    sched_config cfg;
    sched_config_defaults(&cfg);
    cfg.policy = POLICY_EXCLUSIVE;
    s = sched_create(&cfg, 2, NULL);
    assert_non_null(s);
    assert_true(sched_oom_judgeable(s));
    sched_destroy(s);
}

static void without_learning_retries_are_blind_and_idle_only(void **state)
{
    (void)state;
    sched *s = carma_sched(1, no_learning);
    gpu_view v[1] = {idle_gpu()};
    sched_task a = ctask(1, 5 * GB, 100, LIGHT), b = ctask(2, 5 * GB, 100, LIGHT);
    sched_submit(s, &a, NULL);
    sched_submit(s, &b, NULL);
    assert_true(next_on(s, 0, v, 1, 0));
    assert_true(next_on(s, 0, v, 2, 0));
    sched_oom_seen seen = {true, 12 * GB};
    assert_int_equal(sched_task_oom(s, &b, &seen, 5), SCHED_END_RETRY);
    assert_false(b.learned_known);
    v[0] = busy_gpu(30 * GB, 0.1, 0.1, 0.05);
    assert_false(sched_next(s, 6, v, &(sched_decision){0}));
    sched_destroy(s);
}

/* ---- longest first -------------------------------------------------------------------------- */

static void longest_first_starts_the_longest_task(void **state)
{
    (void)state;
    for (int on = 0; on < 2; on++) {
        sched *s = carma_sched(1, on ? NULL : fifo_by_memory);
        gpu_view v[1] = {idle_gpu()};
        sched_task a = ctask(1, 30 * GB, 100, HEAVY), b = ctask(2, 30 * GB, 9000, HEAVY);
        sched_submit(s, &a, NULL);
        sched_submit(s, &b, NULL);
        assert_true(next_on(s, 0, v, on ? 2 : 1, 0));
        sched_destroy(s);
    }
}

static void a_claimed_limit_buys_no_place_at_the_front(void **state)
{
    (void)state;
    sched *s = carma_sched(1, NULL);
    gpu_view v[1] = {idle_gpu()};
    sched_task a = ctask(1, 30 * GB, 100, HEAVY), b = ctask(2, 30 * GB, 9000, HEAVY);
    b.runtime_is_limit = true; /* --time 2:30:00, not a measurement */
    sched_submit(s, &a, NULL);
    sched_submit(s, &b, NULL);
    assert_true(next_on(s, 0, v, 1, 0));
    sched_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ledger_places_during_launch_and_counts_commitments),
        cmocka_unit_test(ledger_never_gives_more_than_measured),
        cmocka_unit_test(without_ledger_the_grace_period_holds),
        cmocka_unit_test(backfill_keeps_the_heads_reservation),
        cmocka_unit_test(backfill_refuses_what_would_delay_the_head),
        cmocka_unit_test(without_backfill_the_head_blocks),
        cmocka_unit_test(unknown_runtimes_pass_the_head_a_bounded_number_of_times),
        cmocka_unit_test(collocates_only_where_progress_rises_most),
        cmocka_unit_test(oom_alone_on_the_largest_gpu_is_not_retried),
        cmocka_unit_test(oom_alone_seen_low_grows_and_retries),
        cmocka_unit_test(placement_beside_a_starting_task_is_collocated),
        cmocka_unit_test(collocated_oom_retries_with_the_peak_seen),
        cmocka_unit_test(an_unseen_crash_is_not_doubled_past_the_largest_gpu),
        cmocka_unit_test(a_figure_above_every_gpu_is_not_lowered),
        cmocka_unit_test(a_gpu_of_unknown_memory_may_hold_it),
        cmocka_unit_test(oom_judgeable_once_some_gpu_memory_is_seen),
        cmocka_unit_test(without_learning_retries_are_blind_and_idle_only),
        cmocka_unit_test(longest_first_starts_the_longest_task),
        cmocka_unit_test(a_claimed_limit_buys_no_place_at_the_front),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
