/* sched_int.h — the core's state, shared by sched.c (queues, grace, decisions, recovery),
 * place.c (CARMA's and AEGIS's placement) and carma.c (the carma policy). Internal to the
 * core. */
#ifndef CARMA_SCHED_SCHED_INT_H
#define CARMA_SCHED_SCHED_INT_H

#include "sched/ledger.h"
#include "sched/policy.h"
#include "sched/queue.h"

/* A task's predicted end, which the carma policy's reservations order a GPU's tasks by. */
typedef struct sched_end_at {
    double t;
    sched_task *task;
} sched_end_at;

struct sched {
    sched_config cfg;
    const policy_desc *policy;
    int ngpus;
    gpu_grace *grace;
    task_queue main_q, recovery_q;
    task_queue running_q; /* placed tasks (linked through qnext/qprev, which queued tasks use) */
    int rr_cursor;       /* or-rr: next GPU to look at, persistent across tasks */
    int ngrace;          /* GPUs in GPU_GRACE, to skip the expiry scan when there are none */
    double next_expiry;  /* earliest grace expiry among them */
    int *scratch;        /* candidate GPU indices */
    ledger ledger;       /* the running tasks on each GPU */
    uint64_t *total_mib; /* each GPU's memory as last seen in a view; 0 = not seen yet */
    /* carma's reservations (carma.c): scratch, `ends` grown on demand */
    sched_end_at *ends;
    size_t ends_cap;
    uint64_t *room;      /* per GPU */
    int *left;           /* per GPU: tasks left in the reservation walk */
    int64_t *spare;      /* per GPU: what the head's reservation leaves there (-1: free) */
    double *ready;       /* per GPU: when it could take the head */
    uint64_t epoch;      /* carma_next calls: the predicted ends' memo (sched_task.end_memo) */
};

/* Takes t off its queue and onto `gpus`: LAUNCHING, attempt counted, charged to the ledger
 * with `commit` (carma's figure + margin; NULL: none), and *out filled. */
void sched_place(sched *s, sched_task *t, const int *gpus, place_rule rule, uint64_t requirement,
                 const uint64_t *commit, const gpu_view *views, double now, sched_decision *out);

/* CARMA's and AEGIS's placement (place.c). Each pick fills out[0..n) and returns n, or 0. */
uint64_t place_memory_needed(const sched *s, uint64_t requirement);
int place_exclusive(const sched *s, const gpu_view *views, int n, int *out);
int place_round_robin(sched *s, int n, int *out);
int place_by_policy(sched *s, const gpu_view *views, uint64_t need, int n, int *out);

/* What carma needs to know about a task to place it (carma.c). */
typedef struct carma_fit {
    bool known;       /* it has a figure */
    bool learned;     /* ... taught by out-of-memory crashes */
    uint64_t figure;  /* MiB */
    uint64_t need;    /* figure + margin */
    bool idle_only;   /* no collocation: no figure, or a recovered task without learning */
    double pressure;
} carma_fit;

/* The carma policy (carma.c). */
bool carma_next(sched *s, double now, const gpu_view *views, sched_decision *out);
/* Its figure for t before the margin, and where it came from; false when it has none. */
bool carma_figure(const sched_config *c, const sched_task *t, uint64_t *mib, mem_source *src,
                  bool *learned);
/* Whether a task needing `need` MiB fits no GPU here: said only with every GPU's memory known
 * (a GPU not seen may hold it). */
bool carma_fits_no_gpu(const sched *s, uint64_t need);
/* What an out-of-memory crash teaches (before the task leaves the ledger): SCHED_END_RETRY
 * or SCHED_END_NEVER_FITS. */
sched_end carma_learn(sched *s, sched_task *t, const sched_oom_seen *seen);
double carma_task_pressure(const sched_config *c, const sched_task *t);
/* Keeps the running tasks' work done: call with after = false before the tasks on `gpus`
 * change (their work is brought up to now at their speeds), and with after = true once they
 * have (their speeds are predicted again). */
void carma_progress(sched *s, const int *gpus, int n, double now, bool after);
/* carma's rules, read-only, for sched_explain (explain.c): a task's fit; a GPU's usable
 * memory, room now, idleness, and the progress gain of a task pressing with `pressure` there;
 * the head it would place now; and the head's reserved start (INFINITY: unknown), which
 * overwrites only the policy's scratch (room, left, spare, ready, the memo). */
carma_fit carma_fit_of(const sched *s, const sched_task *t);
uint64_t carma_usable_mib(const sched *s, uint64_t total);
bool carma_room_now(const sched *s, const gpu_view *v, int g, uint64_t *room);
bool carma_gpu_idle(const sched *s, const gpu_view *views, int g);
double carma_gain(const sched *s, int g, double pressure, double now);
sched_task *carma_head(const sched *s, double now);
double carma_reservation(sched *s, const gpu_view *views, const sched_task *h, double now);

#endif
