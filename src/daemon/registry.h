/* registry.h — the daemon's tasks in memory (the live ones), the set of running tasks, the
 * state names, and the invariants a task keeps (daemon_int.h), checked in debug builds. No
 * I/O: what is stored is journal.h's. */
#ifndef CARMA_DAEMON_REGISTRY_H
#define CARMA_DAEMON_REGISTRY_H

#include "daemon/daemon_int.h"

/* "queued", "running", then the ended: "done", "failed", "cancelled", "timeout". */
const char *dstate_name(dstate s);
int dstate_from(const char *name, dstate *out);

/* A new task with nothing known: no history, no peak, not running. NULL when out of memory. */
dtask *d_new_task(void);
void d_free_task(dtask *t);
/* The live task with this id, or NULL (task_query.c's d_find_task also looks in the store). */
dtask *d_task(daemon_state *d, uint64_t id);
/* Enters t (its id t->st.id held by no other task in memory). */
int d_put_task(daemon_state *d, dtask *t, carma_err *err);
/* Takes t (not running) out of memory and frees it. */
void d_remove_task(daemon_state *d, dtask *t);
/* Frees the tasks that have ended: called once their end is committed, the store then
 * answers for them. */
void d_forget_ended(daemon_state *d);
/* Frees every task in memory (shutdown). */
void d_free_tasks(daemon_state *d);
/* Fills the core's view of the task from its submission and its history figure. */
void d_fill_sched_task(dtask *t);

/* The running set (d->running): -1 when out of memory (t is then not in it). */
int d_running_add(daemon_state *d, dtask *t);
void d_running_remove(daemon_state *d, dtask *t);

/* The invariants of one task, and of every task and the running set (daemon_int.h). A daemon
 * that has failed stops, and its memory need no longer agree: callers assert
 * `d->failed || d_task_ok(d, t)`. */
bool d_task_ok(const daemon_state *d, const dtask *t);
bool d_tasks_ok(const daemon_state *d);

#endif
