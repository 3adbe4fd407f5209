/* task_view.c — a task as clients see it (docs/protocol.md's TASK, and `show`'s detail), and
 * the memory figure it is shown with, which is also the figure mps_tasks.c caps it at. */
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

json_t *d_task_json(const daemon_state *d, const dtask *t, bool detail)
{
    json_t *j = json_object();
    json_object_set_new(j, "id", json_integer((json_int_t)t->st.id));
    json_object_set_new(j, "name", json_string(t->sub.name));
    json_object_set_new(j, "user", json_string(t->user));
    json_object_set_new(j, "uid", json_integer(t->uid));
    json_object_set_new(j, "state", json_string(dstate_name(t->state)));
    /* a parked task is in neither of the core's queues (control.c) */
    const char *queue = t->held ? "held" : t->parked ? "waiting" : t->recovery ? "recovery" : "main";
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
    json_object_set_new(j, "outcome", t->outcome[0] ? json_string(t->outcome) : json_null());
    json_object_set_new(j, "submitted_at", json_real(t->submitted_at));
    json_object_set_new(j, "ended_at", t->ended_at > 0 ? json_real(t->ended_at) : json_null());
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
