/* task_view.c — a task as clients see it (docs/protocol.md's TASK, and `show`'s detail), and
 * the memory figure it is shown with, which is also the figure mps_tasks.c caps it at. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "daemon/journal.h"
#include "daemon/registry.h"
#include "daemon/tasks.h"

/* One of the task's figures: a measured figure that was not submitted came from the history. */
static dtask_mem task_figure(const dtask *t, mem_source src, uint64_t mib)
{
    uint64_t submitted;
    bool history = src == MEM_ORACLE && !mem_figures_get(&t->sub.mem, MEM_ORACLE, &submitted);
    return (dtask_mem){history ? DMEM_HISTORY : DMEM_SUBMITTED, src, mib};
}

dtask_mem d_task_mem(const daemon_state *d, const dtask *t)
{
    const sched_config *cfg = sched_get_config(d->core);
    mem_source src = MEM_ORACLE;
    sched_figure reads = sched_policy_figure(cfg, &src);
    uint64_t mib;
    bool learned;
    /* The placement figure, computed by the core, once. */
    if (reads == SCHED_FIGURE_FLOOR && sched_task_requirement(cfg, &t->st, &mib))
        return (dtask_mem){DMEM_POLICY, MEM_ORACLE, mib};
    if (sched_task_figure(cfg, &t->st, &mib, &src, &learned))
        return learned ? (dtask_mem){DMEM_LEARNED, src, mib} : task_figure(t, src, mib);
    /* None: the measured figure, else the first estimate known. */
    for (int k = 0; k < MEM_SOURCE_COUNT; k++)
        if (mem_figures_get(&t->st.mem, (mem_source)k, &mib))
            return task_figure(t, (mem_source)k, mib);
    return (dtask_mem){DMEM_NONE, MEM_ORACLE, 0};
}

const char *d_task_mem_name(dtask_mem m)
{
    switch (m.from) {
    case DMEM_NONE:
        return NULL;
    case DMEM_POLICY:
        return "policy";
    case DMEM_HISTORY:
        return "history";
    case DMEM_LEARNED:
        return "learned";
    case DMEM_SUBMITTED:
        return proto_mem_source_name(m.source);
    }
    return NULL;
}

static json_t *attempt_json(const attempt *a)
{
    json_t *j = json_object();
    json_object_set_new(j, "n", json_integer(a->n));
    json_object_set_new(j, "dir", json_string(a->dir ? a->dir : ""));
    json_object_set_new(j, "pid", a->pid ? json_integer(a->pid) : json_null());
    json_object_set_new(j, "started_at", json_real(a->started));
    bool ended = a->ended > 0;
    json_object_set_new(j, "ended_at", ended ? json_real(a->ended) : json_null());
    json_object_set_new(j, "exit_code", ended && a->exit.exited ? json_integer(a->exit.exit_code)
                                                                : json_null());
    json_object_set_new(j, "signal", ended && !a->exit.exited ? json_integer(a->exit.term_signal)
                                                              : json_null());
    return j;
}

static double gib(uint64_t mib)
{
    return (double)mib / 1024.0;
}

void d_task_reason(const daemon_state *d, const dtask *t, sched_reason *r)
{
    *r = (sched_reason){.kind = SCHED_REASON_NONE, .ngpus = t->sub.ngpus, .gpu = -1,
                        .until = NAN};
    if (t->state != DS_QUEUED)
        return;
    /* held and dependency come first: such a task is not in the core (control.c) */
    if (t->held)
        r->kind = SCHED_REASON_HELD;
    else if (t->parked)
        r->kind = SCHED_REASON_DEPENDENCY;
    else if (!d->have_sample)
        r->kind = SCHED_REASON_NO_SAMPLE;
    else if (d->state_low) /* d_schedule starts nothing */
        r->kind = SCHED_REASON_STATE_SPACE;
    else
        sched_explain(d->core, &t->st, d->views, clock_mono_s(), r);
}

static void reason_base(const daemon_state *d, const sched_reason *r, char *buf, size_t cap)
{
    const char *policy = policy_name(sched_get_config(d->core)->policy);
    const char *s = r->ngpus == 1 ? "" : "s";
    switch (r->kind) {
    case SCHED_REASON_NONE:
        snprintf(buf, cap, "-");
        return;
    case SCHED_REASON_STARTING:
        snprintf(buf, cap, "starting (nothing holds it back)");
        return;
    case SCHED_REASON_NO_SAMPLE:
        snprintf(buf, cap, "waiting for the first GPU sample");
        return;
    case SCHED_REASON_IDLE_GPUS:
        snprintf(buf, cap, "waiting for %d idle GPU%s (%d idle)", r->ngpus, s, r->have);
        return;
    case SCHED_REASON_MEMORY:
        if (r->gpu < 0)
            snprintf(buf, cap, "no GPU's free memory is known");
        else if (r->ngpus == 1)
            snprintf(buf, cap, "no GPU has %.1f GiB free for its figure (most: GPU %d, %.1f GiB)",
                     gib(r->need_mib), r->gpu, gib(r->most_mib));
        else
            snprintf(buf, cap,
                     "fewer than %d GPUs have %.1f GiB free for its figure (most: GPU %d, "
                     "%.1f GiB)",
                     r->ngpus, gib(r->need_mib), r->gpu, gib(r->most_mib));
        return;
    case SCHED_REASON_GATE:
        snprintf(buf, cap, "utilization gate on GPU %d", r->gpu);
        return;
    case SCHED_REASON_GRACE: {
        gpu_grace g = sched_gpu_grace(d->core, r->gpu);
        if (g.state == GPU_LAUNCHING && g.task)
            snprintf(buf, cap, "GPU %d is launching task %llu", r->gpu,
                     (unsigned long long)g.task->id);
        else
            snprintf(buf, cap, "grace on GPU %d", r->gpu);
        return;
    }
    case SCHED_REASON_INTERFERENCE:
        snprintf(buf, cap, "predicted progress would not rise on GPU %d (interference)", r->gpu);
        return;
    case SCHED_REASON_LEDGER:
        snprintf(buf, cap, "no GPU has room in %s's budget", policy);
        return;
    case SCHED_REASON_NO_PROFILE:
        snprintf(buf, cap, "no %s profile: waiting for %d idle GPU%s", policy, r->ngpus, s);
        return;
    case SCHED_REASON_BEHIND:
        snprintf(buf, cap, "behind the head (task %llu)", (unsigned long long)r->task);
        return;
    case SCHED_REASON_RESERVED: {
        if (isnan(r->until)) {
            snprintf(buf, cap, "behind the head (task %llu), which backfill has passed %d times",
                     (unsigned long long)r->task, sched_get_config(d->core)->backfill_max_skips);
            return;
        }
        /* the core's clock is the monotonic one: shown on the wall clock */
        time_t at = (time_t)(daemon_wall_now() + (r->until - clock_mono_s()));
        struct tm tm;
        char hhmm[16] = "?";
        if (localtime_r(&at, &tm))
            strftime(hhmm, sizeof hhmm, "%H:%M", &tm);
        snprintf(buf, cap, "reserved for task %llu until ~%s (backfill)",
                 (unsigned long long)r->task, hhmm);
        return;
    }
    case SCHED_REASON_HELD:
        snprintf(buf, cap, "held");
        return;
    case SCHED_REASON_DEPENDENCY:
        snprintf(buf, cap, "dependency");
        return;
    case SCHED_REASON_TASK_CAP:
        snprintf(buf, cap, "GPU %d already runs max_tasks_per_gpu = %d tasks", r->gpu,
                 sched_get_config(d->core)->max_tasks_per_gpu);
        return;
    case SCHED_REASON_STATE_SPACE:
        snprintf(buf, cap, "the state directory's filesystem is short of space (%lld MiB free, "
                 "state_min_free_mib = %d)", (long long)d->state_free_mib,
                 d->cfg.daemon.state_min_free_mib);
        return;
    case SCHED_REASON_COUNT:
        break;
    }
    snprintf(buf, cap, "?");
}

void d_reason_text(const daemon_state *d, const sched_reason *r, char *buf, size_t cap)
{
    reason_base(d, r, buf, cap);
    size_t n = strlen(buf);
    /* why later tasks started first: with no run time backfill cannot tell how long it delays
     * the head, and only counts */
    if (r->passed > 0 && n < cap)
        snprintf(buf + n, cap - n, "; %d later task%s passed it (backfill without run times, at "
                 "most %d)", r->passed, r->passed == 1 ? "" : "s",
                 sched_get_config(d->core)->backfill_max_skips);
}

static void reason_json(const daemon_state *d, const dtask *t, json_t *j)
{
    sched_reason r;
    d_task_reason(d, t, &r);
    if (r.kind == SCHED_REASON_NONE) {
        json_object_set_new(j, "reason", json_null());
        json_object_set_new(j, "reason_code", json_null());
        return;
    }
    char text[256];
    d_reason_text(d, &r, text, sizeof text);
    json_object_set_new(j, "reason", json_string(text));
    json_object_set_new(j, "reason_code", json_string(sched_reason_name(r.kind)));
}

json_t *d_task_json(const daemon_state *d, const dtask *t, bool detail)
{
    json_t *j = json_object();
    json_object_set_new(j, "id", json_integer((json_int_t)t->st.id));
    json_object_set_new(j, "name", json_string(t->sub.name));
    json_object_set_new(j, "user", json_string(t->user));
    json_object_set_new(j, "uid", json_integer(t->uid));
    json_object_set_new(j, "state", json_string(dstate_name(t->state)));
    /* a parked task is in neither of the core's queues (control.c) */
    const char *queue = t->held       ? "held"
                        : t->parked   ? "waiting"
                        : t->recovery ? "recovery"
                                      : "main";
    json_object_set_new(j, "queue", t->state != DS_QUEUED ? json_null() : json_string(queue));
    json_object_set_new(j, "attempts", json_integer(t->st.attempts));
    json_object_set_new(j, "ngpus", json_integer(t->sub.ngpus));
    json_t *gpus = json_array();
    for (int i = 0; t->att.n > 0 && i < t->att.ngpus; i++)
        json_array_append_new(gpus, json_integer(t->att.gpus[i]));
    json_object_set_new(j, "gpus", gpus);
    dtask_mem mem = d_task_mem(d, t);
    bool have = mem.from != DMEM_NONE;
    json_object_set_new(j, "mem_mib", have ? json_integer((json_int_t)mem.mib) : json_null());
    json_object_set_new(j, "mem_source", have ? json_string(d_task_mem_name(mem)) : json_null());
    json_object_set_new(j, "peak_mib", t->att.n > 0 && t->att.peak_mib >= 0
                                           ? json_integer((json_int_t)t->att.peak_mib)
                                           : json_null());
    /* mps = on: whether NVML lists the running attempt's processes as MPS clients */
    bool mps_seen = d->mps_on && t->state == DS_RUNNING && t->att.mps_client != 0;
    json_object_set_new(j, "mps_client", mps_seen ? json_boolean(t->att.mps_client > 0)
                                                   : json_null());
    json_object_set_new(j, "outcome", t->outcome[0] ? json_string(t->outcome) : json_null());
    json_object_set_new(j, "submitted_at", json_real(t->submitted_at));
    json_object_set_new(j, "ended_at", t->ended_at > 0 ? json_real(t->ended_at) : json_null());
    reason_json(d, t, j);
    /* the queue controls (control.c) */
    json_object_set_new(j, "held", json_boolean(t->held));
    json_object_set_new(j, "priority", json_integer(t->priority));
    json_t *after = json_array(), *afterok = json_array();
    for (size_t i = 0; i < t->sub.ndeps; i++)
        json_array_append_new(t->sub.deps[i].ok ? afterok : after,
                              json_integer((json_int_t)t->sub.deps[i].id));
    json_object_set_new(j, "after", after);
    json_object_set_new(j, "afterok", afterok);
    json_object_set_new(j, "time_limit_s", t->sub.time_limit_s > 0
                                               ? json_integer(t->sub.time_limit_s)
                                               : json_null());
    /* what the carma policy plans with: a solo run's measurements, or the time limit */
    bool est = !isnan(t->st.runtime_est_s);
    json_object_set_new(j, "runtime_est_s", est ? json_real(t->st.runtime_est_s) : json_null());
    json_object_set_new(j, "runtime_source", !est ? json_null()
                                             : json_string(t->st.runtime_is_limit ? "time_limit"
                                                                                  : "history"));
    json_object_set_new(j, "solo_smact", isnan(t->st.solo_smact) ? json_null()
                                                                 : json_real(t->st.solo_smact));
    json_object_set_new(j, "solo_drama", isnan(t->st.solo_drama) ? json_null()
                                                                 : json_real(t->st.solo_drama));
    json_object_set_new(j, "solo_util", isnan(t->st.profiled_util)
                                            ? json_null()
                                            : json_real(t->st.profiled_util));
    json_object_set_new(j, "array_index", t->sub.array_index >= 0
                                              ? json_integer(t->sub.array_index)
                                              : json_null());
    json_object_set_new(j, "end_reason", t->end_reason[0] ? json_string(t->end_reason)
                                                          : json_null());
    if (detail) {
        json_object_set_new(j, "command", json_string(t->sub.command));
        json_object_set_new(j, "cwd", json_string(t->sub.cwd));
        json_object_set_new(j, "max_retries", json_integer(t->sub.max_retries));
        json_object_set_new(j, "conda_env", t->sub.conda_env ? json_string(t->sub.conda_env)
                                                             : json_null());
        json_t *spec = submission_to_json(&t->sub);
        json_object_set_new(j, "mem", json_incref(json_object_get(spec, "mem")));
        json_decref(spec);
        if (t->att.n > 0)
            json_object_set_new(j, "last_attempt", attempt_json(&t->att));
    }
    return j;
}
