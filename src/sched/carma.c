/* carma.c — the carma policy: CARMA's placement without its four limits (docs/policy.md).
 *
 *   ledger        Each GPU's committed memory is the figure + margin of the tasks placed on it
 *                 (ledger.c), reconciled with the measured free memory: a task fits where both
 *                 leave room. A GPU takes its next task at once; no grace period.
 *   backfill      When the head cannot be placed, a later task may start if it fits now and,
 *                 by the runtime estimates at hand, does not delay the head's reserved start
 *                 (EASY backfilling with memory as the resource). Where estimates are missing,
 *                 a head lets at most backfill_max_skips tasks pass it.
 *   interference  Each GPU's total progress (the sum of its tasks' speeds) is predicted with
 *                 the fitted model (interference.c); a task goes where that total rises most,
 *                 and waits when it would not rise by more than carma_min_gain.
 *   oom learning  An out-of-memory crash raises the task's figure to what it was seen to ask
 *                 for (doubled, to at most the largest GPU, when nothing above it was seen);
 *                 one that crashed with its GPUs to itself and was seen filling them needs
 *                 more than they hold, so it waits for a bigger GPU or, when there is none,
 *                 fails with that reason (carma_learn.c).
 *
 * Each part has its config key (carma_*). Two more shape it: carma_measured_first (a measured
 * figure before the estimator's) and carma_longest_first (the head is the longest queued task,
 * up to carma_max_wait_s). With all six off it places as est-magm does: exclusive-first, the
 * gate and the most available memory, grace, strict FIFO with recovered tasks first on idle
 * GPUs, blind retries. */
#include <math.h>
#include <stdlib.h>

#include "sched/sched_int.h"

bool carma_figure(const sched_config *c, const sched_task *t, uint64_t *mib, mem_source *src,
                  bool *learned)
{
    uint64_t f = 0;
    bool known = true;
    *learned = false;
    if (c->carma_measured_first && mem_figures_get(&t->mem, MEM_ORACLE, &f))
        *src = MEM_ORACLE;
    else {
        *src = c->estimator;
        known = mem_figures_get(&t->mem, c->estimator, &f);
    }
    if (c->carma_oom_learning && t->learned_known && (!known || t->learned_mib > f)) {
        f = t->learned_mib;
        known = true;
        *learned = true;
    }
    *mib = f;
    return known;
}

double carma_task_pressure(const sched_config *c, const sched_task *t)
{
    double p = sched_pressure(&c->interference, t->solo_smact, t->solo_drama);
    return isnan(p) ? c->carma_unknown_pressure : p;
}

static carma_fit fit_of(const sched *s, const sched_task *t)
{
    carma_fit f;
    mem_source src;
    f.known = carma_figure(&s->cfg, t, &f.figure, &src, &f.learned);
    f.need = f.figure + s->cfg.margin_mib;
    f.idle_only = !f.known || (t->where == SCHED_IN_RECOVERY && !s->cfg.carma_oom_learning);
    f.pressure = carma_task_pressure(&s->cfg, t);
    return f;
}

static uint64_t usable_mib(const sched *s, uint64_t total)
{
    return total > s->cfg.reserve_mib ? total - s->cfg.reserve_mib : 0;
}

/* What GPU g's tasks have committed; a task with no figure counts as the whole GPU. */
static uint64_t committed(const sched *s, int g, uint64_t usable)
{
    const gpu_ledger *L = &s->ledger.gpu[g];
    return L->commit_unknown ? usable + L->commit_mib : L->commit_mib;
}

/* MiB a task may still be given on GPU g now. By the ledger: its memory less the reserve and
 * the commitments, and never more than the measured free memory less the reserve (memory held
 * by others, or by tasks above their figures). Without the ledger: the measured figure alone,
 * as est-magm. False when unknown. */
static bool room_now(const sched *s, const gpu_view *v, int g, uint64_t *room)
{
    uint64_t measured;
    if (!sched_available_mib(&s->cfg, v, &measured))
        return false;
    if (!s->cfg.carma_ledger) {
        *room = measured;
        return true;
    }
    uint64_t usable = usable_mib(s, v->total_mib), held = committed(s, g, usable);
    uint64_t by_ledger = usable > held ? usable - held : 0;
    *room = by_ledger < measured ? by_ledger : measured;
    return true;
}

/* The summed pressure on GPU g, with `extra` more, less that of `self` (NULL: none). */
static double pressure_on(const sched *s, int g, const sched_task *self, double extra)
{
    double P = extra;
    for (const sched_task *r = ledger_first(&s->ledger, g); r; r = ledger_next(r, g))
        if (r != self)
            P += r->charge.pressure;
    return P;
}

/* A running task's predicted speed, with `extra` more pressure on `gpu` (-1: none): that of
 * its slowest GPU. */
static double speed_of(const sched *s, const sched_task *t, int gpu, double extra)
{
    double v = 1.0;
    for (int k = 0; k < t->ngpus; k++)
        v = fmin(v, sched_speed(pressure_on(s, t->gpus[k], t, t->gpus[k] == gpu ? extra : 0)));
    return v;
}

/* When a running task is predicted to end if it runs at `speed` from now: the work its
 * runtime estimate leaves after what it has done (carma_progress keeps count); INFINITY when it
 * has no estimate. */
static double end_at_speed(const sched_task *t, double speed, double now)
{
    if (isnan(t->runtime_est_s))
        return INFINITY;
    double done = t->done_s + (now - t->done_at) * t->speed_est;
    return now + fmax(0.0, t->runtime_est_s - done) / speed;
}

void carma_progress(sched *s, const int *gpus, int n, double now, bool after)
{
    for (int k = 0; k < n; k++)
        for (sched_task *r = s->ledger.gpu[gpus[k]].head; r; r = ledger_next(r, gpus[k])) {
            if (after) {
                r->speed_est = speed_of(s, r, -1, 0);
                continue;
            }
            r->done_s += (now - r->done_at) * r->speed_est;
            r->done_at = now;
        }
}

/* Memoized per call of carma_next (s->epoch): every GPU's speeds are fixed within one. */
static double predicted_end(const sched *s, const sched_task *t, double now)
{
    sched_task *m = (sched_task *)t; /* the memo is the core's own field */
    if (m->end_epoch != s->epoch) {
        m->end_epoch = s->epoch;
        m->end_memo = end_at_speed(t, speed_of(s, t, -1, 0), now);
    }
    return m->end_memo;
}

/* The predicted change of total progress when a task pressing with px joins GPU g: the sum,
 * over the tasks there, of their speed (that of their slowest GPU) times the GPUs they hold,
 * plus the newcomer's speed there. Counts only the tasks still there after `after` (-INFINITY:
 * all) and, when pb is not NaN, one more task pressing with pb (a backfill candidate). */
static double gain_on(const sched *s, int g, double px, double after, double now, double pb)
{
    double P = isnan(pb) ? 0 : pb, before = 0, with = 0;
    bool all = after == -INFINITY;
    for (const sched_task *r = ledger_first(&s->ledger, g); r; r = ledger_next(r, g))
        if (all || predicted_end(s, r, now) > after)
            P += r->charge.pressure;
    for (const sched_task *r = ledger_first(&s->ledger, g); r; r = ledger_next(r, g)) {
        if (!all && !(predicted_end(s, r, now) > after))
            continue;
        double elsewhere = 1.0; /* a task on several GPUs runs at its slowest one's pace */
        for (int k = 0; k < r->ngpus; k++)
            if (r->gpus[k] != g)
                elsewhere = fmin(elsewhere, sched_speed(pressure_on(s, r->gpus[k], r, 0)));
        before += r->ngpus * fmin(elsewhere, sched_speed(P - r->charge.pressure));
        with += r->ngpus * fmin(elsewhere, sched_speed(P + px - r->charge.pressure));
    }
    if (!isnan(pb)) {
        before += sched_speed(P - pb);
        with += sched_speed(P + px - pb);
    }
    return with + sched_speed(P) - before;
}

static bool gpu_idle(const sched *s, const gpu_view *views, int g)
{
    return s->ledger.gpu[g].ntasks == 0 && views[g].idle && s->grace[g].state == GPU_AVAILABLE;
}

/* The GPUs carma places t on now: fills out[0..t->ngpus) and returns t->ngpus, or 0. Idle GPUs
 * first, in index order (exclusive-first); then by predicted progress gain, or by the gate and
 * the most room; ties by more room, then index. With `avoid`, GPUs with avoid[g] >= 0 (those
 * a head has reserved) are left out. */
static int pick(sched *s, const gpu_view *views, const sched_task *t, const carma_fit *f,
                double now, const int64_t *avoid, int *out)
{
    ledger_cand *c = s->ledger.cand;
    int n = 0;
    for (int g = 0; g < s->ngpus; g++) {
        if (!s->cfg.carma_ledger && s->grace[g].state != GPU_AVAILABLE)
            continue;
        if (avoid && avoid[g] >= 0)
            continue;
        uint64_t room = 0;
        bool known = room_now(s, &views[g], g, &room);
        if (gpu_idle(s, views, g)) {
            /* A learned figure is known to be needed: not on a GPU that cannot hold it. */
            if (!f->learned || f->figure <= usable_mib(s, views[g].total_mib))
                c[n++] = (ledger_cand){g, INT64_MIN, 0};
            continue;
        }
        if (f->idle_only || !known || room < f->need || ledger_full(&s->ledger, &s->cfg, g))
            continue;
        int64_t key = 0;
        if (s->cfg.carma_interference) {
            double gain = gain_on(s, g, f->pressure, -INFINITY, now, NAN);
            if (!(gain > s->cfg.carma_min_gain))
                continue;
            key = -llround(gain * 1e9);
        } else if (!sched_gate_passes(&s->cfg, &views[g])) {
            continue;
        }
        c[n++] = (ledger_cand){g, key, UINT64_MAX - room};
    }
    return ledger_take_best(c, n, t->ngpus, out);
}

/* ---- backfill: the head's reservation ------------------------------------------------------- */

static int by_end(const void *a, const void *b)
{
    double x = ((const sched_end_at *)a)->t, y = ((const sched_end_at *)b)->t;
    return (x > y) - (x < y);
}

/* Whether the head would still gain on GPU g at time `at` with the tasks then left, and one
 * more pressing with pb (NaN: none). */
static bool head_gains_at(const sched *s, int g, const carma_fit *f, double at, double now,
                          double pb)
{
    return !s->cfg.carma_interference ||
           gain_on(s, g, f->pressure, at, now, pb) > s->cfg.carma_min_gain;
}

/* Whether GPU g, `usable` MiB by its view, could take the head at time `at`, its remaining
 * tasks left[g] holding room[g]. The view's memory, not s->total_mib: sched_explain judges
 * with the views it is given, which sched_next would see first. */
static bool takes_head_at(const sched *s, int g, uint64_t usable, const carma_fit *f, double at,
                          double now)
{
    if (s->left[g] == 0)
        return !f->learned || f->figure <= usable;
    if (f->idle_only || s->room[g] < f->need ||
        (s->cfg.max_tasks_per_gpu > 0 && s->left[g] >= s->cfg.max_tasks_per_gpu))
        return false;
    return head_gains_at(s, g, f, at, now, NAN);
}

/* When GPU g could first take the head if nothing else started there: now, or the first
 * predicted end of its tasks after which it could (INFINITY: never, or not before a task with
 * no runtime estimate ends). Leaves room[g] and left[g] as they are then. */
static double gpu_ready_at(sched *s, const gpu_view *v, int g, const carma_fit *f, double now)
{
    const gpu_ledger *L = &s->ledger.gpu[g];
    uint64_t usable = usable_mib(s, v->total_mib), held = committed(s, g, usable);
    s->room[g] = usable > held ? usable - held : 0;
    s->left[g] = L->ntasks + (L->ntasks == 0 && !v->idle); /* someone else's: stays */
    if (takes_head_at(s, g, usable, f, now, now))
        return now;
    if ((size_t)L->ntasks > s->ends_cap) {
        sched_end_at *e = realloc(s->ends, (size_t)L->ntasks * sizeof *e);
        if (!e)
            return INFINITY; /* no reservation here: only the skip count lets tasks pass */
        s->ends = e;
        s->ends_cap = (size_t)L->ntasks;
    }
    size_t n = 0;
    for (sched_task *r = L->head; r; r = ledger_next(r, g))
        s->ends[n++] = (sched_end_at){predicted_end(s, r, now), r};
    if (n > 1) /* with no task there, s->ends may still be NULL: qsort must not get it */
        qsort(s->ends, n, sizeof *s->ends, by_end);
    for (size_t i = 0; i < n; i++) {
        const sched_end_at *e = &s->ends[i];
        if (isinf(e->t))
            return INFINITY;
        const sched_charge *c = &e->task->charge;
        s->room[g] += c->commit_known ? c->commit_mib : 0;
        if (--s->left[g] == 0) /* unknown commitments are gone with the last task */
            s->room[g] = usable;
        if (i + 1 < n && s->ends[i + 1].t == e->t)
            continue; /* the same moment: release them all first */
        if (takes_head_at(s, g, usable, f, e->t, now))
            return e->t;
    }
    return INFINITY;
}

/* The head's reservation: when it can be placed if nothing else starts — the n-th earliest of
 * its GPUs' ready times (a GPU that can take the head keeps that ability as tasks end) — and
 * spare[g] for each GPU: -1 when not reserved, else the memory that may still be given there
 * beyond the head's need (0 when it needs the GPU to itself). INFINITY when unknown. */
static double reservation(sched *s, const gpu_view *views, const sched_task *h,
                          const carma_fit *f, double now, int64_t *spare)
{
    ledger_cand *c = s->ledger.cand;
    int ncand = 0, chosen[SCHED_MAX_TASK_GPUS];
    for (int g = 0; g < s->ngpus; g++) {
        spare[g] = -1;
        double at = gpu_ready_at(s, &views[g], g, f, now);
        if (isfinite(at)) /* keyed in microseconds from now */
            c[ncand++] = (ledger_cand){g, llround((at - now) * 1e6), 0};
        s->ready[g] = at;
    }
    if (!ledger_take_best(c, ncand, h->ngpus, chosen))
        return INFINITY;
    double shadow = now;
    for (int k = 0; k < h->ngpus; k++) {
        int g = chosen[k];
        shadow = fmax(shadow, s->ready[g]);
        spare[g] = f->idle_only || !f->known || s->room[g] < f->need
                       ? 0
                       : (int64_t)(s->room[g] - f->need);
    }
    return shadow;
}

/* Whether starting b on gpus now leaves the head's reservation whole. On every reserved GPU
 * it uses, b must end by the reserved start or leave the head's need there (and a place under
 * max_tasks_per_gpu, and the head still gaining beside it), and slow none of the tasks there
 * that were to end by then past it. Reads room/left as the reservation left them. */
static bool vouched(const sched *s, const sched_task *b, const carma_fit *fb, const int *gpus,
                    double shadow, double now, const int64_t *spare, const carma_fit *fh)
{
    if (isinf(shadow))
        return false;
    double b_speed = 1.0;
    for (int k = 0; k < b->ngpus; k++)
        b_speed = fmin(b_speed, sched_speed(pressure_on(s, gpus[k], NULL, 0)));
    double b_end = isnan(b->runtime_est_s) ? INFINITY : now + b->runtime_est_s / b_speed;
    for (int k = 0; k < b->ngpus; k++) {
        int g = gpus[k];
        int64_t left = spare[g];
        if (left < 0)
            continue; /* not reserved */
        /* past the reserved start, b must leave the head its memory and a place under the cap */
        int cap = s->cfg.max_tasks_per_gpu;
        bool no_slot = cap > 0 && s->left[g] + 2 > cap;
        if (b_end > shadow && (!fb->known || (int64_t)fb->need > left || no_slot ||
                               !head_gains_at(s, g, fh, shadow, now, fb->pressure)))
            return false;
        for (const sched_task *r = ledger_first(&s->ledger, g); r; r = ledger_next(r, g))
            if (predicted_end(s, r, now) <= shadow &&
                end_at_speed(r, speed_of(s, r, g, fb->pressure), now) > shadow)
                return false;
    }
    return true;
}

/* ---- the policy ----------------------------------------------------------------------------- */

/* GPU-seconds a task is expected to take; -1 when unknown or only claimed by the submitter (it
 * keeps its FIFO place). */
static double work_of(const sched_task *t)
{
    return isnan(t->runtime_est_s) || t->runtime_is_limit ? -1.0 : t->runtime_est_s * t->ngpus;
}

static bool overdue(const sched *s, const sched_task *t, double now)
{
    return now - t->queued_at > s->cfg.carma_max_wait_s; /* false while queued_at is NaN */
}

/* Longest first: among the first backfill_depth queued, the first that has waited longer than
 * carma_max_wait_s, else the one with the most expected work (the first of them on ties), so
 * that long tasks do not start last and set the makespan. */
static sched_task *longest_ahead(const sched *s, sched_task *first, double now)
{
    sched_task *h = first;
    int looked = 0;
    for (sched_task *q = first; q && looked++ <= s->cfg.backfill_depth; q = q->qnext) {
        if (overdue(s, q, now))
            return q;
        if (work_of(q) > work_of(h))
            h = q;
    }
    return h;
}

static bool place(sched *s, sched_task *t, const carma_fit *f, const int *gpus,
                  const gpu_view *views, double now, sched_decision *out)
{
    bool all_idle = true;
    for (int k = 0; k < t->ngpus; k++)
        all_idle &= gpu_idle(s, views, gpus[k]);
    sched_place(s, t, gpus, all_idle ? PLACE_EXCLUSIVE_FIRST : PLACE_POLICY,
                f->known ? f->figure : 0, f->known ? &f->need : NULL, views, now, out);
    return true;
}

bool carma_next(sched *s, double now, const gpu_view *views, sched_decision *out)
{
    s->epoch++; /* predicted ends are computed afresh, once */
    sched_task *h = carma_head(s, now);
    if (!h)
        return false;
    int gpus[SCHED_MAX_TASK_GPUS];
    carma_fit fh = fit_of(s, h);
    if (pick(s, views, h, &fh, now, NULL, gpus)) {
        h->skipped = 0;
        return place(s, h, &fh, gpus, views, now, out);
    }
    if (!s->cfg.carma_backfill)
        return false; /* strict FIFO: the head blocks the rest */
    int64_t *spare = s->spare;
    double shadow = NAN; /* the head's reservation, made when a candidate first fits */
    /* What any GPU offers now, so that a candidate that fits nowhere costs no scan. */
    uint64_t most_room = 0;
    bool any_idle = false;
    for (int g = 0; g < s->ngpus; g++) {
        uint64_t room;
        if (s->cfg.carma_ledger || s->grace[g].state == GPU_AVAILABLE) {
            any_idle |= gpu_idle(s, views, g);
            if (room_now(s, &views[g], g, &room) && room > most_room)
                most_room = room;
        }
    }
    int looked = 0;
    sched_task *b = s->recovery_q.head ? s->recovery_q.head : s->main_q.head;
    while (b && looked++ < s->cfg.backfill_depth) {
        carma_fit fb = fit_of(s, b);
        bool may_fit = any_idle || (!fb.idle_only && fb.need <= most_room);
        if (b != h && may_fit && pick(s, views, b, &fb, now, NULL, gpus)) {
            if (isnan(shadow))
                shadow = reservation(s, views, h, &fh, now, spare);
            /* Its best GPUs, else the best of those the head has not reserved. */
            bool ok = vouched(s, b, &fb, gpus, shadow, now, spare, &fh) ||
                      (isfinite(shadow) && pick(s, views, b, &fb, now, spare, gpus));
            bool unjudged = isinf(shadow) || isnan(b->runtime_est_s);
            if (!ok && unjudged && h->skipped < s->cfg.backfill_max_skips) {
                h->skipped++;
                ok = true;
            }
            if (ok)
                return place(s, b, &fb, gpus, views, now, out);
        }
        b = b->qnext ? b->qnext
                     : (b->where == SCHED_IN_RECOVERY ? s->main_q.head : NULL);
    }
    return false;
}

/* ---- read-only views for sched_explain (explain.c): the same rules, not a copy of them ------ */

carma_fit carma_fit_of(const sched *s, const sched_task *t) { return fit_of(s, t); }
uint64_t carma_usable_mib(const sched *s, uint64_t total) { return usable_mib(s, total); }
bool carma_room_now(const sched *s, const gpu_view *v, int g, uint64_t *room)
{
    return room_now(s, v, g, room);
}
bool carma_gpu_idle(const sched *s, const gpu_view *views, int g)
{
    return gpu_idle(s, views, g);
}
double carma_gain(const sched *s, int g, double pressure, double now)
{
    return gain_on(s, g, pressure, -INFINITY, now, NAN); /* all tasks: reads no memo */
}

sched_task *carma_head(const sched *s, double now)
{
    sched_task *h = s->recovery_q.head ? s->recovery_q.head : s->main_q.head;
    return h && s->cfg.carma_longest_first && !s->recovery_q.head ? longest_ahead(s, h, now) : h;
}

double carma_reservation(sched *s, const gpu_view *views, const sched_task *h, double now)
{
    s->epoch++; /* predicted ends afresh at `now`: only the memo changes */
    carma_fit f = fit_of(s, h);
    return reservation(s, views, h, &f, now, s->spare);
}
