/* run_report.h — what `carma run` (run.c) says of its tasks: a line as each ends, a private
 * daemon's task output kept first, and the report at the end (--json's array). */
#ifndef CARMA_CLI_RUN_REPORT_H
#define CARMA_CLI_RUN_REPORT_H

#include <jansson.h>
#include <stdbool.h>

#include "cli/request.h"

typedef struct run_opts {
    bool private_daemon;
    const char *gpu_backend, *sim_gpus;
    const char *output_dir; /* where a private daemon's task output is kept */
    bool keep_logs;         /* a private daemon: its logs go with it unless kept */
    char run_id[48];        /* names the kept files: the Slurm job's id (.N after the first
                               run of the job there), else our pid */
    double timeout_s;
} run_opts;

/* The name of this run's kept files (o->run_id, from base): base, or the first of base.2,
 * base.3, ... that no carma-RUN-* file in o->output_dir has: a second `carma run` in one job
 * numbers its tasks from 1 again, and would find its files' names taken. */
void run_pick_id(run_opts *o, const char *base);

/* t ({"file", "id", "state", ...}) has just been seen ended: keeps its output (with a private
 * daemon), prints its line and raises *worst to its exit status (wait.h). */
void run_task_ended(const request_args *a, const run_opts *o, json_t *t, int *worst);

/* The end: names the files never submitted (state "unsubmitted"); with --json prints tasks. */
void run_print_report(const request_args *a, json_t *tasks);

#endif
