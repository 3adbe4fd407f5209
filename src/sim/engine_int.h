/* engine_int.h — the simulator's internal state, shared by engine.c (event loop, job life
 * cycle) and sim_gpu.c (the simulated GPUs). Not for use outside src/sim/engine*.c, sim_gpu.c. */
#ifndef CARMA_SIM_ENGINE_INT_H
#define CARMA_SIM_ENGINE_INT_H

#include "sim/engine.h"
#include "sim/event_heap.h"
#include "sim/gpu_activity.h"
#include "sim/sim_history.h"
#include "sim/task_pool.h"

#define GRACE_EPSILON_S 1e-6 /* retry just after a grace period has certainly ended */

typedef enum job_state { JOB_PENDING = 0, JOB_QUEUED, JOB_STARTING, JOB_RUNNING, JOB_DONE,
                         JOB_FAILED } job_state;

typedef struct sim_job {
    sched_task *st; /* what the core holds, from s->tasks between its arrival and its end
                       (NULL before and after); st->id = index + 1 */
    const sim_job_spec *spec;
    job_state state;
    double remaining_s;  /* solo-speed seconds of work left in the current run */
    double speed;
    double pressure;     /* what it costs its co-runners (sim_pressure) */
    uint64_t held_mib;   /* memory it holds on each of its GPUs now */
    uint64_t cap_mib;    /* its attempt's MPS memory cap; 0 = none (sim_mps_caps) */
    double last_update;
    double attempt_start;
    uint32_t version;    /* bumps whenever the pending EV_COMPLETE becomes stale */
    uint64_t placed_seq; /* its attempt's placement, in the order of every placement */
    bool shared;         /* its attempt was placed beside another task */
} sim_job;

typedef struct sim_gpu {
    uint64_t used_mib;
    int *tasks;          /* jobs holding memory on this GPU */
    int ntasks;
    size_t cap;          /* of tasks */
    double pressure;     /* sum of its tasks' pressures */
    double reported_smact; /* what a monitor would read now */
    double reported_util;  /* GPU utilization now, for power */
    double last_t;       /* integrals below are accumulated up to here */
    double energy_j, smact_s;
    /* The integrals as they were at snap_t, the latest completion when the GPU was first
     * accounted past it: a task failing after the last completion keeps the GPU busy past
     * the makespan, which energy and utilization (figures over the makespan) must not count */
    double snap_t, snap_energy_j, snap_smact_s;
    gpu_activity activity;
    bool warm;           /* its window is still moving: in the warm list, or parked */
    bool parked;         /* warm but in launch or grace (its window is not read): off the list
                            until it is available again (gpu_improved) */
    double agg_second;   /* the integer second its view's aggregate was computed for */
    int starting;        /* jobs placed here still in CPU start-up */
    bool dirty;          /* in sim.dirty */
} sim_gpu;

typedef struct sim {
    const sim_setup *setup;
    sched *core;
    event_heap heap;
    sim_job *jobs;
    size_t njobs;
    task_pool tasks;     /* the jobs' core tasks, for those in the system only */
    sim_gpu *gpus;
    gpu_view *views;
    int *warm;           /* GPUs whose window aggregate still changes with time, but for the
                            parked ones (sim_gpu.parked) */
    int nwarm;
    int nparked;
    int nfree;           /* GPUs with no task and none starting: exclusive-first can use them */
    double pending_retry; /* time of the earliest EV_RETRY queued for window changes */
    /* Memo of a failed placement. sched_next scans every GPU, and an overloaded server calls
     * it at almost every event only to fail again, so the driver remembers that `blocked_head`
     * could not be placed and asks the core again only once it may fit: the head changed, or
     * a GPU it may now be placed on improved (memory freed, a task ended, a grace period
     * ended, the gate passes now). Less memory or more activity only take candidates away. */
    bool blocked;
    const sched_task *blocked_head;
    int *dirty;          /* GPUs improved since the memo, to look at in try_place */
    int ndirty;
    event_heap grace_ends; /* when grace periods end (job = the GPU) */
    /* Bumped whenever a GPU's memory, activity or availability changes. refresh_views does
     * nothing more when called again in the same second for the same head with no change
     * since, and the blocked case calls it at nearly every event. */
    uint64_t changes;
    uint64_t refreshed_changes;
    double refreshed_second;
    const sched_task *refreshed_head;
    double now, t_start;
    double done_t;       /* the latest completion so far (NaN: none yet) */
    sim_result *out;
    size_t finished;
    size_t progress_step;
    carma_err why;       /* what went wrong inside an event handler */
    /* sim_history: what the daemon's run history would hold (the run times only with
     * sim_history = on); a task's GPUs were its own throughout when none was placed on since
     * (placed_seq, per GPU the latest) */
    sim_history history;
    uint64_t *placed_seq;
    uint64_t nplaced;
} sim;

/* ---- the simulated GPUs (sim_gpu.c) ---------------------------------------------------------- */

/* Accumulates energy and SM activity of g up to now. */
void gpu_account(sim *s, sim_gpu *g);
/* Brings j's remaining work up to now at its current speed. */
void job_advance(sim *s, sim_job *j);
/* Recomputes j's speed from its GPUs and pushes its completion event. -1: out of memory. */
int job_reschedule(sim *s, sim_job *j);
/* Changes GPU gi's count of tasks in start-up by `delta`, keeping the count of free GPUs. */
void gpu_starting(sim *s, int gi, int delta);
/* GPU gi's memory changed: its view and timeline follow. -1: out of memory. */
int gpu_memory_changed(sim *s, int gi);
/* Adds (sign +1) or removes (sign -1) job j, holding j->held_mib, on GPU gi; every job there
 * is brought up to date and rescheduled. -1: out of memory. */
int gpu_change(sim *s, int gi, sim_job *j, int sign);
/* Whether GPU gi could be one the core places f's head on now (false only when sure). */
bool gpu_may_take(const sim *s, int gi, const sched_gpu_needs *f);
/* GPU gi can take more than before: memory freed, a task or a grace period ended. Its window
 * is read again, and while a head is blocked it is looked at before the memo is trusted. */
void gpu_improved(sim *s, int gi);
/* Whether some GPU's window aggregate still changes with time. */
bool gpu_any_warm(const sim *s);
/* Brings the window aggregates of recently changed GPUs up to now: those the core could read
 * for `head` (f: sched_head_needs; see sim_gpu.c); the others stay stale. */
void refresh_views(sim *s, const sched_task *head, const sched_gpu_needs *f);

/* ---- identical tasks learn from a crash (sim_learn.c), as the daemon's do (reap.c) ---------- */

/* j's out-of-memory crash was just judged by the core: when it was seen to need a figure
 * (learned_seen), its task file's queued jobs learn it, and later ones on arrival. */
void sim_teach_identical(sim *s, const sim_job *j);
/* j arrived: it learns what a crash of its task file was seen to need, if any. */
void sim_learn_on_arrival(sim *s, sim_job *j);

#endif
