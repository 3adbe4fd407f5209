/* sched.c — the scheduling core: strict FIFO with head-of-line blocking, the recovery queue's
 * priority, the exclusive-first rule, each policy's filters and order (policy.c), the per-GPU
 * grace state, and the bounded recovery rules. The per-GPU ledger of placed tasks and the
 * policies that place by it (horus, lucid) are in ledger.c. See sched.h for the contract. */
#include "sched/sched.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched_int.h"

/* A queue's links run both ways, its length and tail match, and every task in it says so. */
static bool queue_check(const task_queue *q, sched_task_where where)
{
    size_t n = 0;
    const sched_task *prev = NULL;
    for (const sched_task *t = q->head; t; prev = t, t = t->qnext, n++)
        if (t->qprev != prev || t->where != where || n > q->len)
            return false;
    return n == q->len && q->tail == prev;
}

bool sched_check(const sched *s)
{
    int ngrace = 0;
    for (int g = 0; g < s->ngpus; g++) {
        const gpu_grace *gr = &s->grace[g];
        if ((gr->state == GPU_AVAILABLE) != (gr->task == NULL))
            return false;
        if (gr->state == GPU_GRACE) {
            ngrace++;
            if (gr->seen_at + s->cfg.grace_s < s->next_expiry) /* its expiry would be missed */
                return false;
        }
    }
    if (ngrace != s->ngrace || s->rr_cursor < 0 || s->rr_cursor >= s->ngpus)
        return false;
    if (!queue_check(&s->main_q, SCHED_IN_MAIN) ||
        !queue_check(&s->recovery_q, SCHED_IN_RECOVERY) ||
        !queue_check(&s->running_q, SCHED_RUNNING))
        return false;
    for (int g = 0; g < s->ngpus; g++) /* a GPU is held only by a task running on it */
        if (s->grace[g].task && s->grace[g].task->where != SCHED_RUNNING)
            return false;
    return ledger_consistent(&s->ledger);
}

void sched_task_init(sched_task *t)
{
    memset(t, 0, sizeof *t);
    t->max_retries = -1;
    t->profiled_util = NAN;
    t->lucid_class = LUCID_UNKNOWN;
    t->runtime_est_s = NAN;
    t->solo_smact = NAN;
    t->solo_drama = NAN;
    t->queued_at = NAN;
}

sched *sched_create(const sched_config *cfg, int ngpus, carma_err *err)
{
    if (sched_config_validate(cfg, err))
        return NULL;
    if (ngpus < 1) {
        carma_err_set(err, "a server needs at least one GPU (got %d)", ngpus);
        return NULL;
    }
    sched *s = calloc(1, sizeof *s);
    if (s) {
        s->grace = calloc((size_t)ngpus, sizeof *s->grace);
        s->scratch = calloc((size_t)ngpus, sizeof *s->scratch);
        s->total_mib = calloc((size_t)ngpus, sizeof *s->total_mib);
        s->room = calloc((size_t)ngpus, sizeof *s->room);
        s->left = calloc((size_t)ngpus, sizeof *s->left);
        s->spare = calloc((size_t)ngpus, sizeof *s->spare);
        s->ready = calloc((size_t)ngpus, sizeof *s->ready);
    }
    if (!s || !s->grace || !s->scratch || !s->total_mib || !s->room || !s->left || !s->spare ||
        !s->ready ||
        ledger_init(&s->ledger, ngpus)) {
        sched_destroy(s);
        carma_err_set(err, "out of memory");
        return NULL;
    }
    s->cfg = *cfg;
    s->policy = policy_describe(cfg->policy);
    s->ngpus = ngpus;
    s->next_expiry = INFINITY;
    return s;
}

void sched_destroy(sched *s)
{
    if (!s)
        return;
    free(s->grace);
    free(s->scratch);
    free(s->total_mib);
    free(s->room);
    free(s->left);
    free(s->spare);
    free(s->ready);
    free(s->ends);
    ledger_free(&s->ledger);
    free(s);
}

const sched_config *sched_get_config(const sched *s) { return &s->cfg; }
int sched_ngpus(const sched *s) { return s->ngpus; }
size_t sched_main_len(const sched *s) { return s->main_q.len; }
size_t sched_recovery_len(const sched *s) { return s->recovery_q.len; }
sched_task *sched_main_head(const sched *s) { return s->main_q.head; }
sched_task *sched_recovery_head(const sched *s) { return s->recovery_q.head; }

/* ---- queues ---------------------------------------------------------------------------------- */

static int check_new_task(const sched *s, const sched_task *t, carma_err *err)
{
    if (t->where != SCHED_NOWHERE)
        return carma_err_set(err, "task %llu is already queued or running",
                             (unsigned long long)t->id);
    if (t->ngpus < 1 || t->ngpus > SCHED_MAX_TASK_GPUS)
        return carma_err_set(err, "task %llu asks for %d GPUs (1..%d allowed)",
                             (unsigned long long)t->id, t->ngpus, SCHED_MAX_TASK_GPUS);
    if (t->ngpus > s->ngpus)
        return carma_err_set(err, "task %llu asks for %d GPUs but the server has %d",
                             (unsigned long long)t->id, t->ngpus, s->ngpus);
    const double *frac[] = {&t->profiled_util, &t->solo_smact, &t->solo_drama};
    const char *frac_name[] = {"profiled_util", "solo_smact", "solo_drama"};
    for (int k = 0; k < 3; k++)
        if (!isnan(*frac[k]) && !(*frac[k] >= 0.0 && *frac[k] <= 1.0))
            return carma_err_set(err, "task %llu: %s %g is not NaN or a fraction 0..1",
                                 (unsigned long long)t->id, frac_name[k], *frac[k]);
    if (!isnan(t->runtime_est_s) && !(t->runtime_est_s >= 0.0 && isfinite(t->runtime_est_s)))
        return carma_err_set(err, "task %llu: runtime_est_s %g is not NaN or >= 0 seconds",
                             (unsigned long long)t->id, t->runtime_est_s);
    if (t->lucid_class < LUCID_UNKNOWN || t->lucid_class > LUCID_JUMBO)
        return carma_err_set(err, "task %llu: lucid_class %d is not -1 (unknown), 0, 1 or 2",
                             (unsigned long long)t->id, t->lucid_class);
    return 0;
}

int sched_submit(sched *s, sched_task *t, carma_err *err)
{
    if (check_new_task(s, t, err))
        return -1;
    queue_push_back(&s->main_q, t);
    t->where = SCHED_IN_MAIN;
    assert(sched_check(s));
    return 0;
}

int sched_submit_recovery(sched *s, sched_task *t, carma_err *err)
{
    if (check_new_task(s, t, err))
        return -1;
    queue_push_back(&s->recovery_q, t);
    t->where = SCHED_IN_RECOVERY;
    assert(sched_check(s));
    return 0;
}

bool sched_remove_queued(sched *s, sched_task *t)
{
    if (t->where == SCHED_IN_MAIN)
        queue_remove(&s->main_q, t);
    else if (t->where == SCHED_IN_RECOVERY)
        queue_remove(&s->recovery_q, t);
    else
        return false;
    t->where = SCHED_NOWHERE;
    assert(sched_check(s));
    return true;
}

/* ---- grace state (CARMA §5) ---------------------------------------------------------------- */

static void grace_release(sched *s, int gpu)
{
    if (s->grace[gpu].state == GPU_GRACE)
        s->ngrace--;
    s->grace[gpu] = (gpu_grace){GPU_AVAILABLE, NULL, 0.0};
}

void sched_advance(sched *s, double now)
{
    if (s->ngrace == 0 || now < s->next_expiry)
        return;
    double next = INFINITY;
    for (int g = 0; g < s->ngpus; g++) {
        if (s->grace[g].state != GPU_GRACE)
            continue;
        double expiry = s->grace[g].seen_at + s->cfg.grace_s;
        if (now >= expiry)
            grace_release(s, g);
        else if (expiry < next)
            next = expiry;
    }
    s->next_expiry = next;
    assert(sched_check(s));
}

static void grace_enter(sched *s, int gpu, double seen_at)
{
    if (s->grace[gpu].state != GPU_GRACE)
        s->ngrace++;
    s->grace[gpu].state = GPU_GRACE;
    s->grace[gpu].seen_at = seen_at;
    double expiry = seen_at + s->cfg.grace_s;
    if (expiry < s->next_expiry)
        s->next_expiry = expiry;
}

void sched_process_seen(sched *s, const sched_task *t, int gpu, double now)
{
    if (gpu < 0 || gpu >= s->ngpus)
        return;
    gpu_grace *g = &s->grace[gpu];
    if (g->state == GPU_LAUNCHING && g->task == t)
        grace_enter(s, gpu, now);
    assert(sched_check(s));
}

gpu_grace sched_gpu_grace(const sched *s, int gpu)
{
    gpu_grace none = {GPU_AVAILABLE, NULL, 0.0};
    return gpu >= 0 && gpu < s->ngpus ? s->grace[gpu] : none;
}

static void mark_launching(sched *s, sched_task *t, const int *gpus, int n)
{
    for (int k = 0; k < n; k++) {
        int g = gpus[k];
        if (s->grace[g].state == GPU_GRACE)
            s->ngrace--;
        s->grace[g] = (gpu_grace){GPU_LAUNCHING, t, 0.0};
        t->gpus[k] = g;
    }
}

void sched_place(sched *s, sched_task *t, const int *gpus, place_rule rule, uint64_t requirement,
                 const uint64_t *commit, const gpu_view *views, double now, sched_decision *out)
{
    bool from_recovery = t->where == SCHED_IN_RECOVERY;
    queue_remove(from_recovery ? &s->recovery_q : &s->main_q, t);
    queue_push_back(&s->running_q, t);
    t->where = SCHED_RUNNING;
    t->attempts++;
    t->started_at = now;
    mark_launching(s, t, gpus, t->ngpus);
    bool carma = s->policy->order == PORDER_CARMA;
    if (carma)
        carma_progress(s, gpus, t->ngpus, now, false);
    t->done_s = 0;
    t->done_at = now;
    ledger_charge(&s->ledger, t, commit, carma_task_pressure(&s->cfg, t));
    if (carma)
        carma_progress(s, gpus, t->ngpus, now, true);

    memset(out, 0, sizeof *out);
    out->task = t;
    out->ngpus = t->ngpus;
    memcpy(out->gpus, gpus, (size_t)t->ngpus * sizeof *gpus);
    out->rule = rule;
    out->from_recovery = from_recovery;
    out->requirement_mib = rule == PLACE_POLICY ? requirement : 0;
    /* shared: busy in the last sample, or holding a task placed since (its process not on
     * the GPU yet, or one that never uses it), which only the ledger shows */
    for (int k = 0; k < t->ngpus; k++)
        if (!views[gpus[k]].idle || s->ledger.gpu[gpus[k]].ntasks > 1)
            out->collocated = true;
    assert(sched_check(s));
}

void sched_see_gpus(sched *s, const gpu_view *views)
{
    for (int g = 0; g < s->ngpus; g++) /* for what an out-of-memory crash alone teaches */
        s->total_mib[g] = views[g].total_mib;
}

bool sched_oom_judgeable(const sched *s)
{
    if (s->policy->order != PORDER_CARMA || !s->cfg.carma_oom_learning)
        return true;
    for (int g = 0; g < s->ngpus; g++)
        if (s->total_mib[g] > 0)
            return true;
    return false;
}

bool sched_next(sched *s, double now, const gpu_view *views, sched_decision *out)
{
    sched_advance(s, now);
    if (s->policy->order == PORDER_CARMA) {
        /* Only carma's OOM learning reads the GPUs' memory (carma_learn.c); copying it for
         * every GPU at every call was most of a light load's cost on a large server. */
        sched_see_gpus(s, views);
        return carma_next(s, now, views, out);
    }
    bool from_recovery = s->recovery_q.head != NULL;
    sched_task *t = from_recovery ? s->recovery_q.head : s->main_q.head;
    if (!t)
        return false;
    int n = t->ngpus;
    int gpus[SCHED_MAX_TASK_GPUS];
    place_rule rule = PLACE_EXCLUSIVE_FIRST;
    uint64_t requirement = 0;
    int got = place_exclusive(s, views, n, gpus);
    /* Collocation only for main-queue tasks while no recovered task waits (CARMA §1.3). */
    if (!got && s->policy->collocates && !from_recovery) {
        rule = PLACE_POLICY;
        if (s->policy->order == PORDER_ROUND_ROBIN)
            got = place_round_robin(s, n, gpus);
        else if (s->policy->order == PORDER_LEDGER_UTIL)
            got = ledger_pick_horus(&s->ledger, &s->cfg, s->grace, t, gpus);
        else if (!sched_task_requirement(&s->cfg, t, &requirement))
            got = 0;
        else if (s->policy->order == PORDER_LEDGER_CLASS_MEM)
            got = ledger_pick_lucid(&s->ledger, &s->cfg, s->grace, views, t, gpus);
        else
            got = place_by_policy(s, views, place_memory_needed(s, requirement), n, gpus);
    }
    if (!got)
        return false;
    sched_place(s, t, gpus, rule, requirement, NULL, views, now, out);
    return true;
}

/* ---- endings and recovery (CARMA §7, with a retry cap) ------------------------------------- */

static sched_end task_ended(sched *s, sched_task *t, task_outcome outcome,
                           const sched_oom_seen *seen, double now)
{
    bool carma = s->policy->order == PORDER_CARMA && t->charge.held;
    int gpus[SCHED_MAX_TASK_GPUS], n = t->charge.held ? t->charge.ngpus : 0;
    memcpy(gpus, t->gpus, sizeof gpus);
    if (carma)
        carma_progress(s, gpus, n, now, false);
    sched_end learned = SCHED_END_RETRY;
    if (outcome == TASK_OOM && s->policy->order == PORDER_CARMA && s->cfg.carma_oom_learning &&
        t->where == SCHED_RUNNING)
        learned = carma_learn(s, t, seen); /* while its GPUs' ledger still shows it */
    if (t->where == SCHED_RUNNING)
        queue_remove(&s->running_q, t);
    ledger_discharge(&s->ledger, t);
    if (carma)
        carma_progress(s, gpus, n, now, true);
    for (int k = 0; k < t->ngpus; k++) {
        int g = t->gpus[k];
        if (g >= 0 && g < s->ngpus && s->grace[g].task == t)
            grace_release(s, g);
    }
    t->where = SCHED_NOWHERE;
    assert(sched_check(s));
    if (outcome != TASK_OOM)
        return SCHED_END_FINAL;
    if (learned == SCHED_END_NEVER_FITS)
        return learned;
    int cap = t->max_retries >= 0 ? t->max_retries : s->cfg.retry_cap;
    int retries_used = t->attempts > 0 ? t->attempts - 1 : 0;
    if (retries_used >= cap)
        return SCHED_END_FINAL;
    queue_push_back(&s->recovery_q, t);
    t->where = SCHED_IN_RECOVERY;
    assert(sched_check(s));
    return SCHED_END_RETRY;
}

sched_end sched_task_ended(sched *s, sched_task *t, task_outcome outcome, double now)
{
    return task_ended(s, t, outcome, NULL, now);
}

sched_end sched_task_oom(sched *s, sched_task *t, const sched_oom_seen *seen, double now)
{
    return task_ended(s, t, TASK_OOM, seen, now);
}

int sched_restore_running(sched *s, sched_task *t, const int *gpus, int ngpus,
                          gpu_grace_state state, double seen_at, carma_err *err)
{
    if (check_new_task(s, t, err))
        return -1;
    if (ngpus != t->ngpus)
        return carma_err_set(err, "task %llu: restored on %d GPUs, asks for %d",
                             (unsigned long long)t->id, ngpus, t->ngpus);
    for (int k = 0; k < ngpus; k++) {
        if (gpus[k] < 0 || gpus[k] >= s->ngpus)
            return carma_err_set(err, "task %llu: GPU %d does not exist",
                                 (unsigned long long)t->id, gpus[k]);
        for (int j = 0; j < k; j++) /* twice in a GPU's ledger would break its list */
            if (gpus[j] == gpus[k])
                return carma_err_set(err, "task %llu: GPU %d is listed twice",
                                     (unsigned long long)t->id, gpus[k]);
    }
    t->where = SCHED_RUNNING;
    queue_push_back(&s->running_q, t);
    t->started_at = seen_at;
    t->done_s = 0; /* what it did before the restart is not known: all of it is left */
    t->done_at = seen_at;
    t->speed_est = 1.0;
    for (int k = 0; k < ngpus; k++) {
        int g = gpus[k];
        t->gpus[k] = g;
        /* A GPU held by another restored task keeps that hold; availability is per GPU. */
        if (s->grace[g].state != GPU_AVAILABLE || state == GPU_AVAILABLE)
            continue;
        s->grace[g] = (gpu_grace){GPU_LAUNCHING, t, 0.0};
        if (state == GPU_GRACE)
            grace_enter(s, g, seen_at);
    }
    uint64_t figure;
    mem_source src;
    bool learned;
    bool commit = s->policy->order == PORDER_CARMA &&
                  carma_figure(&s->cfg, t, &figure, &src, &learned);
    uint64_t commit_mib = commit ? figure + s->cfg.margin_mib : 0;
    ledger_charge(&s->ledger, t, commit ? &commit_mib : NULL, carma_task_pressure(&s->cfg, t));
    if (s->policy->order == PORDER_CARMA) /* the speeds of all on its GPUs, its own included */
        carma_progress(s, gpus, ngpus, seen_at, true);
    assert(sched_check(s));
    return 0;
}

sched_gpu_load sched_gpu_ledger(const sched *s, int gpu)
{
    return ledger_load(&s->ledger, gpu);
}
