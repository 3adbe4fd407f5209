/* engine.h — the discrete-event simulator: replays jobs against a simulated server, driving the
 * scheduling core (sched.h) exactly as the daemon does, with a virtual clock. Models (fitted to
 * A100 measurements, sim_params.h): a CPU start-up phase; memory at the job's early peak, then
 * its full peak (an out-of-memory crash when either does not fit); interference slow-down from
 * the co-runners' activity; power from GPU utilization. It re-implements no policy. */
#ifndef CARMA_SIM_ENGINE_H
#define CARMA_SIM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched/sched.h"
#include "sim/gpu_model.h"
#include "sim/sim_params.h"
#include "util/err.h"

/* One job of the replayed trace. */
typedef struct sim_job_spec {
    const char *name;     /* task file name, for reports */
    int seq;              /* the trace's seq, what errors about the job name; 0: none (they
                           * name its position, job 1..) */
    double submit_s;      /* seconds after the trace start, non-decreasing */
    int ngpus;
    mem_figures mem;      /* the figures the policies place with (oracle + estimates) */
    uint64_t early_mib;   /* what the job allocates on each of its GPUs when it starts ... */
    uint64_t peak_mib;    /* ... and from sim_mem_ramp_s later (>= early_mib) */
    double runtime_s;     /* solo wall time, start-up included (> 0) */
    double startup_s;     /* CPU start-up before it touches its GPUs; NaN = sim_startup_s */
    double smact, smocc, drama; /* solo activity 0..1 */
    double util;          /* solo nvidia-smi utilization 0..1; NaN = unknown */
    int lucid_class;      /* Lucid's sharing class 0..2; -1 = unknown */
} sim_job_spec;

typedef struct sim_job_result {
    int attempts;         /* launches */
    int oom_crashes;
    bool completed;
    double submit_s;
    double first_start_s; /* first dispatch (NaN when never started) */
    double end_s;         /* final completion or failure (NaN when neither) */
    double busy_s;        /* summed dispatch-to-end time of every attempt */
    double wait_s;        /* end - submit - busy: time spent queued */
    int gpus[SCHED_MAX_TASK_GPUS]; /* GPUs of the last launch */
    int ngpus;
    bool collocated;      /* its last launch shared a GPU */
    double runtime_est_s; /* the run time the policies knew when it arrived: the catalog's, or
                           * with sim_history an earlier solo run's; NaN none */
} sim_job_result;

/* A step of one GPU's timeline (written only when asked for). */
typedef struct sim_timeline_row {
    double t;
    int gpu;
    int ntasks;
    uint64_t used_mib;
    double smact;  /* reported SM activity */
    double util;   /* reported GPU utilization */
    double power_w;
} sim_timeline_row;

typedef struct sim_summary {
    size_t tasks, completed, failed;
    double makespan_s;   /* first submission to last completion */
    double mean_jct_s, median_jct_s, p95_jct_s, mean_wait_s; /* over completed jobs */
    double gpu_util_mean;/* time-averaged SM activity over GPUs and the makespan */
    double energy_j;     /* J drawn by every GPU over the makespan */
    int oom_crashes;
    int collocated_placements;
    int placements;
    uint64_t events;
} sim_summary;

/* Energy in the tables and plots, where joules run to eight digits; every figure (and the
 * JSON) stays in J. */
static inline double sim_display_mj(double joules)
{
    return joules / 1e6;
}

typedef struct sim_setup {
    sched_config sched;
    sim_params params;
    const gpu_model *gpu;
    int ngpus;
    bool record_timeline;
    const char *source;   /* the trace file the jobs came from, named in errors about one */
    /* Called about every 1% of jobs finished (may be NULL). */
    void (*progress)(size_t done, size_t total, void *user);
    void *progress_user;
} sim_setup;

typedef struct sim_result {
    sim_summary summary;
    sim_job_result *jobs;       /* one per input job, in input order */
    size_t njobs;
    sim_timeline_row *timeline; /* when record_timeline */
    size_t ntimeline;
} sim_result;

/* Runs the whole simulation. Errors: bad setup, a job the server can never hold (more GPUs than
 * it has, a non-positive runtime; named by source and seq where known), allocation failure. */
int sim_run(const sim_setup *setup, const sim_job_spec *jobs, size_t njobs, sim_result *out,
            carma_err *err);
void sim_result_free(sim_result *r);

#endif
