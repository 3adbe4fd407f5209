/* sim_gpu.c — the simulator's GPUs: memory held, the tasks on each and their speeds
 * (interference), what a monitor would read (time-sliced activity), power and energy, and the
 * views the scheduling core places with (kept up to date incrementally, gpu_activity.h). */
#include <math.h>
#include <stdlib.h>

#include "sim/engine_int.h"
#include "util/array.h"


void gpu_account(sim *s, sim_gpu *g)
{
    double power_w = sim_power_w(&s->setup->params, s->setup->gpu, g->ntasks > 0,
                                 g->reported_util);
    if (s->now > s->done_t && g->snap_t != s->done_t) { /* false while done_t is NaN */
        double d = fmax(0, s->done_t - g->last_t);
        g->snap_t = s->done_t;
        g->snap_energy_j = g->energy_j + power_w * d;
        g->snap_smact_s = g->smact_s + g->reported_smact * d;
    }
    double dt = s->now - g->last_t;
    if (dt > 0) {
        g->energy_j += power_w * dt;
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
        .t = s->now, .gpu = gi, .ntasks = g->ntasks, .used_mib = g->used_mib,
        .smact = g->reported_smact, .util = g->reported_util,
        .power_w = sim_power_w(&s->setup->params, s->setup->gpu, g->ntasks > 0,
                               g->reported_util)};
    return 0;
}

void job_advance(sim *s, sim_job *j)
{
    j->remaining_s -= (s->now - j->last_update) * j->speed;
    if (j->remaining_s < 0)
        j->remaining_s = 0;
    j->last_update = s->now;
}

/* Its speed on GPU g: slowed by everyone else there. */
static double job_speed_on(const sim *s, const sim_job *j, const sim_gpu *g)
{
    return sim_speed(&s->setup->params, g->pressure - j->pressure);
}

int job_reschedule(sim *s, sim_job *j)
{
    double speed = 1.0; /* a multi-GPU task runs at the pace of its slowest GPU */
    for (int k = 0; k < j->st->ngpus; k++)
        speed = fmin(speed, job_speed_on(s, j, &s->gpus[j->st->gpus[k]]));
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
void gpu_starting(sim *s, int gi, int delta)
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

/* The GPU's memory changed: its view and timeline follow. */
int gpu_memory_changed(sim *s, int gi)
{
    const sim_gpu *g = &s->gpus[gi];
    gpu_view *v = &s->views[gi];
    v->free_mib = g->used_mib >= v->total_mib ? 0 : v->total_mib - g->used_mib;
    s->changes++;
    return record_timeline(s, gi);
}

/* Adds (sign = +1) or removes (sign = -1) job j, holding j->held_mib, on GPU gi, keeping every
 * job on it up to date. */
int gpu_change(sim *s, int gi, sim_job *j, int sign)
{
    sim_gpu *g = &s->gpus[gi];
    gpu_account(s, g);
    s->nfree -= gpu_free(g);
    for (int k = 0; k < g->ntasks; k++)
        job_advance(s, &s->jobs[g->tasks[k]]);
    int ji = (int)(j - s->jobs);
    if (sign > 0) {
        int *t = array_grow(g->tasks, &g->cap, (size_t)g->ntasks + 1, sizeof *t, 4);
        if (!t)
            return -1;
        g->tasks = t;
        g->tasks[g->ntasks++] = ji;
        g->used_mib += j->held_mib;
    } else {
        for (int k = 0; k < g->ntasks; k++) {
            if (g->tasks[k] == ji) {
                g->tasks[k] = g->tasks[--g->ntasks];
                break;
            }
        }
        g->used_mib -= j->held_mib;
    }
    if (sign < 0) /* memory freed, maybe an idle GPU: a blocked head may fit there now */
        gpu_improved(s, gi);
    g->pressure += sign * j->pressure;
    if (g->ntasks == 0) /* no drift from repeated sums */
        g->pressure = 0;
    s->nfree += gpu_free(g);
    /* Time-sliced sharing: the GPU is busy U = 1 - prod(1 - u_i) of the time (u_i each task's
     * solo utilization, its SMACT where unknown), shared among the tasks in proportion to u_i;
     * while task i holds the GPU it shows its solo activity / u_i. So each metric a monitor
     * reads is U / sum(u_i) * sum(a_i): a task alone shows its solo profile, and sharing tasks
     * show about the busiest one's, not the sum (the real runs' DCGM means, data/aegis/). */
    activity_sample a = {0, 0, 0};
    double not_busy = 1.0, util_sum = 0.0;
    for (int k = 0; k < g->ntasks; k++) {
        const sim_job_spec *sp = s->jobs[g->tasks[k]].spec;
        double u = fmin(1.0, isnan(sp->util) ? sp->smact : sp->util);
        a.smact += sp->smact;
        a.smocc += sp->smocc;
        a.drama += sp->drama;
        util_sum += u;
        not_busy *= 1.0 - u;
    }
    double share = util_sum > 0 ? (1.0 - not_busy) / util_sum : 1.0;
    a = (activity_sample){fmin(1.0, a.smact * share), fmin(1.0, a.smocc * share),
                          fmin(1.0, a.drama * share)};
    g->reported_smact = a.smact;
    g->reported_util = 1.0 - not_busy;
    gpu_activity_set(&g->activity, s->now, a);
    g->agg_second = NAN;
    mark_warm(s, gi);
    s->views[gi].idle = g->ntasks == 0;
    for (int k = 0; k < g->ntasks; k++) {
        sim_job *o = &s->jobs[g->tasks[k]];
        if (o->state == JOB_RUNNING && job_reschedule(s, o))
            return -1;
    }
    return gpu_memory_changed(s, gi);
}

/* ---- what the core could use for a head task: the memo of a failed placement ----------------- */

/* Whether GPU gi passes the memory filter of f (unknown memory counts as passing: a superset). */
static bool memory_passes(const sim *s, int gi, const sched_gpu_needs *f)
{
    uint64_t avail;
    if (!sched_available_mib(&s->setup->sched, &s->views[gi], &avail))
        return true;
    return avail >= f->min_mib;
}

/* Whether the core could read GPU gi's activity for the head of f: only on GPUs that passed
 * the memory filter, which it applies first. */
static bool activity_read(const sim *s, int gi, const sched_gpu_needs *f)
{
    return f->reads_activity && (!f->filtered || memory_passes(s, gi, f));
}

bool gpu_may_take(const sim *s, int gi, const sched_gpu_needs *f)
{
    if (f->grace_blocks && sched_gpu_grace(s->core, gi).state != GPU_AVAILABLE)
        return false; /* no rule places on a GPU in launch or grace */
    if (s->views[gi].idle)
        return true;  /* the exclusive-first rule */
    if (!f->collocates)
        return false;
    if (!f->filtered)
        return true;
    const sim_gpu *g = &s->gpus[gi];
    if (!memory_passes(s, gi, f))
        return false;
    if (g->warm && g->agg_second != floor(s->now))
        return true; /* its aggregate is stale: it may pass the gate now */
    return !f->gate || sched_gate_passes(&s->setup->sched, &s->views[gi]);
}

static void mark_dirty(sim *s, int gi)
{
    if (s->blocked && !s->gpus[gi].dirty) {
        s->gpus[gi].dirty = true;
        s->dirty[s->ndirty++] = gi;
    }
}

void gpu_improved(sim *s, int gi)
{
    sim_gpu *g = &s->gpus[gi];
    s->changes++;
    if (g->parked) {
        g->parked = false;
        s->nparked--;
        s->warm[s->nwarm++] = gi;
    }
    mark_dirty(s, gi);
}

bool gpu_any_warm(const sim *s)
{
    return s->nwarm + s->nparked > 0;
}

/* Sets the window aggregate of GPU gi's view. When the core could read it and the GPU now
 * passes the gate where it did not, a blocked head may fit there: it is looked at again. */
static void set_activity(sim *s, int gi, activity_sample a, bool read)
{
    gpu_view *v = &s->views[gi];
    bool passed = read && sched_gate_passes(&s->setup->sched, v);
    v->smact = a.smact;
    v->smocc = a.smocc;
    v->drama = a.drama;
    if (read && !passed && sched_gate_passes(&s->setup->sched, v))
        mark_dirty(s, gi);
}

/* Brings the window aggregates of recently changed GPUs up to `now`. Aggregating is the costly
 * part at scale, so only the GPUs whose activity the core could read for `f`'s head are
 * aggregated; the others keep a stale aggregate (agg_second unchanged) and are aggregated when
 * they matter, with the same figures: an aggregate depends only on the activity and the second.
 * Which GPUs leave the warm list, and when, does not depend on the head (it decides whether an
 * EV_RETRY is pushed, so the events are those of aggregating every warm GPU). */
void refresh_views(sim *s, const sched_task *head, const sched_gpu_needs *f)
{
    const sched_config *c = &s->setup->sched;
    double second = floor(s->now);
    sched_advance(s->core, s->now);
    /* Done already: every warm GPU is aggregated for this second, or in launch or grace, or
     * one the core does not read for this head, and none of that has changed since. */
    if (second == s->refreshed_second && head == s->refreshed_head &&
        s->changes == s->refreshed_changes)
        return;
    s->refreshed_second = second;
    s->refreshed_head = head;
    s->refreshed_changes = s->changes;
    for (int k = 0; k < s->nwarm;) {
        int gi = s->warm[k];
        sim_gpu *g = &s->gpus[gi];
        /* A GPU in launch or grace is not a candidate, so its window is not read now: it is
         * parked until it is available again (most warm GPUs of a busy server are). */
        if (f->grace_blocks && sched_gpu_grace(s->core, gi).state != GPU_AVAILABLE) {
            g->parked = true;
            s->nparked++;
            s->warm[k] = s->warm[--s->nwarm];
            continue;
        }
        if (g->agg_second == second) { /* samples only change on the second */
            k++;
            continue;
        }
        bool read = activity_read(s, gi, f);
        if (gpu_activity_settled(&g->activity, s->now, c->window)) {
            /* The aggregate is the current activity from now on: it leaves the warm list. */
            g->agg_second = second;
            set_activity(s, gi, gpu_activity_current(&g->activity), read);
            g->warm = false;
            s->warm[k] = s->warm[--s->nwarm];
            continue;
        }
        if (read) {
            g->agg_second = second;
            set_activity(s, gi, gpu_activity_aggregate(&g->activity, s->now, c->window, c->agg,
                                                       c->ewma_alpha), read);
        }
        k++;
    }
}
