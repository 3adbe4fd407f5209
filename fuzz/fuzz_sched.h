/* fuzz_sched.h — what fuzz_sched.c drives the scheduling core with: the input as a stream of
 * choices, the world (the core, its GPUs and views, the tasks and the driver's record of where
 * each is), and the checks of the core's state and decisions against that record. Included by
 * fuzz_sched.c alone. */
#ifndef CARMA_FUZZ_SCHED_H
#define CARMA_FUZZ_SCHED_H

#include "fuzz_common.h"

#include <math.h>

#include "sched/sched.h"

#define MAX_GPUS 8
#define MAX_TASKS 24
#define MAX_OPS 400

/* A failed check: abort, which libFuzzer reports as a crash with the input saved. */
#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "fuzz_sched: check failed at line %d: %s\n", __LINE__, #cond);   \
            abort();                                                                         \
        }                                                                                    \
    } while (0)

/* FUZZ_SCHED_TRACE=1 in the environment: each operation on stderr, to turn a finding into a
 * unit test. */
static int tracing = -1;
#define TRACE(...)                                                                           \
    do {                                                                                     \
        if (tracing)                                                                         \
            fprintf(stderr, __VA_ARGS__);                                                    \
    } while (0)

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static uint8_t u8(reader *r)
{
    if (!r->n)
        return 0;
    r->n--;
    return *r->p++;
}

static uint16_t u16(reader *r)
{
    uint16_t lo = u8(r);
    return (uint16_t)(lo | (uint16_t)u8(r) << 8);
}

/* A fraction 0..1, or NaN (unknown) when the byte says so. */
static double frac_or_nan(reader *r)
{
    uint8_t b = u8(r);
    return b >= 251 ? NAN : b / 250.0;
}

typedef enum shadow { FRESH = 0, IN_MAIN, IN_RECOVERY, RUNNING, ENDED } shadow;

typedef struct world {
    reader r;
    sched *s;
    sched_config cfg;
    int ngpus;
    uint64_t total[MAX_GPUS];
    double now;
    sched_task t[MAX_TASKS];
    shadow st[MAX_TASKS];
    gpu_view v[MAX_GPUS];
} world;

static const uint64_t gpu_sizes[] = {1024, 8192, 16384, 24576, 40960, 81920, 143360, 196608};

static void config_from(world *w)
{
    reader *r = &w->r;
    sched_config *c = &w->cfg;
    sched_config_defaults(c);
    c->policy = (policy_id)(u8(r) % POLICY_COUNT);
    uint8_t parts = u8(r);
    c->carma_ledger = parts & 1;
    c->carma_backfill = parts & 2;
    c->carma_interference = parts & 4;
    c->carma_oom_learning = parts & 8;
    c->carma_measured_first = parts & 16;
    c->carma_longest_first = parts & 32;
    if (parts & 64) { /* tunables, each within its documented bounds */
        static const uint64_t mibs[] = {0, 1, 512, 2048, 5120, 16384};
        static const double graces[] = {0, 0.5, 30, 86400};
        c->estimator = (mem_source)(u8(r) % MEM_SOURCE_COUNT);
        c->reserve_mib = mibs[u8(r) % 6];
        c->margin_mib = mibs[u8(r) % 6];
        c->or_min_free_mib = mibs[u8(r) % 6];
        c->grace_s = graces[u8(r) % 4];
        c->retry_cap = u8(r) % 5;
        c->max_tasks_per_gpu = u8(r) % 5;
        c->backfill_max_skips = u8(r) % 10;
        c->backfill_depth = u8(r) % 4 == 0 ? 64 : u8(r) % 6;
        c->carma_min_gain = (u8(r) % 21 - 10) / 10.0;
        c->carma_unknown_pressure = u8(r) % 31 / 10.0;
        c->carma_max_wait_s = (double)(u16(r) % 4) * 1000.0;
        c->lucid_max_jobs = 1 + u8(r) % 4;
        c->lucid_class_capacity = u8(r) % 5;
        c->horus_util_budget = (1 + u8(r) % 20) / 10.0;
        c->thr_smact = u8(r) / 255.0;
        c->thr_smocc = u8(r) / 255.0;
        c->thr_drama = u8(r) / 255.0;
    }
    carma_err err;
    CHECK(sched_config_validate(c, &err) == 0);
    TRACE("config: %s parts 0x%x estimator %d reserve %llu margin %llu floor %llu grace %g "
          "retry_cap %d max_tasks %d skips %d depth %d min_gain %g unknown_p %g max_wait %g "
          "lucid %d/%d horus %g thr %g %g %g\n",
          policy_name(c->policy), parts, c->estimator, (unsigned long long)c->reserve_mib,
          (unsigned long long)c->margin_mib, (unsigned long long)c->or_min_free_mib,
          c->grace_s, c->retry_cap, c->max_tasks_per_gpu, c->backfill_max_skips,
          c->backfill_depth, c->carma_min_gain, c->carma_unknown_pressure,
          c->carma_max_wait_s, c->lucid_max_jobs, c->lucid_class_capacity,
          c->horus_util_budget, c->thr_smact, c->thr_smocc, c->thr_drama);
}

/* A memory figure, MiB: small to a few times the largest GPU. */
static uint64_t mib_from(reader *r)
{
    uint16_t x = u16(r);
    return x % 4 == 0 ? (uint64_t)(x >> 2) : (uint64_t)(x >> 2) * 16;
}

static void views_from(world *w)
{
    reader *r = &w->r;
    for (int g = 0; g < w->ngpus; g++) {
        uint8_t b = u8(r);
        gpu_view *v = &w->v[g];
        v->total_mib = w->total[g];
        v->free_known = (b & 3) != 0;
        if (!v->free_known && (b & 4))
            v->total_mib = 0; /* a failed memory reading (the daemon's monitor) */
        uint8_t f = u8(r);
        v->free_mib = f >= 200 ? v->total_mib : v->total_mib / 200 * f;
        v->idle = b & 8;
        v->smact = (b & 16) ? NAN : frac_or_nan(r);
        v->smocc = (b & 32) ? NAN : frac_or_nan(r);
        v->drama = (b & 64) ? NAN : frac_or_nan(r);
        TRACE("  view %d: total %llu free %llu%s idle %d smact %g smocc %g drama %g\n", g,
              (unsigned long long)v->total_mib, (unsigned long long)v->free_mib,
              v->free_known ? "" : " (unknown)", v->idle, v->smact, v->smocc, v->drama);
    }
}

static int index_of(const world *w, const sched_task *t)
{
    for (int i = 0; i < MAX_TASKS; i++)
        if (&w->t[i] == t)
            return i;
    return -1;
}

/* The core's state against the driver's (this target's) record of it. */
static void check_world(world *w)
{
    size_t nmain = 0, nrec = 0;
    int on_gpu[MAX_GPUS] = {0};
    for (int i = 0; i < MAX_TASKS; i++) {
        const sched_task *t = &w->t[i];
        switch (w->st[i]) {
        case FRESH:
        case ENDED:
            CHECK(t->where == SCHED_NOWHERE);
            CHECK(!t->charge.held);
            break;
        case IN_MAIN:
            CHECK(t->where == SCHED_IN_MAIN);
            nmain++;
            break;
        case IN_RECOVERY:
            CHECK(t->where == SCHED_IN_RECOVERY);
            nrec++;
            break;
        case RUNNING:
            CHECK(t->where == SCHED_RUNNING);
            for (int k = 0; k < t->ngpus; k++) {
                CHECK(t->gpus[k] >= 0 && t->gpus[k] < w->ngpus);
                for (int j = 0; j < k; j++)
                    CHECK(t->gpus[j] != t->gpus[k]);
                on_gpu[t->gpus[k]]++;
            }
            break;
        }
    }
    CHECK(sched_main_len(w->s) == nmain && sched_recovery_len(w->s) == nrec);
    size_t seen = 0;
    for (const sched_task *q = sched_main_head(w->s); q && seen <= nmain; q = q->qnext, seen++)
        CHECK(index_of(w, q) >= 0 && w->st[index_of(w, q)] == IN_MAIN);
    CHECK(seen == nmain);
    seen = 0;
    for (const sched_task *q = sched_recovery_head(w->s); q && seen <= nrec; q = q->qnext)
        CHECK(index_of(w, q) >= 0 && w->st[index_of(w, q)] == IN_RECOVERY && ++seen);
    CHECK(seen == nrec);
    for (int g = 0; g < w->ngpus; g++) {
        sched_gpu_load L = sched_gpu_ledger(w->s, g);
        CHECK(L.ntasks == on_gpu[g]);
        gpu_grace gr = sched_gpu_grace(w->s, g);
        CHECK((gr.state == GPU_AVAILABLE) == (gr.task == NULL));
        if (gr.task) {
            int i = index_of(w, gr.task);
            CHECK(i >= 0 && w->st[i] == RUNNING);
            bool on = false;
            for (int k = 0; k < gr.task->ngpus; k++)
                on |= gr.task->gpus[k] == g;
            CHECK(on);
        }
    }
    CHECK(sched_gpu_ledger(w->s, w->ngpus).ntasks == 0 && sched_gpu_ledger(w->s, -1).ntasks == 0);
}

/* A task, with what the driver knows of it: each figure known or not. */
static void task_from(world *w, int i)
{
    reader *r = &w->r;
    sched_task *t = &w->t[i];
    if (w->st[i] == FRESH) { /* an ended task is submitted again as it is (a requeue) */
        sched_task_init(t);
        t->id = (uint64_t)i + 1;
    }
    int most = w->ngpus < SCHED_MAX_TASK_GPUS ? w->ngpus : SCHED_MAX_TASK_GPUS;
    uint8_t b = u8(r);
    t->ngpus = b % 8 == 0 ? 1 + u8(r) % most : 1 + (b % 8 == 1 && most > 1);
    uint8_t known = u8(r);
    t->mem.known = 0;
    for (int src = 0; src < MEM_SOURCE_COUNT; src++)
        if (known & (1u << src))
            mem_figures_set(&t->mem, (mem_source)src, mib_from(r));
    uint8_t rt = u8(r);
    t->runtime_est_s = rt < 40 ? NAN : (double)(rt - 40) * (1 + u8(r) % 60);
    t->runtime_is_limit = (b & 8) != 0;
    t->solo_smact = frac_or_nan(r);
    t->solo_drama = frac_or_nan(r);
    t->profiled_util = frac_or_nan(r);
    t->lucid_class = u8(r) % 4 - 1;
    t->max_retries = u8(r) % 5 - 1;
    uint8_t q = u8(r);
    t->queued_at = q < 20 ? NAN : w->now - (double)(q - 20) * (q & 1 ? 1000.0 : 1.0);
    TRACE("task %llu: ngpus %d mem", (unsigned long long)t->id, t->ngpus);
    for (int src = 0; src < MEM_SOURCE_COUNT; src++)
        if (t->mem.known & (1u << src))
            TRACE(" %s=%llu", mem_source_estimator_name((mem_source)src),
                  (unsigned long long)t->mem.mib[src]);
    TRACE(" runtime %g%s smact %g drama %g util %g class %d retries %d queued_at %g\n",
          t->runtime_est_s, t->runtime_is_limit ? " (limit)" : "", t->solo_smact,
          t->solo_drama, t->profiled_util, t->lucid_class, t->max_retries, t->queued_at);
}

/* A task in state `want` (any queued one when `queued`), from an index the input gives; -1
 * when there is none. */
static int pick_task(world *w, shadow want, bool queued)
{
    int start = u8(&w->r) % MAX_TASKS;
    for (int k = 0; k < MAX_TASKS; k++) {
        int i = (start + k) % MAX_TASKS;
        if (queued ? (w->st[i] == IN_MAIN || w->st[i] == IN_RECOVERY) : w->st[i] == want)
            return i;
    }
    return -1;
}

/* One decision, checked against what the core showed before it. */
static void check_decision(world *w, const sched_decision *d, const gpu_grace *before,
                           const sched_gpu_load *load_before)
{
    const sched_config *c = &w->cfg;
    int i = index_of(w, d->task);
    CHECK(i >= 0 && (w->st[i] == IN_MAIN || w->st[i] == IN_RECOVERY));
    CHECK(d->from_recovery == (w->st[i] == IN_RECOVERY));
    const sched_task *t = d->task;
    CHECK(d->ngpus == t->ngpus && t->where == SCHED_RUNNING);
    bool grace = sched_grace_applies(w->s), collocated = false, all_idle = true;
    for (int k = 0; k < d->ngpus; k++) {
        int g = d->gpus[k];
        CHECK(g >= 0 && g < w->ngpus && t->gpus[k] == g);
        for (int j = 0; j < k; j++)
            CHECK(d->gpus[j] != g);
        gpu_grace gr = sched_gpu_grace(w->s, g);
        CHECK(gr.state == GPU_LAUNCHING && gr.task == t);
        if (grace)
            CHECK(before[g].state == GPU_AVAILABLE);
        collocated |= !w->v[g].idle || load_before[g].ntasks > 0; /* or one placed since */
        all_idle &= w->v[g].idle;
        sched_gpu_load L = sched_gpu_ledger(w->s, g);
        CHECK(L.ntasks == load_before[g].ntasks + 1);
        bool carma_idle = load_before[g].ntasks == 0 && w->v[g].idle &&
                          before[g].state == GPU_AVAILABLE;
        bool by_policy = c->policy == POLICY_CARMA ? !carma_idle : d->rule == PLACE_POLICY;
        if (by_policy && c->max_tasks_per_gpu > 0)
            CHECK(load_before[g].ntasks < c->max_tasks_per_gpu);
        if (!by_policy)
            continue;
        uint64_t avail = 0, total = w->v[g].total_mib;
        bool mem_known = sched_available_mib(c, &w->v[g], &avail);
        bool gate = c->policy != POLICY_CARMA || !c->carma_interference;
        switch (c->policy) {
        case POLICY_EXCLUSIVE: /* collocates nothing (checked below) */
        case POLICY_OR_RR:     /* any available GPU */
            break;
        case POLICY_LUCID:
            CHECK(L.ntasks <= c->lucid_max_jobs && L.class_sum <= c->lucid_class_capacity);
            CHECK(L.class_unknown == 0 && L.oracle_unknown == 0);
            CHECK(L.oracle_mib <= (total > c->reserve_mib ? total - c->reserve_mib : 0));
            break;
        case POLICY_HORUS:
            CHECK(L.util_sum <= c->horus_util_budget + 1e-9);
            break;
        case POLICY_OR_MAGM:
        case POLICY_OR_LUG: /* the floor is the requirement */
            CHECK(mem_known && avail >= d->requirement_mib && d->requirement_mib ==
                  c->or_min_free_mib && sched_gate_passes(c, &w->v[g]));
            break;
        default: /* the figure + margin, and the gate (carma: without its interference) */
            CHECK(mem_known && avail >= d->requirement_mib + c->margin_mib);
            CHECK(!gate || sched_gate_passes(c, &w->v[g]));
            break;
        }
    }
    CHECK(d->collocated == collocated);
    if (d->rule == PLACE_EXCLUSIVE_FIRST)
        CHECK(all_idle);
    if (c->policy == POLICY_EXCLUSIVE)
        CHECK(d->rule == PLACE_EXCLUSIVE_FIRST);
    if (d->from_recovery && (c->policy != POLICY_CARMA || !c->carma_oom_learning))
        CHECK(d->rule == PLACE_EXCLUSIVE_FIRST); /* recovered tasks: idle GPUs only */
    w->st[i] = RUNNING;
}

#endif
