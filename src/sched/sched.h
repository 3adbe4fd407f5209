/* sched.h — carma's scheduling core: queues, preconditions, policies, grace state, recovery.
 *
 * The core is pure: it does no I/O and reads no clock. A driver (the simulator or the daemon)
 * gives it the time, a view of every GPU and the tasks, and gets placement decisions back.
 *
 * Driver loop, in short:
 *
 *     sched_submit(s, task);                          // a task arrives (main queue tail)
 *     while (sched_next(s, now, views, &d))           // place as long as something fits
 *         launch(d.task, d.gpus, d.ngpus);            // the core marked those GPUs LAUNCHING
 *     sched_process_seen(s, task, gpu, now);          // the task's process appeared on a GPU
 *     sched_task_ended(s, task, TASK_OOM, now);       // -> recovery queue or final
 *
 * Ownership: the driver owns every sched_task and keeps it alive while the core holds it
 * (queued, or running until sched_task_ended). Drivers usually embed sched_task in their own
 * task record.
 *
 * Units: memory in MiB (uint64_t), time in seconds (double), utilization as a fraction 0..1.
 * A metric that could not be read is NaN ("unknown") and never passes a gate silently.
 */
#ifndef CARMA_SCHED_SCHED_H
#define CARMA_SCHED_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

#define SCHED_MAX_TASK_GPUS 16

/* ---- where a task's memory figure comes from ------------------------------------------- */

/* MEM_ORACLE is the measured peak (a .rad's line 9, or a peak measured on an earlier run);
 * the others are estimators' figures. */
typedef enum mem_source {
    MEM_ORACLE = 0,
    MEM_HORUS,
    MEM_FAKETENSOR,
    MEM_GPUMEMNET,
    MEM_CARMA,
    MEM_XMEM, /* carma's trace of the training script (client side, carma estimate --run) */
    MEM_SOURCE_COUNT
} mem_source;

typedef struct mem_figures {
    uint64_t mib[MEM_SOURCE_COUNT];
    uint32_t known; /* bit (1u << source) set when mib[source] holds a figure */
} mem_figures;

void mem_figures_set(mem_figures *m, mem_source src, uint64_t mib);
bool mem_figures_get(const mem_figures *m, mem_source src, uint64_t *mib);

/* Estimator names as users type them: "none" (= the oracle figure, as in the reference),
 * "horus", "faketensor", "gpumemnet", "carma", "xmem". Case-insensitive. Returns -1 on unknown
 * names. */
int mem_source_from_estimator(const char *name, mem_source *out);
const char *mem_source_estimator_name(mem_source src);

/* ---- policies --------------------------------------------------------------------------- */

typedef enum policy_id {
    POLICY_EXCLUSIVE = 0,
    POLICY_OR_RR,
    POLICY_ORACLE_FF,
    POLICY_ORACLE_BF,
    POLICY_ORACLE_MAGM,
    POLICY_ORACLE_LUG,
    POLICY_OR_MAGM,
    POLICY_OR_LUG,
    POLICY_EST_MAGM,
    POLICY_EST_LUG,
    POLICY_HORUS,   /* AEGIS's Horus baseline: profiled-utilization budget per GPU (ledger.c) */
    POLICY_LUCID,   /* AEGIS's Lucid baseline: job count, sharing class and memory (ledger.c) */
    POLICY_CARMA,   /* ours: memory ledger, backfill, interference-aware, learning OOM (carma.c) */
    POLICY_COUNT
} policy_id;

/* Names as in the config and on the command line: "exclusive", "or-rr", "oracle-ff", ...
 * Case-insensitive (CARMA's "oracle-MAGM", "EST-LUG" spellings are accepted). */
int policy_from_name(const char *name, policy_id *out);
const char *policy_name(policy_id p);

/* ---- rolling-window aggregation (CARMA §6.3) ---------------------------------------------- */

typedef enum agg_mode { AGG_MEAN = 0, AGG_EWMA, AGG_RISK, AGG_RISK_EQUAL, AGG_COUNT } agg_mode;
/* "mean", "ewma", "risk" (CARMA's weights), "risk-equal" (AEGIS's) */
int agg_mode_from_name(const char *name, agg_mode *out);
const char *agg_mode_name(agg_mode m);

/* ---- the interference model (interference.c), shared with the simulator ------------------- */

/* A co-runner with solo profile (SMACT, DRAMA) presses on every other task of its GPU with
 * p = smact_k * max(0, SMACT - smact_knee) + drama_k * DRAMA, and a task runs at
 * 1 / (1 + the sum of its co-runners' p). Fitted on the 219 measured A100 pairs of
 * data/aegis/pairwise_a100.csv (tools/fit_sim_models.py: R^2 of the slowdown 0.869 on the
 * fitted four fifths, 0.710 on the held-back fifth). */
#define SCHED_INTERF_SMACT_K 16.7848
#define SCHED_INTERF_SMACT_KNEE 0.7673
#define SCHED_INTERF_DRAMA_K 0.6107

typedef struct sched_interference {
    double smact_k;
    double smact_knee;
    double drama_k;
} sched_interference;

extern const sched_interference sched_interference_fitted;

/* NaN when either activity is unknown. */
double sched_pressure(const sched_interference *m, double smact, double drama);
/* Speed (0..1] of a task whose co-runners' pressures sum to `others`. */
double sched_speed(double others);

/* ---- configuration: CARMA's defaults, every field overridable ------------------------------ */

typedef struct sched_config {
    policy_id policy;        /* default exclusive */
    mem_source estimator;    /* memory source of the est-* policies; default MEM_ORACLE ("none") */
    double thr_smact;        /* 0.80: the gate rejects when smact >= thr_smact and ... */
    double thr_smocc;        /* 0.45: ... (smocc >= thr_smocc or */
    double thr_drama;        /* 0.40:      drama >= thr_drama) */
    uint64_t reserve_mib;    /* 512: held back from every GPU's free memory */
    uint64_t margin_mib;     /* 2048: added to the task's figure by oracle-/est- policies */
    uint64_t or_min_free_mib;/* 5120: the fixed free-memory floor of or-magm / or-lug */
    int window;              /* 30 samples per GPU */
    agg_mode agg;            /* risk */
    double ewma_alpha;       /* 0.5, for AGG_EWMA */
    double grace_s;          /* 30: no new placement on a GPU this long after its process appears */
    int retry_cap;           /* 3: out-of-memory relaunches per task before it fails for good */
    double horus_util_budget;/* 1.0 (100 %): horus's cap on a GPU's summed profiled_util */
    int lucid_max_jobs;      /* 2: lucid's cap on tasks per GPU, the new one included */
    int max_tasks_per_gpu;   /* 0: no cap; else no policy places a task on a GPU that runs
                                this many already */
    int lucid_class_capacity;/* 2: lucid's cap on a GPU's summed lucid_class */
    /* The carma policy's parts, each switchable so it can be measured alone (docs/policy.md).
     * With all four off it places as est-magm does. */
    bool carma_ledger;       /* on: place by the memory ledger (committed figures reconciled
                                with measured free memory), no grace wait; off: measured free
                                memory, and the grace period */
    bool carma_backfill;     /* on: a later task may pass a blocked head without delaying it */
    int backfill_max_skips;  /* 8: passes a head may suffer that its reservation cannot vouch
                                for (runtimes unknown) */
    int backfill_depth;      /* 64: queued tasks looked at behind a blocked head */
    bool carma_interference; /* on: place where predicted total progress is highest, and not
                                at all when it would fall; off: the utilization gate, most
                                available memory first */
    bool carma_oom_learning; /* on: an OOM raises the task's figure (or fails it when no GPU
                                can hold it); off: CARMA's blind retries on idle GPUs */
    bool carma_measured_first; /* on: a measured figure (given, history) before the estimator */
    bool carma_longest_first;  /* on: the head is the queued task with the most expected work
                                  (runtime x GPUs) among the first backfill_depth, unless one
                                  has waited longer than carma_max_wait_s */
    double carma_max_wait_s;   /* 86400: longest-first's starvation bound */
    double carma_min_gain;   /* 0: collocate only when total progress rises by more than this */
    double carma_unknown_pressure; /* 1: pressure assumed for a task with no solo profile */
    sched_interference interference; /* carma's predictor (the fitted model) */
} sched_config;

void sched_config_defaults(sched_config *cfg);
/* Checks ranges (thresholds in 0..1, window >= 1, ...). */
int sched_config_validate(const sched_config *cfg, carma_err *err);

/* ---- what the driver tells the core about each GPU ------------------------------------------ */

typedef struct gpu_view {
    uint64_t total_mib;
    uint64_t free_mib;  /* at the latest sample */
    bool free_known;    /* false: memory unknown, which fails every memory filter */
    double smact;       /* window-aggregated, 0..1, NaN = unknown */
    double smocc;
    double drama;
    bool idle;          /* no process (other than MPS daemons) is on the GPU */
} gpu_view;

/* ---- tasks as the core sees them ------------------------------------------------------------- */

typedef enum task_outcome {
    TASK_DONE = 0,     /* exited 0 */
    TASK_OOM,          /* crashed with out-of-memory: may be retried */
    TASK_FAILED,       /* any other failure: final */
    TASK_CANCELLED
} task_outcome;

typedef enum sched_task_where {
    SCHED_NOWHERE = 0, /* not yet submitted, or finished */
    SCHED_IN_MAIN,
    SCHED_IN_RECOVERY,
    SCHED_RUNNING
} sched_task_where;

/* Lucid's sharing classes (sched_task.lucid_class). */
enum { LUCID_UNKNOWN = -1, LUCID_TINY = 0, LUCID_MEDIUM = 1, LUCID_JUMBO = 2 };

/* What a placed task counts for in its GPUs' ledger, fixed when it is placed so that a driver
 * changing a running task's figures cannot unbalance the ledger. Owned by the core. */
typedef struct sched_charge {
    bool held;              /* counted on gpus[0..ngpus) right now */
    int ngpus;
    int64_t util_ppb;       /* profiled_util in parts per billion; < 0: unknown */
    int lucid_class;        /* LUCID_UNKNOWN: unknown */
    bool oracle_known;
    uint64_t oracle_mib;
    bool commit_known;      /* carma: the memory it was placed with (figure + margin) */
    uint64_t commit_mib;
    double pressure;        /* carma: its pressure on co-runners (the unknown default if none) */
} sched_charge;

/* Drivers must start every task with sched_task_init (not a bare memset/calloc): zero means
 * "known to be 0" for profiled_util and lucid_class, which the horus and lucid policies would
 * take at face value. */
typedef struct sched_task {
    uint64_t id;
    int ngpus;              /* GPUs requested, 1..SCHED_MAX_TASK_GPUS */
    mem_figures mem;
    int max_retries;        /* < 0: the config's retry_cap */
    double profiled_util;   /* solo GPU utilization 0..1 (nvidia-smi mean of the solo profile);
                               NaN = unknown. Used by horus. */
    int lucid_class;        /* LUCID_TINY/MEDIUM/JUMBO, LUCID_UNKNOWN. Used by lucid. */
    double runtime_est_s;   /* solo run time estimate, seconds; NaN = unknown. carma's backfill */
    bool runtime_is_limit;  /* runtime_est_s is the submitter's own limit (--time), not a
                               measurement: backfill plans with it, longest-first ignores it
                               (a long limit must not buy a place at the front) */
    double solo_smact;      /* solo profile 0..1; NaN = unknown. carma's interference */
    double solo_drama;
    double queued_at;       /* when it was submitted, on the clock the driver gives the core;
                               NaN = unknown (never overdue). carma's longest-first bound */
    /* Filled by the core: */
    int attempts;           /* launches so far */
    double started_at;      /* when the current attempt was placed */
    bool learned_known;     /* carma: out-of-memory crashes taught it a figure */
    uint64_t learned_mib;   /* ... this one (MiB, before the margin) */
    bool learned_seen;      /* ... from what its last crash was seen to need, not a guess
                               (the figure identical tasks may learn: sched_task_learn) */
    int skipped;            /* carma: tasks that passed it, as head, with no reservation to
                               vouch for them (runtimes unknown) */
    uint64_t end_epoch;     /* carma: its predicted end, memoized for one placement call */
    double end_memo;
    double done_s;          /* carma: solo-seconds of work done by done_at, at speed_est */
    double done_at;
    double speed_est;       /* carma: its predicted speed since done_at */
    int gpus[SCHED_MAX_TASK_GPUS]; /* GPUs of the current / last launch */
    sched_task_where where;
    sched_charge charge;    /* its share of the per-GPU ledger while running */
    struct sched_task *qnext, *qprev; /* queue links, owned by the core */
    struct sched_task *gnext[SCHED_MAX_TASK_GPUS]; /* ledger links, one per GPU it is on */
    struct sched_task *gprev[SCHED_MAX_TASK_GPUS];
} sched_task;

/* Zeroes *t, then max_retries = -1, lucid_class = LUCID_UNKNOWN, and profiled_util,
 * runtime_est_s, solo_smact, solo_drama, queued_at = NaN. */
void sched_task_init(sched_task *t);

/* Which figure the configured policy places tasks with. */
typedef enum sched_figure {
    SCHED_FIGURE_NONE = 0, /* none (exclusive, or-rr, horus) */
    SCHED_FIGURE_FLOOR,    /* a fixed floor, whatever the task: or_min_free_mib (or-magm, or-lug) */
    SCHED_FIGURE_TASK      /* one of the task's figures, from *src (MEM_ORACLE or the estimator) */
} sched_figure;
sched_figure sched_policy_figure(const sched_config *cfg, mem_source *src);

/* The figure a policy places this task with, in MiB (0 for policies that use none). Returns
 * false when the policy needs a figure the task does not have (the task cannot be collocated
 * then; it can still be placed on idle GPUs by the exclusive-first rule). */
bool sched_task_requirement(const sched_config *cfg, const sched_task *t, uint64_t *mib);

/* The figure the policy places t with, which of the task's figures it is (*src), and whether
 * out-of-memory crashes taught it (*learned, carma). False when the policy uses no task figure
 * (exclusive, or-rr, horus, the or-* floor) or the task has none. */
bool sched_task_figure(const sched_config *cfg, const sched_task *t, uint64_t *mib,
                       mem_source *src, bool *learned);

/* ---- decisions ------------------------------------------------------------------------------- */

typedef enum place_rule {
    PLACE_EXCLUSIVE_FIRST = 0, /* n idle and available GPUs */
    PLACE_POLICY               /* the policy's filters and sort (collocation) */
} place_rule;

typedef struct sched_decision {
    sched_task *task;
    int ngpus;
    int gpus[SCHED_MAX_TASK_GPUS];
    place_rule rule;
    bool from_recovery;
    bool collocated;          /* a chosen GPU was not idle, or holds another placed task */
    uint64_t requirement_mib; /* the figure the policy used (0 when none) */
} sched_decision;

/* GPU availability ("validity") state of CARMA §5. */
typedef enum gpu_grace_state {
    GPU_AVAILABLE = 0,
    GPU_LAUNCHING,  /* a task was placed; its process has not been seen on the GPU yet */
    GPU_GRACE       /* its process was seen at seen_at; available again after grace_s */
} gpu_grace_state;

typedef struct gpu_grace {
    gpu_grace_state state;
    const sched_task *task; /* the task holding the state (NULL when available) */
    double seen_at;
} gpu_grace;

/* ---- the core ------------------------------------------------------------------------------- */

typedef struct sched sched;

sched *sched_create(const sched_config *cfg, int ngpus, carma_err *err);
void sched_destroy(sched *s);
const sched_config *sched_get_config(const sched *s);
int sched_ngpus(const sched *s);

/* Appends to the main queue. Errors: ngpus out of range or more than the server has, the
 * task already held by the core, profiled_util neither NaN nor in 0..1, or lucid_class not
 * one of LUCID_*. */
int sched_submit(sched *s, sched_task *t, carma_err *err);
/* Appends to the recovery queue (used when a driver restores state after a restart). */
int sched_submit_recovery(sched *s, sched_task *t, carma_err *err);
/* Removes a queued task. Returns true if it was queued. Running tasks end via sched_task_ended. */
bool sched_remove_queued(sched *s, sched_task *t);
/* Moves t, in the main queue, to just before `before` (another task of the main queue), or to
 * its tail when `before` is NULL (reorder.c). False, changing nothing, when either is not in
 * the main queue. */
bool sched_move_before(sched *s, sched_task *t, sched_task *before);

size_t sched_main_len(const sched *s);
size_t sched_recovery_len(const sched *s);
/* Queue heads (NULL when empty) and iteration: t->qnext. */
sched_task *sched_main_head(const sched *s);
sched_task *sched_recovery_head(const sched *s);

/* Advances the grace states to `now`, then tries to place the head task (recovery queue first).
 * On success: dequeues the task, marks its GPUs LAUNCHING, counts the attempt, fills *out and
 * returns true. Returns false when nothing can be placed now (strict FIFO: the head blocks the
 * rest). `views` has sched_ngpus(s) entries. */
bool sched_next(sched *s, double now, const gpu_view *views, sched_decision *out);

/* The GPUs' memory as the views give it (sched_next under the carma policy, the only one that
 * reads it, also takes it from its views): what an out-of-memory crash alone teaches is judged
 * against it, and a crash the daemon finds when it starts is ended before anything was placed. */
void sched_see_gpus(sched *s, const gpu_view *views);

/* Whether an out-of-memory crash can be judged now (sched_task_oom): under the carma policy
 * with carma_oom_learning it is judged against the GPUs' memory, which some view must have
 * given (a total of 0 is unknown); with none known it would be judged against no GPU at all.
 * Always true for the other policies, whose judgement needs no memory. */
bool sched_oom_judgeable(const sched *s);

/* The task's process was seen on `gpu`: LAUNCHING -> GRACE starting at `now`. */
void sched_process_seen(sched *s, const sched_task *t, int gpu, double now);

/* What became of a task that ended. */
typedef enum sched_end {
    SCHED_END_FINAL = 0, /* done, failed, cancelled, or out of retries */
    SCHED_END_RETRY,     /* out-of-memory with retries left: now in the recovery queue */
    SCHED_END_NEVER_FITS /* out-of-memory, and what it taught (t->learned_mib) fits no GPU
                            here: final, not retried (carma_oom_learning) */
} sched_end;

/* A running task ended: frees the grace states it holds and applies the recovery rules. */
sched_end sched_task_ended(sched *s, sched_task *t, task_outcome outcome, double now);

/* What the driver saw of an out-of-memory crash. */
typedef struct sched_oom_seen {
    bool peak_known;
    uint64_t peak_mib;   /* the memory the attempt held or asked for when it crashed */
} sched_oom_seen;

/* sched_task_ended(TASK_OOM) with what was seen (NULL: nothing). Under the carma policy with
 * carma_oom_learning the task's figure is raised to what it needed: to the peak seen; when it
 * crashed alone on its GPUs, to more than those GPUs hold. A figure no GPU can hold ends it
 * (SCHED_END_NEVER_FITS), said only while every GPU's memory is known (a GPU not seen may hold
 * it); otherwise it is retried, collocated as any task. */
sched_end sched_task_oom(sched *s, sched_task *t, const sched_oom_seen *seen, double now);

/* A task not running learns `mib` (before the margin) as its figure, unless it has learned
 * more: what an identical task's out-of-memory crash was seen to need (learned_seen), so that
 * a sweep of identical tasks does not crash once each. Only carma_oom_learning places by it,
 * and a figure no GPU holds ends the task through sched_take_never_fits. */
void sched_task_learn(sched *s, sched_task *t, uint64_t mib);

/* A queued task whose learned figure fits no GPU here, now that every GPU's memory is known
 * (views): one judged while some GPU's memory was unknown was retried, and would have stayed
 * queued for good at the queue's front (once backfill_max_skips tasks had passed it, holding
 * back the rest). Taken out of its queue and returned, for the driver to end as
 * SCHED_END_NEVER_FITS would have; NULL when none (carma_oom_learning). The simulator knows
 * every GPU's memory from the start, so it never has one. */
sched_task *sched_take_never_fits(sched *s, const gpu_view *views);

/* Marks a task running on the given GPUs without a decision (restoring state after a restart).
 * Its GPUs get `state` (LAUNCHING, or GRACE with seen_at). Errors: those of sched_submit, and
 * GPUs that are not t->ngpus distinct ones of the server. */
int sched_restore_running(sched *s, sched_task *t, const int *gpus, int ngpus,
                          gpu_grace_state state, double seen_at, carma_err *err);

/* What a GPU must offer for sched_next to place `head` on it by the policy rule (the
 * exclusive-first rule takes any idle, available GPU). A superset, for drivers that skip
 * sched_next while nothing that could let a blocked head through has changed: a GPU that
 * fails it cannot take the head; one that passes may. */
typedef struct sched_gpu_needs {
    bool any_task;       /* the policy may place a task other than the head (backfill): a
                            driver may not skip sched_next on the head's needs alone */
    bool grace_blocks;   /* a GPU in launch or grace takes nothing */
    bool collocates;     /* false: idle GPUs only */
    bool filtered;       /* true: only GPUs with min_mib available (after the reserve) that
                            also pass the utilization gate when `gate` */
    bool gate;
    bool reads_activity; /* the placement may read the views' window aggregates */
    uint64_t min_mib;
} sched_gpu_needs;

sched_gpu_needs sched_head_needs(const sched *s, const sched_task *head);

/* The core's invariants: both queues' links, lengths and tails, every queued task's `where`,
 * the grace counts and the earliest expiry, GPUs held only by running tasks, the ledger's sums.
 * Asserted after every operation in debug and sanitizer builds (SQLite's habit), so each
 * simulated event checks it; cost O(queued tasks + GPUs). */
bool sched_check(const sched *s);

/* The grace state of a GPU as of the last call that advanced time. */
gpu_grace sched_gpu_grace(const sched *s, int gpu);
/* Whether the policy lets a GPU's grace state hold placements back (all but carma with its
 * ledger, which places by committed figures instead): else the state is kept, not used. */
bool sched_grace_applies(const sched *s);
/* Advances grace states to `now` (sched_next does this too). */
void sched_advance(sched *s, double now);

/* ---- the per-GPU ledger: the running tasks placed on each GPU -------------------------------- */

/* Every placement (sched_next, either rule, and sched_restore_running) adds the task to each of
 * its GPUs; sched_task_ended takes it off. The horus and lucid policies place by these sums
 * instead of by telemetry. Figures are those of the task when it was placed. */
typedef struct sched_gpu_load {
    int ntasks;          /* running tasks on this GPU */
    double util_sum;     /* sum of their profiled_util; NaN when any is unknown; 0 when none */
    int class_sum;       /* sum of their known lucid_class */
    int class_unknown;   /* how many have no lucid_class */
    uint64_t oracle_mib; /* sum of their known MEM_ORACLE figures */
    int oracle_unknown;  /* how many have no MEM_ORACLE figure */
    uint64_t commit_mib; /* carma: the sum of their known commitments (figure + margin) */
    int commit_unknown;  /* carma: how many were placed with no figure (each counts as the
                            whole GPU) */
} sched_gpu_load;

/* The ledger of one GPU (all zero for a GPU that does not exist). */
sched_gpu_load sched_gpu_ledger(const sched *s, int gpu);

/* ---- the utilization gate and the window, exposed for drivers and tests ---------------------- */

/* True when the gate lets the GPU through. Three-valued: the GPU passes only when the reject
 * condition is known to be false, so an unknown metric that could decide it rejects the GPU. */
bool sched_gate_passes(const sched_config *cfg, const gpu_view *v);

/* Memory a policy may use on a GPU: max(0, free - reserve); false when free memory is unknown. */
bool sched_available_mib(const sched_config *cfg, const gpu_view *v, uint64_t *mib);

/* ---- why a queued task waits (explain.c), as Slurm's squeue REASON ------------------------- */

typedef enum sched_reason_kind {
    SCHED_REASON_NONE = 0,     /* not queued: running, ended, or not the core's */
    SCHED_REASON_STARTING,     /* nothing holds it back: the next placement pass starts it */
    SCHED_REASON_NO_SAMPLE,    /* the driver has not seen the GPUs yet (driver's: explain.c
                                  never returns it) */
    SCHED_REASON_IDLE_GPUS,    /* it may only take idle GPUs (no figure, a recovered task, an
                                  exclusive policy) and fewer than ngpus are: have of them */
    SCHED_REASON_MEMORY,       /* fewer than ngpus GPUs have need_mib; the most room is most_mib
                                  on gpu (-1: no GPU's memory is known) */
    SCHED_REASON_GATE,         /* the utilization gate rejects gpu (the first it rejects) */
    SCHED_REASON_GRACE,        /* gpu is launching a task or in its grace period */
    SCHED_REASON_INTERFERENCE, /* carma: total progress would not rise on gpu (the best one) */
    SCHED_REASON_LEDGER,       /* horus / lucid: no room in the policy's per-GPU budget */
    SCHED_REASON_NO_PROFILE,   /* horus / lucid: it lacks the profile the policy needs, so
                                  it waits for idle GPUs */
    SCHED_REASON_BEHIND,       /* only the head is placed now: behind task `task` */
    SCHED_REASON_RESERVED,     /* carma backfill: it would fit, but would delay the head (task
                                  `task`), reserved from `until` (NaN: unknown; then the head
                                  was passed backfill_max_skips times already) */
    SCHED_REASON_HELD,         /* driver's: held by its user */
    SCHED_REASON_DEPENDENCY,   /* driver's: waits for another task */
    SCHED_REASON_TASK_CAP,     /* the GPUs that would take it run max_tasks_per_gpu tasks (gpu:
                                  the first) */
    SCHED_REASON_STATE_SPACE,  /* driver's: its state directory is short of free space, so
                                  nothing starts */
    SCHED_REASON_COUNT
} sched_reason_kind;

typedef struct sched_reason {
    sched_reason_kind kind;
    int ngpus;           /* GPUs it asks for */
    int have;            /* IDLE_GPUS: GPUs idle and available now */
    int gpu;             /* the GPU concerned; -1 none */
    uint64_t need_mib;   /* MEMORY: the room it needs on each GPU (figure + margin) */
    uint64_t most_mib;   /* MEMORY: the most room any GPU offers */
    uint64_t task;       /* BEHIND, RESERVED: the head's id */
    double until;        /* RESERVED: the head's reserved start, on the core's clock */
    int passed;          /* carma's head: later tasks backfill let pass it with no run time
                            to judge them by (at most backfill_max_skips); 0 otherwise */
} sched_reason;

/* Why queued task t is not placed now, by the configured policy's rules, as sched_next would
 * judge it at `now` with these views. It places nothing: it advances the grace states to
 * `now` (as sched_next would) and writes only the core's scratch.
 * A task the core does not hold queued gets SCHED_REASON_NONE. */
void sched_explain(const sched *s, const sched_task *t, const gpu_view *views, double now,
                   sched_reason *out);
/* A short stable name for JSON: "starting", "idle_gpus", "memory", "gate", ... */
const char *sched_reason_name(sched_reason_kind k);

#endif
