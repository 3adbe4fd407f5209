/* wait.h — what `carma wait` and `carma run` share: the exit status each way a task can end,
 * one look at a task's state, and the pause between looks. */
#ifndef CARMA_CLI_WAIT_H
#define CARMA_CLI_WAIT_H

#include <jansson.h>
#include <stdbool.h>

#include "cli/request.h"

#define EXIT_WAIT_TIMEOUT 124 /* as timeout(1) */
#define WAIT_POLL_S 0.5       /* between looks at the tasks still live: a client, not a busy
                                 loop */

/* 0 for done (or a live state), 3 cancelled, 4 timeout, 5 failed (or NULL: a reply that
 * named no state, not known to be done): the worst is the exit status. */
int wait_state_status(const char *state);

/* queued or running: not ended yet (NULL: false). */
bool wait_state_live(const char *state);

/* t's "state" ({"id", "state", ...}, as wait_refresh keeps it); NULL when it has none. */
const char *wait_task_state(const json_t *t);

/* t is {"id": N, "state": S}. While S is live (queued, running), asks the daemon for the task
 * and stores its state (and "attempts", how often it was launched) in t. 0 with *ended telling
 * whether it has ended, or the exit status of a failed request (printed). A daemon that cannot
 * be reached is asked again for REQUEST_PATIENCE_S (a restart keeps the tasks). */
int wait_refresh(const request_args *a, json_t *t, bool *ended);
/* The same, the daemon's answer awaited until `deadline` (clock_mono_s()) only: else
 * EXIT_WAIT_TIMEOUT, nothing printed (a daemon that stopped answering holds no --timeout);
 * asked again for patience_s (0: not) when it cannot be reached. */
int wait_refresh_by(const request_args *a, json_t *t, double deadline, double patience_s,
                    bool *ended);

/* Sleeps until the next look: WAIT_POLL_S, or less when the deadline (clock_mono_s) comes
 * first, so that the whole of a --timeout is waited, with a look at its end. False, at once,
 * when the deadline has passed. */
bool wait_nap(double deadline);

#endif
