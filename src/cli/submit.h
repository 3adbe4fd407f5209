/* submit.h — the parts of `carma submit` that `carma run` reuses: a task file read into the
 * daemon's submission JSON exactly as `carma submit TASKFILE` reads it, and submissions sent
 * with their idempotency key (submit_send.c: one task, an --array's, a batch of task files). */
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

/* submit_send_batch's answer when the daemon does not take a batch (an older daemon, or a
 * request longer than it reads): nothing was submitted; the tasks go one at a time. */
#define SUBMIT_UNTAKEN (-1)

/* Submits several different tasks (a JSON array of task objects, not taken) in one request:
 * the daemon makes all of them or none, so a client that dies while it sends leaves no task
 * behind. 0 with ids[i] the i-th task's id; SUBMIT_UNTAKEN, said on stderr; or the exit status
 * after printing the error (the daemon refused one of them, naming it: none was made). */
int submit_send_batch(const request_args *a, json_t *tasks, json_int_t *ids);

/* Submits the task once, or once per index of an --array (narray > 0: the daemon gives each
 * its array_index and "NAME[INDEX]" as its name, and makes all or none); prints the ids made
 * on one line (--json: {"id": N}, or {"ids": [...]} for an array). 0, or the exit status. */
int submit_send_all(const request_args *a, json_t *task, const int *array, size_t narray);

#endif
