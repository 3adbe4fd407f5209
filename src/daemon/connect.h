/* connect.h — the command side of the daemon protocol (the CLI's): connect to the daemon's
 * socket, send one request, read its reply line. */
#ifndef CARMA_DAEMON_CONNECT_H
#define CARMA_DAEMON_CONNECT_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/err.h"

/* Connects to the daemon's socket (daemon_client_sockets says which). Returns the fd, or -1
 * with err saying why (and that the daemon may not be running). */
int daemon_connect(const char *socket_path, carma_err *err);

/* The same with a limit of timeout_ms on connecting and on each send and receive on the fd,
 * for callers that must not hang on a stuck daemon (the Slurm plugin, in a job's start). */
int daemon_connect_timed(const char *socket_path, int timeout_ms, carma_err *err);

/* The most sockets a client tries (daemon_client_sockets): the system's and a user's
 * (DAEMON_USER_SOCKETS). */
#define DAEMON_MAX_SOCKETS 3

/* Connects to the first of paths[0..n) that answers (n <= DAEMON_MAX_SOCKETS), setting *used
 * (when not NULL) to its index. Returns the fd, or -1 with err naming every path tried and
 * why each failed. */
int daemon_connect_first(const char *const *paths, int n, int *used, carma_err *err);

/* Sends req (the reference is taken) and reads the reply. Returns the reply when it says
 * ok; otherwise NULL with err holding the daemon's error (or the transport's). */
json_t *daemon_call(int fd, json_t *req, carma_err *err);
/* The same; on failure *answered tells a reply from the daemon (a refusal: retrying cannot
 * help) from none (the connection failed: a retry with the same idempotency key may). */
json_t *daemon_call_answered(int fd, json_t *req, bool *answered, carma_err *err);
/* Makes every later daemon_call* of this process interruptible: once *signals has changed
 * since a call began (the command's signal handler counts them), the call waits at most 3 s
 * more for the daemon to take the request and reply, then gives up ("interrupted"); such a
 * call never blocks in send or recv, so a signal just before one is not missed. A stopped or
 * hung daemon would otherwise hold a command that catches SIGINT for as long as it hangs,
 * while one that answers (a cancel sent as the command stops) is still heard. Signals are the
 * process's, so is this; NULL: none. */
void daemon_calls_interruptible(volatile sig_atomic_t *signals);
/* Whether a signal has come since daemon_calls_interruptible (then a call is not sent again). */
bool daemon_calls_interrupted(void);
/* daemon_call with the whole exchange bounded, for callers inside another program (the Slurm
 * plugin, where a job waits for it) or with a time limit of their own: the request taken and
 * the reply read by `deadline` (clock_mono_s() seconds, INFINITY: none), at most max_reply
 * bytes of it; *answered (when not
 * NULL) as daemon_call_answered's. */
json_t *daemon_call_within(int fd, json_t *req, double deadline, size_t max_reply,
                           bool *answered, carma_err *err);

#endif
