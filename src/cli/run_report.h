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
    char run_id[32];        /* names the kept files: the Slurm job's id, else our pid */
    double timeout_s;
} run_opts;

/* t ({"file", "id", "state", ...}) has just been seen ended: keeps its output (with a private
 * daemon), prints its line and raises *worst to its exit status (wait.h). */
void run_task_ended(const request_args *a, const run_opts *o, json_t *t, int *worst);

/* The end: names the files never submitted (state "unsubmitted"); with --json prints tasks. */
void run_print_report(const request_args *a, json_t *tasks);

#endif
