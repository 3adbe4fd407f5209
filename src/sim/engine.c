/* engine.c — the discrete-event loop of `carma simulate`: arrivals, start-up, allocation (or an
 * out-of-memory crash), runs stretched by interference, completions; the scheduling core decides
 * every placement. GPU views are kept up to date incrementally (see gpu_activity.h). */
#include "sim/engine_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_metrics.h"

/* ---- job life cycle -------------------------------------------------------------------------- */

static void job_finished(sim *s, sim_job *j, bool completed)
{
    sim_job_result *r = &s->out->jobs[j - s->jobs];
    r->busy_s += s->now - j->attempt_start;
    r->completed = completed;
    r->end_s = s->now;
    r->wait_s = r->end_s - r->submit_s - r->busy_s;
    j->state = completed ? JOB_DONE : JOB_FAILED;
    if (completed)
        s->done_t = s->now;
    /* The core holds it no more: back to the pool, and no memo may take a later job that
     * reuses it for this one. */
    if (s->blocked_head == j->st) {
        s->blocked = false;
        s->blocked_head = NULL;
    }
    if (s->refreshed_head == j->st)
        s->refreshed_head = NULL;
    task_pool_put(&s->tasks, j->st);
    j->st = NULL;
    s->finished++;
    if (s->setup->progress && s->finished % s->progress_step == 0)
        s->setup->progress(s->finished, s->njobs, s->setup->progress_user);
}

/* CPU start-up of an attempt: measured, else the configured default; never past its run. */
static double job_startup_s(const sim *s, const sim_job *j)
{
    double t = isnan(j->spec->startup_s) ? s->setup->params.startup_s : j->spec->startup_s;
    return fmin(t, j->spec->runtime_s);
}

static int dispatch(sim *s, const sched_decision *d)
{
    sim_job *j = &s->jobs[d->task->id - 1];
    sim_job_result *r = &s->out->jobs[j - s->jobs];
    j->state = JOB_STARTING;
    j->attempt_start = s->now;
    r->attempts = j->st->attempts;
    if (isnan(r->first_start_s))
        r->first_start_s = s->now;
    r->ngpus = d->ngpus;
    memcpy(r->gpus, d->gpus, sizeof r->gpus);
    r->collocated = d->collocated;
    /* Under MPS caps a collocated task may hold at most its figure + margin (the daemon's
     * mps); 0: uncapped. */
    j->cap_mib = s->setup->params.mps_caps && d->collocated && d->requirement_mib > 0
                     ? d->requirement_mib + s->setup->sched.margin_mib
                     : 0;
    for (int k = 0; k < d->ngpus; k++)
        gpu_starting(s, d->gpus[k], +1);
    if (s->setup->params.history) { /* whether its GPUs are its own, as the daemon tells */
        j->placed_seq = ++s->nplaced;
        j->shared = false;
        for (int k = 0; k < d->ngpus; k++) {
            s->placed_seq[d->gpus[k]] = j->placed_seq;
            j->shared |= sched_gpu_ledger(s->core, d->gpus[k]).ntasks > 1;
        }
    }
    s->changes++; /* its GPUs are launching */
    s->out->summary.placements++;
    if (d->collocated)
        s->out->summary.collocated_placements++;
    return event_heap_push(&s->heap, s->now + job_startup_s(s, j), EV_ALLOCATE,
                           (int32_t)(j - s->jobs), 0);
}

/* GPUs whose grace period has ended by now (the core releases them when now >= seen_at +
 * grace_s) have improved: a blocked head may fit there. */
static void grace_ends_until_now(sim *s)
{
    const sim_event *e;
    sim_event done;
    while ((e = event_heap_peek(&s->grace_ends)) && e->time <= s->now) {
        event_heap_pop(&s->grace_ends, &done);
        gpu_improved(s, done.job);
    }
}

/* True when the memo says sched_next would fail again for `head`: the same head failed, and no
 * GPU improved since is one the core could place it on now. Clears the improved GPUs. */
static bool still_blocked(sim *s, const sched_task *head, const sched_gpu_needs *f)
{
    bool blocked = s->blocked && s->blocked_head == head;
    if (blocked && s->ndirty > 0)
        sched_advance(s->core, s->now); /* grace states as sched_next would see them */
    for (int k = 0; k < s->ndirty; k++) {
        int gi = s->dirty[k];
        s->gpus[gi].dirty = false;
        if (blocked && gpu_may_take(s, gi, f))
            blocked = false;
    }
    s->ndirty = 0;
    return blocked;
}

/* Places whatever the core lets through now; asks to be woken while windows still move. */
static int try_place(sim *s)
{
    grace_ends_until_now(s);
    if (sched_main_len(s->core) + sched_recovery_len(s->core) == 0)
        return 0;
    sched_decision d;
    const sched_task *refreshed = NULL;
    for (;;) {
        const sched_task *head = sched_recovery_head(s->core);
        if (!head)
            head = sched_main_head(s->core);
        if (!head)
            break;
        sched_gpu_needs f = sched_head_needs(s->core, head);
        /* Windows matter only when the head cannot have free GPUs by the exclusive-first
         * rule; refreshing them is the costly part at scale, so it is done only then, for
         * the GPUs the core could read them on for this head. */
        if (head != refreshed && head->ngpus > s->nfree) {
            refresh_views(s, head, &f);
            refreshed = head;
        }
        /* An overloaded server would otherwise have the core scan every GPU at almost every
         * event, only to fail again. */
        if (still_blocked(s, head, &f))
            break;
        if (!sched_next(s->core, s->now, s->views, &d)) {
            s->blocked = true;
            s->blocked_head = head;
            break;
        }
        s->blocked = false;
        if (dispatch(s, &d))
            return -1;
    }
    /* Blocked: a moving window can let a GPU through the gate later with no other event, so
     * look again at the next monitor sample (the live daemon retries every second). */
    if (sched_main_len(s->core) + sched_recovery_len(s->core) > 0 && gpu_any_warm(s)) {
        double next = floor(s->now) + 1.0;
        if (!(s->pending_retry > s->now && s->pending_retry <= next)) {
            s->pending_retry = next;
            return event_heap_push(&s->heap, next, EV_RETRY, -1, 0);
        }
    }
    return 0;
}

/* True when every GPU of j can hold `extra` more MiB, and its MPS cap (if any) allows it. */
static bool job_fits(const sim *s, const sim_job *j, uint64_t extra)
{
    if (j->cap_mib && j->held_mib + extra > j->cap_mib)
        return false;
    for (int k = 0; k < j->st->ngpus; k++)
        if (s->gpus[j->st->gpus[k]].used_mib + extra > s->setup->gpu->memory_mib)
            return false;
    return true;
}

/* The attempt ran out of memory asking for `needed` MiB in all: it frees what it held and goes
 * to recovery (or fails). */
static int job_oom(sim *s, sim_job *j, uint64_t needed)
{
    sim_job_result *r = &s->out->jobs[j - s->jobs];
    if (j->state == JOB_RUNNING) {
        j->state = JOB_QUEUED; /* not running while its GPUs are updated */
        for (int k = 0; k < j->st->ngpus; k++)
            if (gpu_change(s, j->st->gpus[k], j, -1))
                return -1;
        j->held_mib = 0;
    }
    r->oom_crashes++;
    s->out->summary.oom_crashes++;
    r->busy_s += s->now - j->attempt_start;
    for (int k = 0; k < j->st->ngpus; k++) /* released (a recovery makes a new head) */
        gpu_improved(s, j->st->gpus[k]);
    sched_oom_seen seen = {true, needed};
    sched_end end = sched_task_oom(s->core, j->st, &seen, s->now);
    sim_teach_identical(s, j); /* before its task goes back to the pool */
    if (end == SCHED_END_RETRY) {
        j->state = JOB_QUEUED;
    } else {
        r->busy_s -= s->now - j->attempt_start; /* job_finished adds it back */
        job_finished(s, j, false);
    }
    return try_place(s);
}

static int on_allocate(sim *s, sim_job *j)
{
    const sim_job_spec *sp = j->spec;
    for (int k = 0; k < j->st->ngpus; k++)
        gpu_starting(s, j->st->gpus[k], -1);
    if (!job_fits(s, j, sp->early_mib)) /* crashes at allocation (it holds nothing yet) */
        return job_oom(s, j, sp->early_mib);
    j->state = JOB_RUNNING;
    j->remaining_s = sp->runtime_s - job_startup_s(s, j);
    j->speed = 1.0;
    j->last_update = s->now;
    j->held_mib = sp->early_mib;
    if (sp->peak_mib > sp->early_mib &&
        event_heap_push(&s->heap, s->now + s->setup->params.mem_ramp_s, EV_RAMP,
                        (int32_t)(j - s->jobs), (uint32_t)j->st->attempts))
        return -1;
    for (int k = 0; k < j->st->ngpus; k++) {
        int gi = j->st->gpus[k];
        if (gpu_change(s, gi, j, +1))
            return -1;
        sched_process_seen(s->core, j->st, gi, s->now);
    }
    /* Its GPUs' grace periods end then (the EV_RETRY below comes a little later). */
    for (int k = 0; k < j->st->ngpus; k++)
        if (event_heap_push(&s->grace_ends, s->now + s->setup->sched.grace_s, EV_RETRY,
                            j->st->gpus[k], 0))
            return -1;
    if (event_heap_push(&s->heap, s->now + s->setup->sched.grace_s + GRACE_EPSILON_S, EV_RETRY,
                        -1, 0))
        return -1;
    return try_place(s);
}

/* The attempt reaches its full peak: it grows, or crashes if a GPU cannot hold it. */
static int on_ramp(sim *s, sim_job *j)
{
    uint64_t extra = j->spec->peak_mib - j->held_mib;
    if (!job_fits(s, j, extra))
        return job_oom(s, j, j->spec->peak_mib);
    for (int k = 0; k < j->st->ngpus; k++) {
        s->gpus[j->st->gpus[k]].used_mib += extra;
        if (gpu_memory_changed(s, j->st->gpus[k]))
            return -1;
    }
    j->held_mib = j->spec->peak_mib;
    return 0;
}

/* A done run the daemon's run history would keep: its GPUs its own from placement to end. */
static void remember_solo_run(sim *s, const sim_job *j)
{
    bool solo = !j->shared;
    for (int k = 0; k < j->st->ngpus && solo; k++)
        solo = s->placed_seq[j->st->gpus[k]] == j->placed_seq;
    if (solo)
        sim_history_record(&s->history, (size_t)(j - s->jobs), j->spec,
                           s->now - j->attempt_start, job_startup_s(s, j));
}

static int on_complete(sim *s, sim_job *j)
{
    if (s->setup->params.history)
        remember_solo_run(s, j);
    j->state = JOB_DONE;
    for (int k = 0; k < j->st->ngpus; k++)
        if (gpu_change(s, j->st->gpus[k], j, -1))
            return -1;
    j->held_mib = 0;
    sched_task_ended(s->core, j->st, TASK_DONE, s->now);
    job_finished(s, j, true);
    return try_place(s);
}

/* The core's task for job i, made when it arrives. */
static void job_task_init(const sim *s, sim_job *j, size_t i)
{
    const sim_job_spec *sp = j->spec;
    sched_task_init(j->st);
    j->st->id = i + 1;
    j->st->ngpus = sp->ngpus;
    j->st->mem = sp->mem;
    /* the facts the policies plan with: the catalog's measurements, or with sim_history
     * only what the daemon's run history will have when the task arrives */
    if (!s->setup->params.history) {
        j->st->profiled_util = sp->util;
        j->st->lucid_class = sp->lucid_class;
        j->st->runtime_est_s = sp->runtime_s;
        j->st->solo_smact = sp->smact;
        j->st->solo_drama = sp->drama;
    }
    j->st->queued_at = sp->submit_s;
}

static int handle(sim *s, const sim_event *e)
{
    sim_job *j = e->job >= 0 ? &s->jobs[e->job] : NULL;
    switch (e->kind) {
    case EV_ARRIVAL: {
        if (!(j->st = task_pool_get(&s->tasks)))
            return carma_err_set(&s->why, "out of memory");
        job_task_init(s, j, (size_t)e->job);
        if (s->setup->params.history)
            sim_history_fill(&s->history, (size_t)e->job, j->st);
        sim_learn_on_arrival(s, j);
        s->out->jobs[e->job].runtime_est_s = j->st->runtime_est_s;
        if (sched_submit(s->core, j->st, &s->why))
            return -1;
        j->state = JOB_QUEUED;
        /* A policy that places tasks behind a blocked head (backfill) may place this one. */
        if (s->blocked && sched_head_needs(s->core, s->blocked_head).any_task)
            s->blocked = false;
        return try_place(s);
    }
    case EV_ALLOCATE:
        return on_allocate(s, j);
    case EV_COMPLETE:
        if (j->state != JOB_RUNNING || e->version != j->version)
            return 0; /* superseded by a later speed change */
        return on_complete(s, j);
    case EV_RAMP:
        if (j->state != JOB_RUNNING || e->version != (uint32_t)j->st->attempts)
            return 0; /* that attempt is over */
        return on_ramp(s, j);
    case EV_RETRY:
        return try_place(s);
    }
    return 0;
}

/* ---- set-up, run, results -------------------------------------------------------------------- */

/* How errors name job i: "TRACE: seq N (NAME)", the row a reader can find in the trace (its
 * position in the file is not its seq); "job I (NAME)" for jobs from no trace. */
static void job_label(char *buf, size_t size, const sim_setup *setup, const sim_job_spec *j,
                      size_t i)
{
    const char *name = j->name ? j->name : "?";
    int n = setup->source ? snprintf(buf, size, "%s: ", setup->source) : 0;
    if (n < 0 || (size_t)n >= size)
        n = 0;
    if (j->seq > 0)
        snprintf(buf + n, size - (size_t)n, "seq %d (%s)", j->seq, name);
    else
        snprintf(buf + n, size - (size_t)n, "job %zu (%s)", i + 1, name);
}

static int check_jobs(const sim_setup *setup, const sim_job_spec *jobs, size_t n, carma_err *err)
{
    for (size_t i = 0; i < n; i++) {
        const sim_job_spec *j = &jobs[i];
        char why[80];
        if (j->ngpus < 1 || j->ngpus > setup->ngpus || j->ngpus > SCHED_MAX_TASK_GPUS)
            snprintf(why, sizeof why, " needs %d GPUs; the server has %d", j->ngpus,
                     setup->ngpus);
        else if (!(j->runtime_s > 0) || !isfinite(j->runtime_s))
            snprintf(why, sizeof why, " has no solo runtime");
        else if (j->early_mib > j->peak_mib)
            snprintf(why, sizeof why, ": early peak above its full peak");
        else if (!isfinite(j->submit_s) || j->submit_s < 0 ||
                 (i > 0 && j->submit_s < jobs[i - 1].submit_s))
            snprintf(why, sizeof why, ": submission times must be >= 0 and non-decreasing");
        else
            continue;
        char who[sizeof err->msg];
        job_label(who, sizeof who, setup, j, i);
        return carma_err_set(err, "%s%s", who, why);
    }
    return 0;
}

static void sim_cleanup(sim *s)
{
    sched_destroy(s->core);
    event_heap_free(&s->heap);
    event_heap_free(&s->grace_ends);
    for (int g = 0; s->gpus && g < s->setup->ngpus; g++)
        free(s->gpus[g].tasks);
    free(s->gpus);
    free(s->views);
    free(s->warm);
    free(s->dirty);
    free(s->jobs);
    task_pool_free(&s->tasks);
    free(s->placed_seq);
    sim_history_free(&s->history);
}

static int sim_init(sim *s, const sim_setup *setup, const sim_job_spec *jobs, size_t njobs,
                    sim_result *out, carma_err *err)
{
    memset(s, 0, sizeof *s);
    event_heap_init(&s->heap);
    event_heap_init(&s->grace_ends);
    task_pool_init(&s->tasks);
    s->setup = setup;
    s->out = out;
    s->njobs = njobs;
    s->progress_step = njobs >= 100 ? njobs / 100 : 1;
    s->core = sched_create(&setup->sched, setup->ngpus, err);
    if (!s->core)
        return -1;
    size_t ng = (size_t)setup->ngpus;
    s->gpus = calloc(ng, sizeof *s->gpus);
    s->views = calloc(ng, sizeof *s->views);
    s->warm = calloc(ng, sizeof *s->warm);
    s->dirty = calloc(ng, sizeof *s->dirty);
    s->jobs = calloc(njobs ? njobs : 1, sizeof *s->jobs);
    out->jobs = calloc(njobs ? njobs : 1, sizeof *out->jobs);
    if (!s->gpus || !s->views || !s->warm || !s->dirty || !s->jobs || !out->jobs)
        return carma_err_set(err, "out of memory");
    if (sim_history_init(&s->history, jobs, njobs, err))
        return -1;
    if (setup->params.history && !(s->placed_seq = calloc(ng, sizeof *s->placed_seq)))
        return carma_err_set(err, "out of memory");
    out->njobs = njobs;
    s->t_start = njobs ? jobs[0].submit_s : 0;
    activity_sample idle = {0, 0, 0};
    s->nfree = setup->ngpus;
    s->refreshed_second = NAN;
    s->done_t = NAN;
    for (size_t g = 0; g < ng; g++) {
        s->gpus[g].agg_second = NAN;
        s->gpus[g].snap_t = NAN;
        s->gpus[g].last_t = s->t_start;
        gpu_activity_init(&s->gpus[g].activity, idle);
        s->views[g] = (gpu_view){setup->gpu->memory_mib, setup->gpu->memory_mib, true, 0, 0, 0,
                                 true};
    }
    for (size_t i = 0; i < njobs; i++) {
        sim_job *j = &s->jobs[i];
        j->spec = &jobs[i];
        j->pressure = sim_pressure(&setup->params, jobs[i].smact, jobs[i].drama);
        out->jobs[i].submit_s = jobs[i].submit_s;
        out->jobs[i].first_start_s = NAN;
        out->jobs[i].end_s = NAN;
        out->jobs[i].wait_s = NAN;
        if (event_heap_push(&s->heap, jobs[i].submit_s, EV_ARRIVAL, (int32_t)i, 0))
            return carma_err_set(err, "out of memory");
    }
    return 0;
}

int sim_run(const sim_setup *setup, const sim_job_spec *jobs, size_t njobs, sim_result *out,
            carma_err *err)
{
    memset(out, 0, sizeof *out);
    if (!setup->gpu || setup->ngpus < 1)
        return carma_err_set(err, "the simulated server needs at least one GPU");
    if (sched_config_validate(&setup->sched, err) || sim_params_validate(&setup->params, err))
        return -1;
    if (check_jobs(setup, jobs, njobs, err))
        return -1;
    sim s;
    int rc = sim_init(&s, setup, jobs, njobs, out, err);
    sim_event e;
    while (rc == 0 && event_heap_pop(&s.heap, &e)) {
        /* Only absurd model coefficients get here (a co-runner's pressure so large that a
         * task's speed is 0, its end infinite or NaN): a NaN time never advances the clock. */
        if (!isfinite(e.time)) {
            rc = carma_err_set(err, "simulation failed after t = %.1f s: a task's end is no "
                               "longer a finite time (are the sim_interference_* coefficients "
                               "too large?)", s.now);
            break;
        }
        s.now = e.time;
        out->summary.events++;
        if (handle(&s, &e))
            rc = carma_err_set(err, "simulation failed at t = %.1f s: %s", s.now,
                               s.why.msg[0] ? s.why.msg : "out of memory");
    }
    if (rc == 0) {
        double util_s = 0, energy_j = 0;
        double t_end = s.t_start;
        for (size_t i = 0; i < njobs; i++)
            if (out->jobs[i].completed && out->jobs[i].end_s > t_end)
                t_end = out->jobs[i].end_s;
        s.now = t_end;
        for (int g = 0; g < setup->ngpus; g++) {
            sim_gpu *gpu = &s.gpus[g];
            /* one accounted past the makespan (a task failing after the last completion):
             * its integrals as they were at the makespan's end */
            bool past = gpu->last_t > t_end && gpu->snap_t == t_end;
            gpu_account(&s, gpu);
            util_s += past ? gpu->snap_smact_s : gpu->smact_s;
            energy_j += past ? gpu->snap_energy_j : gpu->energy_j;
        }
        sim_summarize(out, s.t_start, t_end, setup->ngpus, util_s, energy_j);
    }
    sim_cleanup(&s);
    if (rc)
        sim_result_free(out);
    return rc;
}

void sim_result_free(sim_result *r)
{
    free(r->jobs);
    free(r->timeline);
    memset(r, 0, sizeof *r);
}
