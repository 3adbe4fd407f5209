/* task.h — a training task as carma knows it, whatever file or command line it came from. */
#ifndef CARMA_CORE_TASK_H
#define CARMA_CORE_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched/sched.h"
#include "util/err.h"

/* Facts a simulation needs; NaN (or 0 for the runtime) when not known. */
typedef struct task_sim_facts {
    double solo_runtime_s; /* wall time alone on its GPUs; 0 = unknown */
    double smact;          /* solo SM activity 0..1 */
    double smocc;          /* solo SM occupancy 0..1 */
    double drama;          /* solo DRAM activity 0..1 */
} task_sim_facts;

typedef struct task_spec {
    uint64_t id;         /* assigned by whoever queues it; 0 = none yet */
    char *name;          /* short name, e.g. the .rad file name without directory */
    char *command;       /* shell command line */
    char *workdir;       /* NULL = the submitter's working directory; a relative one is
                            the task file's directory's (taskload.h) */
    char **env;          /* "KEY=VALUE" strings */
    size_t nenv;
    int ngpus;           /* 1..SCHED_MAX_TASK_GPUS */
    mem_figures mem;     /* measured (oracle) figure and estimates, by source */
    char *summary_path;  /* model summary (.model / torchsummary text), NULL if none */
    int batch_size;      /* 0 = unknown */
    int max_retries;     /* < 0 = the config's retry cap */
    char *source_path;   /* the file it was parsed from, NULL if none */
    char *conda_env;     /* run under `conda activate` of it (a .rad's line 2, YAML's conda) */
    /* CARMA .rad extras, kept for fidelity: */
    char *dataset;
    char *collocation_mode; /* line 7; never acted on, as in the reference */
    task_sim_facts sim;
} task_spec;

void task_spec_init(task_spec *t);
void task_spec_free(task_spec *t);
/* Deep copy; returns -1 on allocation failure. */
int task_spec_copy(task_spec *dst, const task_spec *src, carma_err *err);
/* Appends "KEY=VALUE" to the environment list. */
int task_spec_add_env(task_spec *t, const char *kv, carma_err *err);

/* Fills a sched_task (id, ngpus, memory figures, retries) from a spec. */
void task_spec_to_sched(const task_spec *spec, sched_task *out);

/* Checks the fields every task needs (a command, 1..SCHED_MAX_TASK_GPUS GPUs, batch >= 0);
 * `what` names the task in the message (a file name, "submission"). */
int task_spec_validate(const task_spec *t, const char *what, carma_err *err);

#endif
