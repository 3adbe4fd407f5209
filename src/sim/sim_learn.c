/* sim_learn.c — the daemon's teaching of identical tasks (reap.c) in the simulator: a task
 * file's jobs are one task submitted again and again, so what one's out-of-memory crash was
 * seen to need (the core's learned_seen figure) is learned by the others queued, and by those
 * that arrive later (the daemon gives a later submission the memory history's figure). Only
 * the carma policy's OOM learning places by learned figures. */
#include "sim/engine_int.h"

void sim_teach_identical(sim *s, const sim_job *j)
{
    const sched_task *t = j->st;
    if (!t->learned_known || !t->learned_seen)
        return;
    sim_history *h = &s->history;
    size_t f = h->file[j - s->jobs];
    if (t->learned_mib > h->taught_mib[f])
        h->taught_mib[f] = t->learned_mib;
    for (size_t k = h->first[f]; k < h->first[f + 1]; k++) {
        sim_job *u = &s->jobs[h->members[k]];
        if (u != j && u->state == JOB_QUEUED && u->st)
            sched_task_learn(s->core, u->st, t->learned_mib);
    }
}

void sim_learn_on_arrival(sim *s, sim_job *j)
{
    uint64_t mib = s->history.taught_mib[s->history.file[j - s->jobs]];
    if (mib > 0)
        sched_task_learn(s->core, j->st, mib);
}
