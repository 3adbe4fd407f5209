/* queue_args.h — the values of the queue-control options of `carma submit` and of the
 * commands around it (wait, priority): Slurm's time formats, lists of task ids, array index
 * ranges. Pure parsing: each returns 0, or -1 with err saying what was expected. */
#ifndef CARMA_CLI_QUEUE_ARGS_H
#define CARMA_CLI_QUEUE_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* Slurm's --time: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS; at least 1 second, at most
 * max_s. */
int parse_duration_s(const char *s, int64_t max_s, int64_t *out, carma_err *err);

/* One task id: a whole number min..INT64_MAX (min 1, or 0 where it means "from the start").
 * Else err "expected a task id (a positive integer), got 'V'", or for a whole number past
 * int64's range, however long, "task id 'V' is out of range (at most 9223372036854775807)":
 * what was typed is a number, just too large for any task. */
int parse_task_id(const char *s, int64_t min, int64_t *out, carma_err *err);

/* "ID[,ID...]": appends up to max ids to ids[*n]. */
int parse_id_list(const char *s, uint64_t *ids, size_t max, size_t *n, carma_err *err);

/* Slurm's --array: "1-8", "1-7:2" (a step), "1,2,5", "0-3,10": the indices in order, each
 * 0..1000000, no repeats, at most max of them. */
int parse_array_spec(const char *s, int *idx, size_t max, size_t *n, carma_err *err);

#endif
