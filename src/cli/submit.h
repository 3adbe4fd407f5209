/* submit.h — the parts of `carma submit` that `carma run` reuses: a task file read into the
 * daemon's submission JSON exactly as `carma submit TASKFILE` reads it, and one submission sent
 * with its idempotency key (submit_send.c, which also sends an --array's tasks). */
#ifndef CARMA_CLI_SUBMIT_H
#define CARMA_CLI_SUBMIT_H

#include <jansson.h>

#include "cli/request.h"
#include "util/err.h"

/* Reads a task file (.yaml or .rad) with the current directory and the caller's environment,
 * as `carma submit TASKFILE` does, and checks it as the daemon will: *task is the submission's
 * JSON (the caller's reference), or NULL with err naming the file and the problem. */
int submit_task_file_json(const char *path, json_t **task, carma_err *err);

/* Submits one task (its JSON is not taken), sent again on a lost reply under a random key.
 * 0 with *id set, or the exit status after printing the error. */
int submit_send(const request_args *a, json_t *task, json_int_t *id);

/* Submits the task once, or once per index of an --array (narray > 0: the daemon gives each
 * its array_index and "NAME[INDEX]" as its name, and makes all or none); prints the ids made
 * on one line (--json: {"id": N}, or {"ids": [...]} for an array). 0, or the exit status. */
int submit_send_all(const request_args *a, json_t *task, const int *array, size_t narray);

#endif
