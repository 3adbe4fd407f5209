/* engine.c — the discrete-event loop of `carma simulate`: arrivals, start-up, allocation (or an
 * out-of-memory crash), runs stretched by interference, completions; the scheduling core decides
 * every placement. GPU views are kept up to date incrementally (see gpu_activity.h). */
#include "sim/engine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/event_heap.h"
#include "sim/gpu_activity.h"
#include "sim/sim_metrics.h"

#define GRACE_EPSILON_S 1e-6 /* retry just after a grace period has certainly ended */

typedef enum job_state { JOB_PENDING = 0, JOB_QUEUED, JOB_STARTING, JOB_RUNNING, JOB_DONE,
                         JOB_FAILED } job_state;

typedef struct sim_job {
    sched_task st; /* what the core holds; st.id = index + 1 */
    const sim_job_spec *spec;
    job_state state;
    double remaining_s;  /* solo-speed seconds of work left in the current run */
    double speed;
    double last_update;
    double attempt_start;
    uint32_t version;    /* bumps whenever the pending EV_COMPLETE becomes stale */
} sim_job;

typedef struct sim_gpu {
    uint64_t used_mib;
    int *tasks;          /* jobs holding memory on this GPU */
    int ntasks, cap;
    double solo_smact, solo_smocc, solo_drama; /* sums of the tasks' solo activity */
    double speed;        /* speed of each task here */
    double reported_smact; /* what a monitor would read now */
    double last_t;       /* integrals below are accumulated up to here */
    double energy_j, smact_s;
    gpu_activity activity;
    bool warm;           /* in the list of GPUs whose window is still moving */
    double agg_second;   /* the integer second its view's aggregate was computed for */
    int starting;        /* jobs placed here still in CPU start-up */
} sim_gpu;

typedef struct sim {
    const sim_setup *setup;
    sched *core;
    event_heap heap;
    sim_job *jobs;
    size_t njobs;
    sim_gpu *gpus;
    gpu_view *views;
    int *warm;           /* GPUs whose window aggregate still changes with time */
    int nwarm;
    int nfree;           /* GPUs with no task and none starting: exclusive-first can use them */
    double pending_retry; /* time of the earliest EV_RETRY queued for window changes */
    double now, t_start;
    sim_result *out;
    size_t finished;
    size_t progress_step;
    carma_err why;       /* what went wrong inside an event handler */
} sim;

/* ---- GPU state ------------------------------------------------------------------------------ */

static void gpu_account(sim *s, sim_gpu *g)
{
    double dt = s->now - g->last_t;
    if (dt > 0) {
        g->energy_j += sim_power_w(s->setup->gpu, g->reported_smact) * dt;
        g->smact_s += g->reported_smact * dt;
    }
    g->last_t = s->now;
}

static int record_timeline(sim *s, int gi)
{
    if (!s->setup->record_timeline)
        return 0;
    sim_result *r = s->out;
    static const size_t grow = 4096;
    if (r->ntimeline % grow == 0) {
        sim_timeline_row *rows = realloc(r->timeline, (r->ntimeline + grow) * sizeof *rows);
        if (!rows)
            return -1;
        r->timeline = rows;
    }
    const sim_gpu *g = &s->gpus[gi];
    r->timeline[r->ntimeline++] = (sim_timeline_row){
        s->now, gi, g->ntasks, g->used_mib, g->reported_smact,
        sim_power_w(s->setup->gpu, g->reported_smact)};
    return 0;
}

static void job_advance(sim *s, sim_job *j)
{
    j->remaining_s -= (s->now - j->last_update) * j->speed;
    if (j->remaining_s < 0)
        j->remaining_s = 0;
    j->last_update = s->now;
}

static int job_reschedule(sim *s, sim_job *j)
{
    double speed = 1.0;
    for (int k = 0; k < j->st.ngpus; k++)
        speed = fmin(speed, s->gpus[j->st.gpus[k]].speed);
    j->speed = speed;
    j->version++;
    return event_heap_push(&s->heap, s->now + j->remaining_s / speed, EV_COMPLETE,
                           (int32_t)(j - s->jobs), j->version);
}

static bool gpu_free(const sim_gpu *g)
{
    return g->ntasks == 0 && g->starting == 0;
}

/* Changes g->starting by `delta`, keeping the count of free GPUs. */
static void gpu_starting(sim *s, int gi, int delta)
{
    sim_gpu *g = &s->gpus[gi];
    s->nfree -= gpu_free(g);
    g->starting += delta;
    s->nfree += gpu_free(g);
}

static void mark_warm(sim *s, int gi)
{
    if (!s->gpus[gi].warm) {
        s->gpus[gi].warm = true;
        s->warm[s->nwarm++] = gi;
    }
}

/* Adds (sign = +1) or removes (sign = -1) job j on GPU gi, keeping every job on it up to date. */
static int gpu_change(sim *s, int gi, sim_job *j, int sign)
{
    sim_gpu *g = &s->gpus[gi];
    const sim_job_spec *sp = j->spec;
    gpu_account(s, g);
    s->nfree -= gpu_free(g);
    for (int k = 0; k < g->ntasks; k++)
        job_advance(s, &s->jobs[g->tasks[k]]);
    int ji = (int)(j - s->jobs);
    if (sign > 0) {
        if (g->ntasks == g->cap) {
            int cap = g->cap ? g->cap * 2 : 4;
            int *t = realloc(g->tasks, (size_t)cap * sizeof *t);
            if (!t)
                return -1;
            g->tasks = t;
            g->cap = cap;
        }
        g->tasks[g->ntasks++] = ji;
        g->used_mib += sp->peak_mib;
    } else {
        for (int k = 0; k < g->ntasks; k++) {
            if (g->tasks[k] == ji) {
                g->tasks[k] = g->tasks[--g->ntasks];
                break;
            }
        }
        g->used_mib -= sp->peak_mib;
    }
    g->solo_smact += sign * sp->smact;
    g->solo_smocc += sign * sp->smocc;
    g->solo_drama += sign * sp->drama;
    if (g->ntasks == 0) /* no drift from repeated sums */
        g->solo_smact = g->solo_smocc = g->solo_drama = 0;
    s->nfree += gpu_free(g);
    g->speed = sim_speed(&s->setup->params, g->solo_smact, g->ntasks);
    /* A monitor sees the tasks' solo activity scaled by how fast they run, up to saturation. */
    activity_sample a = {fmin(1.0, g->solo_smact * g->speed), fmin(1.0, g->solo_smocc * g->speed),
                         fmin(1.0, g->solo_drama * g->speed)};
    g->reported_smact = a.smact;
    gpu_activity_set(&g->activity, s->now, a);
    g->agg_second = NAN;
    mark_warm(s, gi);
    gpu_view *v = &s->views[gi];
    v->free_mib = g->used_mib >= v->total_mib ? 0 : v->total_mib - g->used_mib;
    v->idle = g->ntasks == 0;
    for (int k = 0; k < g->ntasks; k++) {
        sim_job *o = &s->jobs[g->tasks[k]];
        if (o->state == JOB_RUNNING && job_reschedule(s, o))
            return -1;
    }
    return record_timeline(s, gi);
}

/* Brings the window aggregates of recently changed GPUs up to `now`. */
static void refresh_views(sim *s)
{
    const sched_config *c = &s->setup->sched;
    sched_advance(s->core, s->now);
    for (int k = 0; k < s->nwarm;) {
        int gi = s->warm[k];
        sim_gpu *g = &s->gpus[gi];
        /* Samples only change on the second; a GPU in launch or grace is not a candidate,
         * so its window is not read now. */
        if (g->agg_second == floor(s->now) ||
            sched_gpu_grace(s->core, gi).state != GPU_AVAILABLE) {
            k++;
            continue;
        }
        g->agg_second = floor(s->now);
        activity_sample a = gpu_activity_aggregate(&g->activity, s->now, c->window, c->agg,
                                                   c->ewma_alpha);
        s->views[gi].smact = a.smact;
        s->views[gi].smocc = a.smocc;
        s->views[gi].drama = a.drama;
        if (gpu_activity_settled(&g->activity, s->now, c->window)) {
            g->warm = false;
            s->warm[k] = s->warm[--s->nwarm];
        } else {
            k++;
        }
    }
}

/* ---- job life cycle --------------------------------------------------------------------------- */

static void job_finished(sim *s, sim_job *j, bool completed)
{
    sim_job_result *r = &s->out->jobs[j - s->jobs];
    r->busy_s += s->now - j->attempt_start;
    r->completed = completed;
    r->end_s = s->now;
    r->wait_s = r->end_s - r->submit_s - r->busy_s;
    j->state = completed ? JOB_DONE : JOB_FAILED;
    s->finished++;
    if (s->setup->progress && s->finished % s->progress_step == 0)
        s->setup->progress(s->finished, s->njobs, s->setup->progress_user);
}

static int dispatch(sim *s, const sched_decision *d)
{
    sim_job *j = (sim_job *)d->task; /* st is the first member */
    sim_job_result *r = &s->out->jobs[j - s->jobs];
    j->state = JOB_STARTING;
    j->attempt_start = s->now;
    r->attempts = j->st.attempts;
    if (isnan(r->first_start_s))
        r->first_start_s = s->now;
    r->ngpus = d->ngpus;
    memcpy(r->gpus, d->gpus, sizeof r->gpus);
    r->collocated = d->collocated;
    for (int k = 0; k < d->ngpus; k++)
        gpu_starting(s, d->gpus[k], +1);
    s->out->summary.placements++;
    if (d->collocated)
        s->out->summary.collocated_placements++;
    return event_heap_push(&s->heap, s->now + s->setup->params.startup_s, EV_ALLOCATE,
                           (int32_t)(j - s->jobs), 0);
}

/* Places whatever the core lets through now; asks to be woken while windows still move. */
static int try_place(sim *s)
{
    if (sched_main_len(s->core) + sched_recovery_len(s->core) == 0)
        return 0;
    sched_decision d;
    bool fresh = false;
    for (;;) {
        /* Windows matter only when the head cannot have free GPUs by the exclusive-first
         * rule; refreshing them is the costly part at scale, so it is done only then. */
        const sched_task *head = sched_recovery_head(s->core);
        if (!head)
            head = sched_main_head(s->core);
        if (!head)
            break;
        if (!fresh && head->ngpus > s->nfree) {
            refresh_views(s);
            fresh = true;
        }
        if (!sched_next(s->core, s->now, s->views, &d))
            break;
        if (dispatch(s, &d))
            return -1;
    }
    /* Blocked: a moving window can let a GPU through the gate later with no other event, so
     * look again at the next monitor sample (the live daemon retries every second). */
    if (sched_main_len(s->core) + sched_recovery_len(s->core) > 0 && s->nwarm > 0) {
        double next = floor(s->now) + 1.0;
        if (!(s->pending_retry > s->now && s->pending_retry <= next)) {
            s->pending_retry = next;
            return event_heap_push(&s->heap, next, EV_RETRY, -1, 0);
        }
    }
    return 0;
}

static int on_allocate(sim *s, sim_job *j)
{
    const sim_job_spec *sp = j->spec;
    sim_job_result *r = &s->out->jobs[j - s->jobs];
    for (int k = 0; k < j->st.ngpus; k++)
        gpu_starting(s, j->st.gpus[k], -1);
    bool fits = true;
    for (int k = 0; k < j->st.ngpus; k++) {
        const sim_gpu *g = &s->gpus[j->st.gpus[k]];
        if (g->used_mib + sp->peak_mib > s->setup->gpu->memory_mib)
            fits = false;
    }
    if (!fits) { /* crashes at allocation, frees what it had, goes to recovery */
        r->oom_crashes++;
        s->out->summary.oom_crashes++;
        r->busy_s += s->now - j->attempt_start;
        if (sched_task_ended(s->core, &j->st, TASK_OOM, s->now) == SCHED_END_RETRY) {
            j->state = JOB_QUEUED;
        } else {
            r->busy_s -= s->now - j->attempt_start; /* job_finished adds it back */
            job_finished(s, j, false);
        }
        return try_place(s);
    }
    j->state = JOB_RUNNING;
    j->remaining_s = sp->runtime_s;
    j->speed = 1.0;
    j->last_update = s->now;
    for (int k = 0; k < j->st.ngpus; k++) {
        int gi = j->st.gpus[k];
        if (gpu_change(s, gi, j, +1))
            return -1;
        sched_process_seen(s->core, &j->st, gi, s->now);
    }
    if (event_heap_push(&s->heap, s->now + s->setup->sched.grace_s + GRACE_EPSILON_S, EV_RETRY,
                        -1, 0))
        return -1;
    return try_place(s);
}

static int on_complete(sim *s, sim_job *j)
{
    j->state = JOB_DONE;
    for (int k = 0; k < j->st.ngpus; k++)
        if (gpu_change(s, j->st.gpus[k], j, -1))
            return -1;
    sched_task_ended(s->core, &j->st, TASK_DONE, s->now);
    job_finished(s, j, true);
    return try_place(s);
}

static int handle(sim *s, const sim_event *e)
{
    sim_job *j = e->job >= 0 ? &s->jobs[e->job] : NULL;
    switch (e->kind) {
    case EV_ARRIVAL: {
        if (sched_submit(s->core, &j->st, &s->why))
            return -1;
        j->state = JOB_QUEUED;
        return try_place(s);
    }
    case EV_ALLOCATE:
        return on_allocate(s, j);
    case EV_COMPLETE:
        if (j->state != JOB_RUNNING || e->version != j->version)
            return 0; /* superseded by a later speed change */
        return on_complete(s, j);
    case EV_RETRY:
        return try_place(s);
    }
    return 0;
}

/* ---- set-up, run, results --------------------------------------------------------------------- */

static int check_jobs(const sim_setup *setup, const sim_job_spec *jobs, size_t n, carma_err *err)
{
    for (size_t i = 0; i < n; i++) {
        const sim_job_spec *j = &jobs[i];
        const char *name = j->name ? j->name : "?";
        if (j->ngpus < 1 || j->ngpus > setup->ngpus || j->ngpus > SCHED_MAX_TASK_GPUS)
            return carma_err_set(err, "job %zu (%s) needs %d GPUs; the server has %d", i + 1,
                                 name, j->ngpus, setup->ngpus);
        if (!(j->runtime_s > 0) || !isfinite(j->runtime_s))
            return carma_err_set(err, "job %zu (%s) has no solo runtime", i + 1, name);
        if (!isfinite(j->submit_s) || j->submit_s < 0 || (i > 0 && j->submit_s < jobs[i - 1].submit_s))
            return carma_err_set(err, "job %zu (%s): submission times must be >= 0 and "
                                 "non-decreasing", i + 1, name);
    }
    return 0;
}

static void sim_cleanup(sim *s)
{
    sched_destroy(s->core);
    event_heap_free(&s->heap);
    for (int g = 0; s->gpus && g < s->setup->ngpus; g++)
        free(s->gpus[g].tasks);
    free(s->gpus);
    free(s->views);
    free(s->warm);
    free(s->jobs);
}

static int sim_init(sim *s, const sim_setup *setup, const sim_job_spec *jobs, size_t njobs,
                    sim_result *out, carma_err *err)
{
    memset(s, 0, sizeof *s);
    event_heap_init(&s->heap);
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
    s->jobs = calloc(njobs ? njobs : 1, sizeof *s->jobs);
    out->jobs = calloc(njobs ? njobs : 1, sizeof *out->jobs);
    if (!s->gpus || !s->views || !s->warm || !s->jobs || !out->jobs)
        return carma_err_set(err, "out of memory");
    out->njobs = njobs;
    s->t_start = njobs ? jobs[0].submit_s : 0;
    activity_sample idle = {0, 0, 0};
    s->nfree = setup->ngpus;
    for (size_t g = 0; g < ng; g++) {
        s->gpus[g].speed = 1.0;
        s->gpus[g].agg_second = NAN;
        s->gpus[g].last_t = s->t_start;
        gpu_activity_init(&s->gpus[g].activity, idle);
        s->views[g] = (gpu_view){setup->gpu->memory_mib, setup->gpu->memory_mib, true, 0, 0, 0,
                                 true};
    }
    for (size_t i = 0; i < njobs; i++) {
        sim_job *j = &s->jobs[i];
        j->spec = &jobs[i];
        j->st.id = i + 1;
        j->st.ngpus = jobs[i].ngpus;
        j->st.mem = jobs[i].mem;
        j->st.max_retries = -1;
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
            gpu_account(&s, &s.gpus[g]);
            util_s += s.gpus[g].smact_s;
            energy_j += s.gpus[g].energy_j;
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
