/* carma_learn.c — the carma policy's out-of-memory learning (carma.c's fourth part): what a
 * crash teaches about a task's figure (and identical tasks', sched_task_learn), and whether
 * any GPU here could ever hold it. */
#include <assert.h>

#include "sched/sched_int.h"

bool carma_fits_no_gpu(const sched *s, uint64_t need)
{
    uint64_t largest = 0;
    for (int g = 0; g < s->ngpus; g++) {
        if (s->total_mib[g] == 0)
            return false; /* a GPU whose memory is unknown may hold it: not "never" then */
        uint64_t u = carma_usable_mib(s, s->total_mib[g]);
        largest = u > largest ? u : largest;
    }
    return largest > 0 && need > largest;
}

sched_end carma_learn(sched *s, sched_task *t, const sched_oom_seen *seen)
{
    carma_fit f = carma_fit_of(s, t);
    uint64_t had = f.known ? f.figure : 0, need = had;
    bool saw_more = seen && seen->peak_known && seen->peak_mib > had;
    if (saw_more)
        need = seen->peak_mib;
    bool alone = true;
    uint64_t held = UINT64_MAX, largest = 0;
    for (int k = 0; k < t->ngpus; k++) {
        int g = t->gpus[k];
        alone &= s->ledger.gpu[g].ntasks <= 1;
        uint64_t u = carma_usable_mib(s, s->total_mib[g]);
        held = u < held ? u : held;
    }
    for (int g = 0; g < s->ngpus; g++) {
        uint64_t u = carma_usable_mib(s, s->total_mib[g]);
        largest = u > largest ? u : largest;
    }
    /* Nothing above its figure was seen: double it, but never past the largest GPU, so that
     * a guess alone never fails it (only a crash seen filling its GPUs does, below): it gets
     * a GPU to itself, and retry_cap bounds the tries. The cap never lowers a figure already
     * past the largest GPU (one told more than any GPU holds): that one never fits. */
    if (!saw_more && f.known) {
        need = had * 2 + 1 < largest || largest == 0 ? had * 2 + 1 : largest;
        need = need > had ? need : had;
    }
    /* With its GPUs to itself and seen filling them, it needs more than they hold. Seen below
     * that, memory someone else held may have been the cause: it only grows as above. */
    if (alone && held != UINT64_MAX && need <= held && saw_more &&
        seen->peak_mib + s->cfg.margin_mib >= held)
        need = held + 1;
    t->learned_known = true;
    t->learned_mib = need;
    t->learned_seen = saw_more;
    return carma_fits_no_gpu(s, need) ? SCHED_END_NEVER_FITS : SCHED_END_RETRY;
}

void sched_task_learn(sched *s, sched_task *t, uint64_t mib)
{
    (void)s;
    assert(t->where != SCHED_RUNNING);
    if (t->learned_known && t->learned_mib >= mib)
        return;
    t->learned_known = true;
    t->learned_mib = mib;
    t->learned_seen = false; /* its own crash did not see it */
}

sched_task *sched_take_never_fits(sched *s, const gpu_view *views)
{
    if (s->policy->order != PORDER_CARMA || !s->cfg.carma_oom_learning)
        return NULL;
    sched_see_gpus(s, views);
    for (int k = 0; k < 2; k++)
        for (sched_task *t = (k ? s->main_q : s->recovery_q).head; t; t = t->qnext)
            if (t->learned_known && carma_fits_no_gpu(s, t->learned_mib)) {
                sched_remove_queued(s, t);
                return t;
            }
    return NULL;
}
