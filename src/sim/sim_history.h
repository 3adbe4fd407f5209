/* sim_history.h — the daemon's run history as a simulation would have built it
 * (sim_history = on): per task file, the run time and solo profile (SM and DRAM activity,
 * utilization) of its last run that ended done with its GPUs to itself, measured from its
 * placement to its end as the daemon measures them. A task is given them when it arrives, as
 * the daemon gives a submitted task its history; with none it is planned with unknowns. So a
 * policy can be judged with what the daemon would know, not with the catalog's figures. */
#ifndef CARMA_SIM_SIM_HISTORY_H
#define CARMA_SIM_SIM_HISTORY_H

#include <stddef.h>

#include "sched/sched.h"
#include "sim/engine.h"
#include "util/err.h"

typedef struct sim_history_run {
    double runtime_s; /* NaN: no solo run of this task file has ended done yet */
    double smact, drama, util;
} sim_history_run;

typedef struct sim_history {
    size_t *file;         /* per job: its task file's index in runs */
    sim_history_run *runs; /* per task file */
    size_t *members;      /* the jobs, grouped by task file: file f's are members[first[f]..
                             first[f + 1]) */
    size_t *first;
    uint64_t *taught_mib; /* per task file: what a crash of one was seen to need (0: none) */
} sim_history;

/* Groups the jobs by task file name (a job without a name is a file of its own): the task
 * files are the daemon's identical tasks. Made for every run (sim_learn.c teaches identical
 * tasks with it); the run times only with sim_history = on. */
int sim_history_init(sim_history *h, const sim_job_spec *jobs, size_t n, carma_err *err);
void sim_history_free(sim_history *h);

/* What job i is planned with when it arrives: its file's last solo run, else unknowns. */
void sim_history_fill(const sim_history *h, size_t i, sched_task *st);

/* Job i (spec) ended done with its GPUs to itself `runtime_s` after its placement, the first
 * `startup_s` of them in CPU start-up (its GPUs idle, as the daemon's samples read them). */
void sim_history_record(sim_history *h, size_t i, const sim_job_spec *spec, double runtime_s,
                        double startup_s);

#endif
