/* explain.c — why a queued task waits (sched_explain), as Slurm's squeue shows a REASON: the
 * checks sched_next makes for the configured policy, repeated without placing anything.
 *
 * Each GPU is judged by the policy's filters in their order (memory, then the gate or the
 * progress gain, then the grace state); a GPU is counted out at the first filter it fails.
 * The reason is the first filter after which fewer GPUs are left than the task asks for: the
 * one that would still hold it back if every later filter let everything through. */
#include <math.h>

#include "sched/sched_int.h"

static const char *const reason_names[SCHED_REASON_COUNT] = {
    [SCHED_REASON_NONE] = "none",
    [SCHED_REASON_STARTING] = "starting",
    [SCHED_REASON_NO_SAMPLE] = "no_sample",
    [SCHED_REASON_IDLE_GPUS] = "idle_gpus",
    [SCHED_REASON_MEMORY] = "memory",
    [SCHED_REASON_GATE] = "gate",
    [SCHED_REASON_GRACE] = "grace",
    [SCHED_REASON_INTERFERENCE] = "interference",
    [SCHED_REASON_LEDGER] = "ledger",
    [SCHED_REASON_NO_PROFILE] = "no_profile",
    [SCHED_REASON_BEHIND] = "behind",
    [SCHED_REASON_RESERVED] = "reserved",
    [SCHED_REASON_HELD] = "held",
    [SCHED_REASON_DEPENDENCY] = "dependency",
    [SCHED_REASON_TASK_CAP] = "task_cap",
    [SCHED_REASON_STATE_SPACE] = "state_space",
};

const char *sched_reason_name(sched_reason_kind k)
{
    return (unsigned)k < SCHED_REASON_COUNT ? reason_names[k] : "?";
}

/* The filters in the order a policy applies them; a GPU's verdict is the first it fails
 * (SCHED_REASON_NONE: it passes them all). */
static const sched_reason_kind filter_order[] = {
    SCHED_REASON_MEMORY,       SCHED_REASON_IDLE_GPUS, SCHED_REASON_TASK_CAP, SCHED_REASON_GATE,
    SCHED_REASON_INTERFERENCE, SCHED_REASON_LEDGER,    SCHED_REASON_GRACE,
};

/* From the GPUs' verdicts: NONE when at least n pass, else the reason, with the first GPU
 * that failed it. */
static void from_verdicts(const int *verdict, int ngpus, int n, sched_reason *out)
{
    int left = ngpus;
    for (size_t k = 0; k < sizeof filter_order / sizeof *filter_order; k++) {
        int first = -1;
        for (int g = 0; g < ngpus; g++)
            if (verdict[g] == (int)filter_order[k]) {
                left--;
                first = first < 0 ? g : first;
            }
        if (left < n) {
            out->kind = filter_order[k];
            out->gpu = first;
            return;
        }
    }
    out->kind = SCHED_REASON_STARTING;
}

/* The most memory any GPU offers (room by `room`), for a MEMORY reason. */
static void most_room(const sched *s, const gpu_view *views, sched_reason *out,
                      bool (*room)(const sched *, const gpu_view *, int, uint64_t *))
{
    out->gpu = -1;
    out->most_mib = 0;
    for (int g = 0; g < s->ngpus; g++) {
        uint64_t r;
        if (room(s, &views[g], g, &r) && (out->gpu < 0 || r > out->most_mib)) {
            out->gpu = g;
            out->most_mib = r;
        }
    }
}

/* The core's per-GPU scratch, which no decision reads between calls: each GPU's verdict. */
static int *scratch(const sched *s)
{
    return ((sched *)s)->scratch;
}

static bool available_room(const sched *s, const gpu_view *v, int g, uint64_t *mib)
{
    (void)g;
    return sched_available_mib(&s->cfg, v, mib);
}

/* A task that may take idle GPUs only: how many are idle and available, or the grace state
 * that keeps an idle one back. */
static void idle_only(const sched *s, const sched_task *t, const gpu_view *views,
                      sched_reason *out)
{
    int idle = 0, held = -1;
    for (int g = 0; g < s->ngpus; g++) {
        if (!views[g].idle)
            continue;
        if (s->grace[g].state == GPU_AVAILABLE)
            idle++;
        else if (held < 0)
            held = g;
    }
    out->have = idle;
    if (idle >= t->ngpus)
        out->kind = SCHED_REASON_STARTING;
    else if (held >= 0 && idle + 1 >= t->ngpus) {
        out->kind = SCHED_REASON_GRACE;
        out->gpu = held;
    } else
        out->kind = SCHED_REASON_IDLE_GPUS;
}

/* CARMA's and AEGIS's policies: strict FIFO, exclusive-first, then the policy's rule. */
static void explain_fifo(const sched *s, const sched_task *t, const gpu_view *views,
                         sched_reason *out)
{
    const sched_task *head = s->recovery_q.head ? s->recovery_q.head : s->main_q.head;
    if (t != head) {
        out->kind = SCHED_REASON_BEHIND;
        out->task = head->id;
        return;
    }
    const policy_desc *p = s->policy;
    int n = t->ngpus, gpus[SCHED_MAX_TASK_GPUS];
    idle_only(s, t, views, out);
    if (out->kind == SCHED_REASON_STARTING || !p->collocates || t->where == SCHED_IN_RECOVERY)
        return;
    int *verdict = scratch(s);
    uint64_t requirement = 0, need = 0;
    if (p->order == PORDER_LEDGER_UTIL || p->order == PORDER_LEDGER_CLASS_MEM) {
        bool profiled = p->order == PORDER_LEDGER_UTIL
                            ? !isnan(t->profiled_util)
                            : t->lucid_class >= 0 && mem_figures_get(&t->mem, MEM_ORACLE,
                                                                     &requirement);
        if (!profiled) {
            out->kind = SCHED_REASON_NO_PROFILE;
            return;
        }
        /* The picks write only the ledger's candidate scratch. */
        ledger *l = (ledger *)&s->ledger;
        int got = p->order == PORDER_LEDGER_UTIL
                      ? ledger_pick_horus(l, &s->cfg, s->grace, t, gpus)
                      : ledger_pick_lucid(l, &s->cfg, s->grace, views, t, gpus);
        for (int g = 0; g < s->ngpus; g++)
            verdict[g] = ledger_full(&s->ledger, &s->cfg, g)    ? SCHED_REASON_TASK_CAP
                         : s->grace[g].state != GPU_AVAILABLE ? SCHED_REASON_GRACE
                                                              : SCHED_REASON_LEDGER;
        from_verdicts(verdict, s->ngpus, n, out);
        if (got)
            out->kind = SCHED_REASON_STARTING;
        return;
    }
    if (p->order != PORDER_ROUND_ROBIN) {
        if (!sched_task_requirement(&s->cfg, t, &requirement))
            return; /* no figure to collocate with: idle GPUs only (idle_only said so) */
        need = place_memory_needed(s, requirement);
    }
    for (int g = 0; g < s->ngpus; g++) {
        uint64_t avail = 0;
        verdict[g] = SCHED_REASON_NONE;
        if (p->memory != PMEM_NONE &&
            (!sched_available_mib(&s->cfg, &views[g], &avail) || avail < need))
            verdict[g] = SCHED_REASON_MEMORY;
        else if (ledger_full(&s->ledger, &s->cfg, g))
            verdict[g] = SCHED_REASON_TASK_CAP;
        else if (p->gate && !sched_gate_passes(&s->cfg, &views[g]))
            verdict[g] = SCHED_REASON_GATE;
        else if (s->grace[g].state != GPU_AVAILABLE)
            verdict[g] = SCHED_REASON_GRACE;
    }
    from_verdicts(verdict, s->ngpus, n, out);
    if (out->kind == SCHED_REASON_MEMORY) {
        out->need_mib = need;
        most_room(s, views, out, available_room);
    }
}

/* carma: its own fit of t on every GPU now (carma.c's pick, read-only). */
static void carma_fits(const sched *s, const sched_task *t, const gpu_view *views, double now,
                       sched_reason *out)
{
    carma_fit f = carma_fit_of(s, t);
    int *verdict = scratch(s);
    int idle = 0;
    for (int g = 0; g < s->ngpus; g++) {
        uint64_t room = 0;
        bool known = carma_room_now(s, &views[g], g, &room);
        verdict[g] = SCHED_REASON_NONE;
        if (!s->cfg.carma_ledger && s->grace[g].state != GPU_AVAILABLE)
            verdict[g] = SCHED_REASON_GRACE;
        else if (carma_gpu_idle(s, views, g)) {
            idle++;
            if (f.learned && f.figure > carma_usable_mib(s, views[g].total_mib))
                verdict[g] = SCHED_REASON_MEMORY;
        } else if (f.idle_only)
            verdict[g] = SCHED_REASON_IDLE_GPUS;
        else if (!known || room < f.need)
            verdict[g] = SCHED_REASON_MEMORY;
        else if (ledger_full(&s->ledger, &s->cfg, g))
            verdict[g] = SCHED_REASON_TASK_CAP;
        else if (s->cfg.carma_interference) {
            if (!(carma_gain(s, g, f.pressure, now) > s->cfg.carma_min_gain))
                verdict[g] = SCHED_REASON_INTERFERENCE;
        } else if (!sched_gate_passes(&s->cfg, &views[g]))
            verdict[g] = SCHED_REASON_GATE;
    }
    from_verdicts(verdict, s->ngpus, t->ngpus, out);
    out->have = idle;
    if (out->kind == SCHED_REASON_MEMORY) {
        out->need_mib = f.learned && f.idle_only ? f.figure : f.need;
        most_room(s, views, out, carma_room_now);
    }
}

/* carma: the head by its fit; a later task by its fit, then by what backfill allows. */
static void explain_carma(const sched *s, const sched_task *t, const gpu_view *views,
                          double now, sched_reason *out)
{
    sched_task *h = carma_head(s, now);
    carma_fits(s, t, views, now, out);
    if (t == h) {
        out->passed = s->cfg.carma_backfill ? h->skipped : 0;
        return;
    }
    sched_reason head;
    carma_fits(s, h, views, now, &head);
    int looked = 0; /* its place in backfill's walk, which stops at backfill_depth */
    for (const sched_task *b = s->recovery_q.head ? s->recovery_q.head : s->main_q.head;
         b && b != t && looked < s->cfg.backfill_depth; looked++)
        b = b->qnext ? b->qnext : (b->where == SCHED_IN_RECOVERY ? s->main_q.head : NULL);
    if (head.kind == SCHED_REASON_STARTING || !s->cfg.carma_backfill ||
        looked >= s->cfg.backfill_depth) {
        *out = (sched_reason){.kind = SCHED_REASON_BEHIND, .ngpus = t->ngpus, .gpu = -1,
                              .task = h->id, .until = NAN};
        return;
    }
    if (out->kind != SCHED_REASON_STARTING)
        return; /* it does not fit now: that is why, whatever the head */
    /* It fits: backfill lets it pass unless the head's reservation forbids it. The
     * reservation walk writes only the policy's scratch and the predicted ends' memo. */
    double shadow = carma_reservation((sched *)s, views, h, now);
    bool unjudged = isinf(shadow) || isnan(t->runtime_est_s);
    if (unjudged && h->skipped < s->cfg.backfill_max_skips)
        return; /* it may pass the head on the skip count */
    out->kind = SCHED_REASON_RESERVED;
    out->task = h->id;
    out->until = isfinite(shadow) ? shadow : NAN;
}

void sched_explain(const sched *s, const sched_task *t, const gpu_view *views, double now,
                   sched_reason *out)
{
    *out = (sched_reason){.kind = SCHED_REASON_NONE, .ngpus = t->ngpus, .gpu = -1,
                          .until = NAN};
    if (t->where != SCHED_IN_MAIN && t->where != SCHED_IN_RECOVERY)
        return;
    /* grace states as sched_next would see them at `now` */
    if (s->ngrace && now >= s->next_expiry)
        sched_advance((sched *)s, now);
    if (s->policy->order == PORDER_CARMA)
        explain_carma(s, t, views, now, out);
    else
        explain_fifo(s, t, views, out);
}
