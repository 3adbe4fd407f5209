/* ledger.c — the per-GPU ledger of running tasks (what each GPU has been given, by the tasks'
 * own figures) and the two AEGIS baselines that place by it:
 *
 *   horus (AEGIS select_horus): no gate, no free-memory check, no memory figure. On every
 *     available GPU, projected = Σ profiled_util of its tasks + the task's; feasible when
 *     projected <= horus_util_budget. The ngpus feasible GPUs with the lowest projected.
 *   lucid (AEGIS select_lucid): no gate, no free-memory check. On every available GPU,
 *     feasible when tasks + 1 <= lucid_max_jobs, Σ lucid_class + the task's <=
 *     lucid_class_capacity and Σ oracle figures + the task's <= total - reserve. The ngpus
 *     feasible GPUs by (projected class sum, projected memory) ascending.
 *
 * Both: ties by GPU index (AEGIS's stable sort over GPUs in index order). Unlike AEGIS, which
 * read a missing figure as 0, an unknown figure (the task's, or one on the GPU) makes the GPU
 * infeasible: the task can then only go to idle GPUs through the exclusive-first rule.
 *
 * Every policy: a GPU that runs max_tasks_per_gpu tasks is no candidate (ledger_full). */
#include "sched/ledger.h"

#include <math.h>
#include <stdlib.h>

#define PPB 1e9

int ledger_init(ledger *l, int ngpus)
{
    l->ngpus = ngpus;
    l->charged = 0;
    l->gpu = calloc((size_t)ngpus, sizeof *l->gpu);
    l->cand = calloc((size_t)ngpus, sizeof *l->cand);
    if (!l->gpu || !l->cand) {
        ledger_free(l);
        return -1;
    }
    return 0;
}

void ledger_free(ledger *l)
{
    free(l->gpu);
    free(l->cand);
    l->gpu = NULL;
    l->cand = NULL;
}

/* A task's profiled_util in parts per billion, or -1 when unknown (NaN or out of 0..1). */
static int64_t util_ppb(double util)
{
    if (!(util >= 0.0 && util <= 1.0))
        return -1;
    return llround(util * PPB);
}

/* Which of t's GPUs `gpu` is (t is on it). */
static int slot_of(const sched_task *t, int gpu)
{
    int k = 0;
    while (k < t->ngpus - 1 && t->gpus[k] != gpu)
        k++;
    return k;
}

sched_task *ledger_first(const ledger *l, int gpu)
{
    return gpu >= 0 && gpu < l->ngpus ? l->gpu[gpu].head : NULL;
}

sched_task *ledger_next(const sched_task *t, int gpu)
{
    return t->gnext[slot_of(t, gpu)];
}

void ledger_charge(ledger *l, sched_task *t, const uint64_t *commit_mib, double pressure)
{
    if (t->charge.held)
        return;
    sched_charge c = {.held = true, .ngpus = t->ngpus, .util_ppb = util_ppb(t->profiled_util),
                      .lucid_class = t->lucid_class >= 0 ? t->lucid_class : LUCID_UNKNOWN,
                      .commit_known = commit_mib != NULL,
                      .commit_mib = commit_mib ? *commit_mib : 0, .pressure = pressure};
    c.oracle_known = mem_figures_get(&t->mem, MEM_ORACLE, &c.oracle_mib);
    if (!c.oracle_known)
        c.oracle_mib = 0;
    for (int k = 0; k < c.ngpus; k++) {
        gpu_ledger *g = &l->gpu[t->gpus[k]];
        t->gprev[k] = NULL;
        t->gnext[k] = g->head;
        if (g->head)
            g->head->gprev[slot_of(g->head, t->gpus[k])] = t;
        g->head = t;
        if (c.commit_known)
            g->commit_mib += c.commit_mib;
        else
            g->commit_unknown++;
        g->ntasks++;
        if (c.util_ppb < 0)
            g->util_unknown++;
        else
            g->util_ppb += c.util_ppb;
        if (c.lucid_class < 0)
            g->class_unknown++;
        else
            g->class_sum += c.lucid_class;
        if (!c.oracle_known)
            g->oracle_unknown++;
        else
            g->oracle_mib += c.oracle_mib;
    }
    l->charged += c.ngpus;
    t->charge = c;
}

void ledger_discharge(ledger *l, sched_task *t)
{
    const sched_charge *c = &t->charge;
    if (!c->held)
        return;
    for (int k = 0; k < c->ngpus; k++) {
        int gi = t->gpus[k];
        gpu_ledger *g = &l->gpu[gi];
        if (t->gprev[k])
            t->gprev[k]->gnext[slot_of(t->gprev[k], gi)] = t->gnext[k];
        else
            g->head = t->gnext[k];
        if (t->gnext[k])
            t->gnext[k]->gprev[slot_of(t->gnext[k], gi)] = t->gprev[k];
        t->gnext[k] = t->gprev[k] = NULL;
        if (c->commit_known)
            g->commit_mib -= c->commit_mib;
        else
            g->commit_unknown--;
        g->ntasks--;
        if (c->util_ppb < 0)
            g->util_unknown--;
        else
            g->util_ppb -= c->util_ppb;
        if (c->lucid_class < 0)
            g->class_unknown--;
        else
            g->class_sum -= c->lucid_class;
        if (!c->oracle_known)
            g->oracle_unknown--;
        else
            g->oracle_mib -= c->oracle_mib;
    }
    l->charged -= c->ngpus;
    t->charge = (sched_charge){0};
}

sched_gpu_load ledger_load(const ledger *l, int gpu)
{
    sched_gpu_load out = {0};
    if (gpu < 0 || gpu >= l->ngpus)
        return out;
    const gpu_ledger *g = &l->gpu[gpu];
    out.ntasks = g->ntasks;
    out.util_sum = g->util_unknown ? NAN : (double)g->util_ppb / PPB;
    out.class_sum = g->class_sum;
    out.class_unknown = g->class_unknown;
    out.oracle_mib = g->oracle_mib;
    out.oracle_unknown = g->oracle_unknown;
    out.commit_mib = g->commit_mib;
    out.commit_unknown = g->commit_unknown;
    return out;
}

bool ledger_consistent(const ledger *l)
{
    long total = 0;
    for (int i = 0; i < l->ngpus; i++) {
        const gpu_ledger *g = &l->gpu[i];
        if (g->ntasks < 0 || g->util_ppb < 0 || g->class_sum < 0)
            return false;
        if (g->util_unknown < 0 || g->util_unknown > g->ntasks || g->class_unknown < 0 ||
            g->class_unknown > g->ntasks || g->oracle_unknown < 0 ||
            g->oracle_unknown > g->ntasks)
            return false;
        if (g->ntasks == 0 && (g->util_ppb || g->class_sum || g->oracle_mib || g->commit_mib))
            return false;
        if (g->commit_unknown < 0 || g->commit_unknown > g->ntasks)
            return false;
        int listed = 0; /* the list holds exactly its tasks, each on this GPU */
        for (const sched_task *t = g->head; t && listed <= g->ntasks; t = ledger_next(t, i)) {
            if (t->gpus[slot_of(t, i)] != i || !t->charge.held)
                return false;
            listed++;
        }
        if (listed != g->ntasks)
            return false;
        total += g->ntasks;
    }
    return total == l->charged;
}

/* n <= SCHED_MAX_TASK_GPUS, so n linear passes beat a full sort. */
int ledger_take_best(ledger_cand *c, int ncand, int n, int *out)
{
    if (ncand < n)
        return 0;
    for (int k = 0; k < n; k++) {
        int best = -1;
        for (int i = 0; i < ncand; i++) {
            if (c[i].gpu < 0)
                continue;
            /* Candidates are in index order: only a strictly smaller key wins a tie. */
            if (best < 0 || c[i].key1 < c[best].key1 ||
                (c[i].key1 == c[best].key1 && c[i].key2 < c[best].key2))
                best = i;
        }
        out[k] = c[best].gpu;
        c[best].gpu = -1;
    }
    return n;
}

bool ledger_full(const ledger *l, const sched_config *cfg, int gpu)
{
    return cfg->max_tasks_per_gpu > 0 && l->gpu[gpu].ntasks >= cfg->max_tasks_per_gpu;
}

int ledger_pick_horus(ledger *l, const sched_config *cfg, const gpu_grace *grace,
                      const sched_task *t, int *out)
{
    int64_t mine = util_ppb(t->profiled_util);
    if (mine < 0)
        return 0;
    double budget = cfg->horus_util_budget * PPB;
    int ncand = 0;
    for (int i = 0; i < l->ngpus; i++) {
        const gpu_ledger *g = &l->gpu[i];
        if (grace[i].state != GPU_AVAILABLE || g->util_unknown || ledger_full(l, cfg, i))
            continue;
        int64_t projected = g->util_ppb + mine;
        if ((double)projected <= budget)
            l->cand[ncand++] = (ledger_cand){i, projected, 0};
    }
    return ledger_take_best(l->cand, ncand, t->ngpus, out);
}

int ledger_pick_lucid(ledger *l, const sched_config *cfg, const gpu_grace *grace,
                      const gpu_view *views, const sched_task *t, int *out)
{
    uint64_t mine_mib;
    if (t->lucid_class < 0 || !mem_figures_get(&t->mem, MEM_ORACLE, &mine_mib))
        return 0;
    int ncand = 0;
    for (int i = 0; i < l->ngpus; i++) {
        const gpu_ledger *g = &l->gpu[i];
        if (grace[i].state != GPU_AVAILABLE || g->class_unknown || g->oracle_unknown ||
            ledger_full(l, cfg, i))
            continue;
        if (g->ntasks + 1 > cfg->lucid_max_jobs)
            continue;
        int64_t classes = (int64_t)g->class_sum + t->lucid_class;
        if (classes > cfg->lucid_class_capacity)
            continue;
        uint64_t total = views[i].total_mib;
        uint64_t usable = total > cfg->reserve_mib ? total - cfg->reserve_mib : 0;
        if (mine_mib > usable || g->oracle_mib > usable - mine_mib)
            continue;
        l->cand[ncand++] = (ledger_cand){i, classes, g->oracle_mib + mine_mib};
    }
    return ledger_take_best(l->cand, ncand, t->ngpus, out);
}
