/* place.c — how CARMA's and AEGIS's policies place a task (the carma policy's own rules are in
 * carma.c): the figure a policy places with, what a GPU must offer a blocked head, the
 * exclusive-first rule, or-rr's cursor, and the filters and orders of the policy table. */
#include <math.h>

#include "sched/sched_int.h"

sched_figure sched_policy_figure(const sched_config *cfg, mem_source *src)
{
    const policy_desc *p = policy_describe(cfg->policy);
    switch (p ? p->memory : PMEM_NONE) {
    case PMEM_FIXED:
        return SCHED_FIGURE_FLOOR;
    case PMEM_ORACLE:
        *src = MEM_ORACLE;
        return SCHED_FIGURE_TASK;
    case PMEM_ESTIMATE:
        *src = cfg->estimator;
        return SCHED_FIGURE_TASK;
    case PMEM_BEST: /* per task: sched_task_figure says which */
        *src = cfg->carma_measured_first ? MEM_ORACLE : cfg->estimator;
        return SCHED_FIGURE_TASK;
    case PMEM_NONE:
        break;
    }
    return SCHED_FIGURE_NONE;
}

bool sched_task_requirement(const sched_config *cfg, const sched_task *t, uint64_t *mib)
{
    const policy_desc *p = policy_describe(cfg->policy);
    switch (p ? p->memory : PMEM_NONE) {
    case PMEM_NONE:
        *mib = 0;
        return true;
    case PMEM_FIXED:
        *mib = cfg->or_min_free_mib;
        return true;
    case PMEM_ORACLE:
        return mem_figures_get(&t->mem, MEM_ORACLE, mib);
    case PMEM_ESTIMATE:
        return mem_figures_get(&t->mem, cfg->estimator, mib);
    case PMEM_BEST: {
        mem_source src;
        bool learned;
        return carma_figure(cfg, t, mib, &src, &learned);
    }
    }
    return false;
}

bool sched_task_figure(const sched_config *cfg, const sched_task *t, uint64_t *mib,
                       mem_source *src, bool *learned)
{
    *learned = false;
    const policy_desc *p = policy_describe(cfg->policy);
    if (p && p->memory == PMEM_BEST)
        return carma_figure(cfg, t, mib, src, learned);
    if (sched_policy_figure(cfg, src) != SCHED_FIGURE_TASK)
        return false;
    return sched_task_requirement(cfg, t, mib);
}

/* The memory a GPU must offer (after the reserve) for this policy and requirement. */
uint64_t place_memory_needed(const sched *s, uint64_t requirement)
{
    switch (s->policy->memory) {
    case PMEM_ORACLE:
    case PMEM_ESTIMATE:
    case PMEM_BEST:
        return requirement + s->cfg.margin_mib;
    case PMEM_FIXED:
        return s->cfg.or_min_free_mib;
    case PMEM_NONE:
        break;
    }
    return 0;
}

bool sched_grace_applies(const sched *s)
{
    return !(s->policy->order == PORDER_CARMA && s->cfg.carma_ledger);
}

sched_gpu_needs sched_head_needs(const sched *s, const sched_task *head)
{
    const policy_desc *p = s->policy;
    const sched_config *c = &s->cfg;
    sched_gpu_needs f = {.grace_blocks = true, .collocates = true, .reads_activity = true};
    uint64_t requirement;
    if (p->order == PORDER_CARMA) /* any queued task may go, so a superset of any GPU */
        return (sched_gpu_needs){.any_task = c->carma_backfill,
                                 .grace_blocks = sched_grace_applies(s),
                                 .collocates = true, .gate = !c->carma_interference,
                                 .reads_activity = !c->carma_interference};
    if (!p->collocates || head->where == SCHED_IN_RECOVERY) /* recovery: idle GPUs only */
        return (sched_gpu_needs){.grace_blocks = true};
    switch (p->order) {
    case PORDER_INDEX:
    case PORDER_MEM_ASC:
    case PORDER_MEM_DESC:
    case PORDER_SMACT_ASC: /* pick_by_policy */
        if (!sched_task_requirement(&s->cfg, head, &requirement))
            return (sched_gpu_needs){.grace_blocks = true};
        f.filtered = true;
        f.gate = p->gate;
        f.reads_activity = p->gate || p->order == PORDER_SMACT_ASC;
        f.min_mib = place_memory_needed(s, requirement);
        return f;
    case PORDER_ROUND_ROBIN:      /* any available GPU */
    case PORDER_LEDGER_UTIL:      /* by the ledger: neither memory nor activity */
    case PORDER_LEDGER_CLASS_MEM:
    case PORDER_CARMA:            /* (returned above) */
        f.reads_activity = false;
        return f;
    }
    return f; /* an order added later: any available GPU, activity included */
}

/* Exclusive-first: the first n GPUs, in index order, that are idle and available. */
int place_exclusive(const sched *s, const gpu_view *views, int n, int *out)
{
    int found = 0;
    for (int g = 0; g < s->ngpus && found < n; g++)
        if (views[g].idle && s->grace[g].state == GPU_AVAILABLE)
            out[found++] = g;
    return found == n ? n : 0;
}

/* or-rr: walk at most ngpus GPUs from the cursor collecting available ones. The cursor moves
 * past every GPU looked at, also when too few are found (as in the reference). */
int place_round_robin(sched *s, int n, int *out)
{
    int found = 0, looked = 0;
    while (looked < s->ngpus && found < n) {
        int g = (s->rr_cursor + looked) % s->ngpus;
        looked++;
        if (s->grace[g].state == GPU_AVAILABLE && !ledger_full(&s->ledger, &s->cfg, g))
            out[found++] = g;
    }
    s->rr_cursor = (s->rr_cursor + looked) % s->ngpus;
    return found == n ? n : 0;
}

/* Sort key of a candidate for the policy's order; smaller comes first. Ties keep index order
 * because candidates are scanned in index order and only a strictly better key wins. */
static double order_key(const sched *s, const gpu_view *v, uint64_t avail, int gpu)
{
    switch (s->policy->order) {
    case PORDER_MEM_ASC:
        return (double)avail;
    case PORDER_MEM_DESC:
        return -(double)avail;
    case PORDER_SMACT_ASC:
        return isnan(v->smact) ? INFINITY : v->smact; /* unknown activity sorts last */
    case PORDER_INDEX:
    case PORDER_ROUND_ROBIN:
    case PORDER_LEDGER_UTIL:      /* ledger.c orders those two */
    case PORDER_LEDGER_CLASS_MEM:
    case PORDER_CARMA:            /* carma.c orders its own */
        break;
    }
    return (double)gpu;
}

/* Memory filter -> utilization gate -> availability, then the n best by the policy's order. */
int place_by_policy(sched *s, const gpu_view *views, uint64_t need, int n, int *out)
{
    int *cand = s->scratch, ncand = 0;
    for (int g = 0; g < s->ngpus; g++) {
        const gpu_view *v = &views[g];
        uint64_t avail = 0;
        if (s->policy->memory != PMEM_NONE) {
            if (!sched_available_mib(&s->cfg, v, &avail) || avail < need)
                continue;
        }
        if (s->policy->gate && !sched_gate_passes(&s->cfg, v))
            continue;
        if (s->grace[g].state != GPU_AVAILABLE || ledger_full(&s->ledger, &s->cfg, g))
            continue;
        cand[ncand++] = g;
    }
    if (ncand < n)
        return 0;
    /* Partial selection: n <= SCHED_MAX_TASK_GPUS, so n linear passes beat a full sort. */
    for (int k = 0; k < n; k++) {
        int best = -1;
        double best_key = INFINITY;
        for (int i = 0; i < ncand; i++) {
            int g = cand[i];
            if (g < 0)
                continue;
            uint64_t avail = 0;
            sched_available_mib(&s->cfg, &views[g], &avail);
            double key = order_key(s, &views[g], avail, g);
            if (best < 0 || key < best_key) {
                best = i;
                best_key = key;
            }
        }
        out[k] = cand[best];
        cand[best] = -1;
    }
    return n;
}

