/* logs.h — reading a task's output through the daemon: what `carma logs` and `carma run` (which
 * keeps a private daemon's task logs before the daemon and its directory go) share. */
#ifndef CARMA_CLI_LOGS_H
#define CARMA_CLI_LOGS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli/request.h"
#include "util/err.h"

/* What a logs reply tells of its task: how many attempts it has made, whether it has ended
 * (done, failed, cancelled, timeout: no attempt will follow), its owner's uid (-1: not told). */
typedef struct log_task {
    int attempts;
    bool ended;
    long long uid;
    bool follow;  /* set by the caller: it goes on asking (logs --follow) */
    bool patient; /* the daemon has answered a follower: asked again through a restart */
} log_task;

/* Reads one chunk of a stream ("stdout", "stderr") of task id's attempt *attempt (0: its
 * latest, whose number is stored there) from *offset, which moves past it; *eof when the
 * attempt ended and all was read; *task (unless NULL) as the reply tells it. 0, or the failed
 * request's exit status (printed). */
int logs_fetch(const request_args *a, long long id, const char *stream, json_int_t *offset,
               int *attempt, bool *eof, json_t **data, log_task *task);

/* Writes an ended task's latest attempt's stdout and stderr (attempt `which`, when not 0) into
 * two new files (mode 0600; an existing file or a link there is an error, not overwritten);
 * on an error neither is left. */
int logs_save(const request_args *a, long long id, int64_t which, const char *out_path,
              const char *err_path, carma_err *err);

#endif
