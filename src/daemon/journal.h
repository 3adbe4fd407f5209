/* journal.h — the floor every daemon file stands on: its log lines, its two clocks, and its
 * durable record. Each loop iteration's changes go into one store transaction, opened by the
 * first write (d_txn) and ended by d_commit; a failed write or commit is fatal (d_fail): the
 * loop stops, and nothing that was not stored is acknowledged or acted on. */
#ifndef CARMA_DAEMON_JOURNAL_H
#define CARMA_DAEMON_JOURNAL_H

#include <stdbool.h>

#include "daemon/daemon_int.h"
#include "util/clock.h"

/* Seconds on the wall clock (what is stored and shown). The daemon's other clock is
 * util/clock.h's clock_mono_s (intervals, deadlines, the core's time); it reads no third. */
double daemon_wall_now(void);

/* One log line through opts->log (nothing when it is NULL). */
void dlog(daemon_state *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The first fatal error is kept in d->fatal; the loop ends after the iteration. */
void d_fail(daemon_state *d, const carma_err *err);
/* Opens the iteration's transaction on first use; false once the daemon has failed. */
bool d_txn(daemon_state *d);
/* Commits the open transaction (true when there was none and nothing failed); a failed
 * commit is rolled back and fatal. */
bool d_commit(daemon_state *d);

/* Durable writes, each in the iteration's transaction; false (and fatal) on failure. */
bool d_save_task(daemon_state *d, const dtask *t);
/* The task's current attempt as its row: inserted when it is new, else updated. */
bool d_save_attempt(daemon_state *d, const dtask *t, bool insert);
bool d_event(daemon_state *d, const dtask *t, const char *kind, const char *detail);

/* "0,1": GPU indices as the attempt row and the log show them. */
void d_gpus_text(const int *gpus, int n, char *buf, size_t cap);
/* Their UUIDs as the daemon reads them now, "GPU-a,GPU-b" ("" when one is unknown). */
void d_gpu_uuids_text(const daemon_state *d, const int *gpus, int n, char *buf, size_t cap);

#endif
