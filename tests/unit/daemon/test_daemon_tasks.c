/* test_daemon_tasks.c — the daemon's task records without a daemon: the memory figure a task is
 * shown with (and capped at under MPS) under every kind of policy, with where it came from as
 * a typed answer (the policy's floor, a submitted figure, the history), and in the task's
 * JSON; and the invariants registry.c checks (a task's state agrees with the core's view of it
 * and with the running set). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/daemon_int.h"
#include "daemon/journal.h"
#include "daemon/registry.h"
#include "daemon/tasks.h"
#include "util/clock.h"

/* A daemon state with only a core, for the given policy (and estimator, "" for the default). */
static daemon_state *state_for(const char *policy, const char *estimator, uint64_t or_floor)
{
    daemon_state *d = calloc(1, sizeof *d);
    assert_non_null(d);
    sched_config cfg;
    sched_config_defaults(&cfg);
    assert_int_equal(policy_from_name(policy, &cfg.policy), 0);
    if (*estimator)
        assert_int_equal(mem_source_from_estimator(estimator, &cfg.estimator), 0);
    cfg.or_min_free_mib = or_floor;
    carma_err err;
    assert_non_null(d->core = sched_create(&cfg, 2, &err));
    d->ngpus = 2;
    return d;
}

static void free_state(daemon_state *d)
{
    d_free_tasks(d);
    free(d->running);
    sched_destroy(d->core);
    free(d);
}

/* A task with the submitted figures (-1: none) and a history figure (-1: none). */
static dtask *task_with(int64_t oracle, int64_t horus, int64_t gpumemnet, int64_t history)
{
    dtask *t = d_new_task();
    assert_non_null(t);
    t->sub.ngpus = 1;
    if (oracle >= 0)
        mem_figures_set(&t->sub.mem, MEM_ORACLE, (uint64_t)oracle);
    if (horus >= 0)
        mem_figures_set(&t->sub.mem, MEM_HORUS, (uint64_t)horus);
    if (gpumemnet >= 0)
        mem_figures_set(&t->sub.mem, MEM_GPUMEMNET, (uint64_t)gpumemnet);
    t->history_mib = history;
    d_fill_sched_task(t);
    return t;
}

typedef struct expect {
    dmem_from from;
    uint64_t mib;
    const char *name; /* NULL: none */
} expect;

static void check(const daemon_state *d, const dtask *t, expect e, const char *what)
{
    dtask_mem m = d_task_mem(d, t);
    const char *name = d_task_mem_name(m);
    if (m.from != e.from || (e.from != DMEM_NONE && m.mib != e.mib) ||
        (e.name ? !name || strcmp(name, e.name) : name != NULL))
        fail_msg("%s: got (%d, %llu, %s), expected (%d, %llu, %s)", what, (int)m.from,
                 (unsigned long long)m.mib, name ? name : "null", (int)e.from,
                 (unsigned long long)e.mib, e.name ? e.name : "null");
}

static void memory_figure_and_its_source_under_each_policy(void **state)
{
    (void)state;
    dtask *full = task_with(8000, 3000, 16000, -1);  /* measured and two estimates */
    dtask *hist = task_with(-1, -1, 16000, 6000);    /* measured on an earlier identical run */
    dtask *est = task_with(-1, 3000, 16000, -1);     /* estimates only */
    dtask *none = task_with(-1, -1, -1, -1);
    dtask *same = task_with(5120, -1, 5120, -1);     /* two sources, one value */
    static const struct {
        const char *policy, *estimator;
        uint64_t floor;
        expect full, hist, est, none, same;
    } cases[] = {
        /* policies that place with no figure: the measured one, else the first estimate */
        {"exclusive", "", 5120, {DMEM_SUBMITTED, 8000, "oracle"}, {DMEM_HISTORY, 6000, "history"},
         {DMEM_SUBMITTED, 3000, "horus"}, {DMEM_NONE, 0, NULL}, {DMEM_SUBMITTED, 5120, "oracle"}},
        {"horus", "", 5120, {DMEM_SUBMITTED, 8000, "oracle"}, {DMEM_HISTORY, 6000, "history"},
         {DMEM_SUBMITTED, 3000, "horus"}, {DMEM_NONE, 0, NULL}, {DMEM_SUBMITTED, 5120, "oracle"}},
        /* the or-* floor is the policy's, whatever the task has (even a floor of 0) */
        {"or-magm", "", 5120, {DMEM_POLICY, 5120, "policy"}, {DMEM_POLICY, 5120, "policy"},
         {DMEM_POLICY, 5120, "policy"}, {DMEM_POLICY, 5120, "policy"},
         {DMEM_POLICY, 5120, "policy"}},
        {"or-lug", "", 0, {DMEM_POLICY, 0, "policy"}, {DMEM_POLICY, 0, "policy"},
         {DMEM_POLICY, 0, "policy"}, {DMEM_POLICY, 0, "policy"}, {DMEM_POLICY, 0, "policy"}},
        /* the measured figure; without one, the first estimate */
        {"oracle-magm", "gpumemnet", 5120, {DMEM_SUBMITTED, 8000, "oracle"},
         {DMEM_HISTORY, 6000, "history"}, {DMEM_SUBMITTED, 3000, "horus"}, {DMEM_NONE, 0, NULL},
         {DMEM_SUBMITTED, 5120, "oracle"}},
        {"lucid", "", 5120, {DMEM_SUBMITTED, 8000, "oracle"}, {DMEM_HISTORY, 6000, "history"},
         {DMEM_SUBMITTED, 3000, "horus"}, {DMEM_NONE, 0, NULL}, {DMEM_SUBMITTED, 5120, "oracle"}},
        /* the estimator's figure; without one, the measured one, else the first estimate */
        {"est-magm", "gpumemnet", 5120, {DMEM_SUBMITTED, 16000, "gpumemnet"},
         {DMEM_SUBMITTED, 16000, "gpumemnet"}, {DMEM_SUBMITTED, 16000, "gpumemnet"},
         {DMEM_NONE, 0, NULL}, {DMEM_SUBMITTED, 5120, "gpumemnet"}},
        {"est-lug", "horus", 5120, {DMEM_SUBMITTED, 3000, "horus"}, {DMEM_HISTORY, 6000, "history"},
         {DMEM_SUBMITTED, 3000, "horus"}, {DMEM_NONE, 0, NULL}, {DMEM_SUBMITTED, 5120, "oracle"}},
        {"est-magm", "none", 5120, {DMEM_SUBMITTED, 8000, "oracle"},
         {DMEM_HISTORY, 6000, "history"}, {DMEM_SUBMITTED, 3000, "horus"}, {DMEM_NONE, 0, NULL},
         {DMEM_SUBMITTED, 5120, "oracle"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        daemon_state *d = state_for(cases[i].policy, cases[i].estimator, cases[i].floor);
        char what[96];
        snprintf(what, sizeof what, "%s/%s: ", cases[i].policy, cases[i].estimator);
        size_t o = strlen(what);
        strcpy(what + o, "full");
        check(d, full, cases[i].full, what);
        strcpy(what + o, "history");
        check(d, hist, cases[i].hist, what);
        strcpy(what + o, "estimates");
        check(d, est, cases[i].est, what);
        strcpy(what + o, "none");
        check(d, none, cases[i].none, what);
        strcpy(what + o, "same value");
        check(d, same, cases[i].same, what);
        free_state(d);
    }
    d_free_task(full);
    d_free_task(hist);
    d_free_task(est);
    d_free_task(none);
    d_free_task(same);
}

static void task_json_shows_the_figure_and_the_attempt(void **state)
{
    (void)state;
    daemon_state *d = state_for("est-magm", "gpumemnet", 5120);
    dtask *t = task_with(-1, -1, 16000, 6000);
    t->st.id = 4;
    t->user = strdup("ana");
    t->sub.command = strdup("python t.py");
    t->sub.cwd = strdup("/");
    t->sub.name = strdup("t");
    json_t *j = d_task_json(d, t, true);
    assert_int_equal(json_integer_value(json_object_get(j, "mem_mib")), 16000);
    assert_string_equal(json_string_value(json_object_get(j, "mem_source")), "gpumemnet");
    assert_true(json_is_null(json_object_get(j, "peak_mib")));
    assert_null(json_object_get(j, "last_attempt")); /* never launched */
    json_decref(j);
    t->att = (attempt){.n = 1, .ngpus = 1, .gpus = {1}, .dir = strdup("/x/4.1"), .pid = 99,
                       .started = 10.5, .ended = 20.5, .exit = {true, 3, 0}, .peak_mib = 7000};
    j = d_task_json(d, t, true);
    json_t *a = json_object_get(j, "last_attempt");
    assert_int_equal(json_integer_value(json_object_get(j, "peak_mib")), 7000);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(j, "gpus"), 0)), 1);
    assert_int_equal(json_integer_value(json_object_get(a, "n")), 1);
    assert_string_equal(json_string_value(json_object_get(a, "dir")), "/x/4.1");
    assert_int_equal(json_integer_value(json_object_get(a, "pid")), 99);
    assert_int_equal(json_integer_value(json_object_get(a, "exit_code")), 3);
    assert_true(json_is_null(json_object_get(a, "signal")));
    json_decref(j);
    d_free_task(t);
    free_state(d);
}

static void invariants_tie_state_core_and_running_set(void **state)
{
    (void)state;
    daemon_state *d = state_for("exclusive", "", 5120);
    carma_err err;
    dtask *t = task_with(1000, -1, -1, -1);
    t->st.id = 1;
    assert_int_equal(d_put_task(d, t, &err), 0);
    assert_false(d_task_ok(d, t)); /* queued, but not in the core's queue yet */
    assert_int_equal(sched_submit(d->core, &t->st, &err), 0);
    assert_true(d_task_ok(d, t));
    assert_true(d_tasks_ok(d));
    t->recovery = true; /* says recovery, is in the main queue */
    assert_false(d_task_ok(d, t));
    t->recovery = false;

    /* Placed: running once its attempt is written and it is in the running set. */
    gpu_view views[2] = {{40000, 40000, true, 0, 0, 0, true}, {40000, 40000, true, 0, 0, 0, true}};
    sched_decision dec;
    assert_true(sched_next(d->core, 0, views, &dec));
    t->state = DS_RUNNING;
    t->att = (attempt){.n = 1, .ngpus = 1, .dir = strdup("/x/1.1"), .peak_mib = -1};
    t->att.gpus[0] = dec.gpus[0];
    assert_false(d_task_ok(d, t)); /* not in the running set */
    assert_int_equal(d_running_add(d, t), 0);
    assert_true(d_task_ok(d, t));
    assert_true(d_tasks_ok(d));
    t->att.gpus[0] = 1 - dec.gpus[0]; /* not where the core placed it */
    assert_false(d_task_ok(d, t));
    t->att.gpus[0] = dec.gpus[0];
    t->att.n = 2; /* not the core's attempt count */
    assert_false(d_task_ok(d, t));
    t->att.n = 1;
    d->running[0] = NULL; /* the running set lost it */
    assert_false(d_task_ok(d, t));
    d->running[0] = t;

    /* Ended: out of the running set and of the core. */
    d_running_remove(d, t);
    assert_false(d_task_ok(d, t)); /* says running */
    assert_int_equal(sched_task_ended(d->core, &t->st, TASK_DONE, 1), SCHED_END_FINAL);
    t->state = DS_DONE;
    assert_true(d_task_ok(d, t));
    assert_true(d_tasks_ok(d));
    t->att.launch_pending = true; /* pending launch of an ended task */
    assert_false(d_task_ok(d, t));
    t->att.launch_pending = false;
    free_state(d);
}

/* What the core is told: the time limit is the runtime estimate the carma policy's backfill
 * plans with; without one, the runtime and solo profile are unknown (NaN), never 0. A parked
 * task (held, waiting for dependencies) is queued but not in the core. */
static void core_view_and_parked_tasks(void **state)
{
    (void)state;
    dtask *t = task_with(1000, -1, -1, -1);
    assert_true(isnan(t->st.runtime_est_s));
    assert_true(isnan(t->st.solo_smact) && isnan(t->st.queued_at));
    t->sub.time_limit_s = 3600;
    d_fill_sched_task(t);
    assert_true(t->st.runtime_est_s == 3600.0);

    daemon_state *d = state_for("carma", "", 0);
    t->st.id = 1;
    t->state = DS_QUEUED;
    assert_int_equal(d_put_task(d, t, NULL), 0);
    t->held = t->parked = true;
    assert_true(d_task_ok(d, t)); /* queued, parked: not in the core */
    t->parked = false;
    assert_false(d_task_ok(d, t)); /* queued, not parked: must be in the core */
    assert_int_equal(sched_submit(d->core, &t->st, NULL), 0);
    assert_true(d_task_ok(d, t));
    free_state(d);
}

/* An attempt this daemon launched runs by the monotonic clock: a wall clock set an hour
 * forward (NTP correcting a clock that was off) times no task out. One found at a restart has
 * only the wall clock. */
static void time_limit_by_the_monotonic_clock(void **state)
{
    (void)state;
    dtask *t = d_new_task();
    assert_non_null(t);
    assert_true(isnan(t->att.started_mono));
    t->sub.time_limit_s = 60;
    t->att.started = daemon_wall_now() - 3600; /* the wall clock has moved on an hour */
    t->att.started_mono = clock_mono_s() - 5;  /* but the attempt has run 5 s */
    assert_true(d_attempt_run_s(t) >= 5 && d_attempt_run_s(t) < 60);
    assert_false(d_past_time_limit(t, d_attempt_run_s(t)));
    t->att.started_mono = NAN; /* found at a restart */
    assert_true(d_past_time_limit(t, d_attempt_run_s(t)));
    t->sub.time_limit_s = 0; /* none */
    assert_false(d_past_time_limit(t, d_attempt_run_s(t)));
    d_free_task(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(memory_figure_and_its_source_under_each_policy),
        cmocka_unit_test(task_json_shows_the_figure_and_the_attempt),
        cmocka_unit_test(invariants_tie_state_core_and_running_set),
        cmocka_unit_test(core_view_and_parked_tasks),
        cmocka_unit_test(time_limit_by_the_monotonic_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
