/* tasks.h — a task's life in the daemon, one file per step: submitted (submit.c), placed and
 * launched (launch.c, with env.c's environment), its attempts looked at and ended (reap.c),
 * cancelled (cancel.c), found again after a restart (restore.c), and shown to clients
 * (task_view.c). Every change is written to the store in the loop iteration's transaction
 * (journal.h) before it is acted on: launches and signals happen only after the commit. */
#ifndef CARMA_DAEMON_TASKS_H
#define CARMA_DAEMON_TASKS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "daemon/daemon_int.h"
#include "daemon/supervisor.h"

/* submit.c: stores a new task and queues it, or with narray > 0 one per index of array (an
 * array: each named NAME[INDEX], with its array_index), all or none; ids[0..max(narray, 1)) are
 * their ids. A refused submission stores nothing. key (NULL: none) is the client's idempotency
 * key: when this uid already submitted with it, nothing is stored, ids are the first
 * submission's and *repeat is set (a client retrying after a lost reply makes no second
 * task). sub is taken by a single task; the caller frees it in every case (submission_free). */
int d_submit(daemon_state *d, const peer *p, submission *sub, const char *key,
             const int *array, size_t narray, uint64_t *ids, bool *repeat, carma_err *err);
/* submit.c: a batch of different tasks, specs a JSON array of 1..PROTO_MAX_ARRAY task objects
 * (each read and checked as a single task's), stored all or none as d_submit's array is, with
 * their ids in ids[i] and key as an array's. A refusal names the task as tasks[i] (its source
 * file too), with i in *refused; -1 when it is of the whole batch (max_tasks_per_user). */
int d_submit_batch(daemon_state *d, const peer *p, const json_t *specs, const char *key,
                   uint64_t *ids, bool *repeat, long *refused, carma_err *err);
/* Reads the last solo run of an identical task (store_runs.c) into t->run_hist, when there is
 * one; call d_fill_sched_task after. Also at restart: the history is not kept in the task. */
int d_take_run_history(daemon_state *d, dtask *t, carma_err *err);
/* The histories' key of task t (a store_task_key initializer). */
#define D_TASK_KEY(t) {(t)->uid, (t)->sub.cwd, (t)->sub.command, (t)->sub.batch, (t)->sub.ngpus}

/* reap.c: t->end_reason for a task failed because its learned figure fits no GPU here. */
void d_never_fits_reason(dtask *t);
/* cancel.c: ends a task the core took out of its queue as fitting no GPU here
 * (sched_take_never_fits): failed, saying how much it needs. */
void d_end_never_fits(daemon_state *d, dtask *t);

/* launch.c: places what the core allows, writes the attempts, commits, then starts their
 * supervisors. */
void d_schedule(daemon_state *d);

/* env.c: the environment of the task's current attempt ("KEY=VALUE" each, NULL-terminated
 * in v): the base, the submitted variables, the daemon's (CUDA_VISIBLE_DEVICES, ...) and the
 * MPS ones. -1 when any of them cannot be stored: the attempt must not run without it. */
typedef struct task_env {
    char **v;
    size_t n, cap;
} task_env;
int d_task_env(daemon_state *d, const dtask *t, task_env *e, carma_err *err);
void d_task_env_free(task_env *e);

/* reap.c: looks at every running attempt's supervisor: ends the attempts that ended, sends
 * the cancels requested. */
void d_reap(daemon_state *d);
/* Sends the cancels asked for and not sent yet (d_reap does; a stopping daemon too). */
void d_send_cancels(daemon_state *d);
/* Ends the running task's attempt with this outcome (why: for the event, or NULL): the core's
 * recovery rules send it to the recovery queue or end the task. */
void d_end_attempt(daemon_state *d, dtask *t, task_outcome outcome, const char *why);
/* The same, ended at `ended` (a Unix time) rather than now. */
void d_end_attempt_at(daemon_state *d, dtask *t, task_outcome outcome, const char *why,
                      double ended);
/* Ends the running task's attempt as its supervisor's result tells (oomclass.h). */
void d_attempt_result(daemon_state *d, dtask *t, const sup_result *r);
/* Whether the attempt, ended with result r, crashed out of memory while no GPU's memory is
 * known to judge it by (sched_oom_judgeable): it is then left running, unjudged, for a later
 * look (d_reap), and the log says so once. */
bool d_oom_waits(daemon_state *d, dtask *t, const sup_result *r);

/* on_finish.c: the config's on_finish program for a task that has ended for good (its state,
 * outcome and exit status final) is started by d_on_finish_start once that end is committed,
 * so that a daemon restarted after a crash, which ends the attempt again, does not run it a
 * second time (a daemon killed between the commit and the start skips it). Neither waits for
 * the hook. */
void d_on_finish(daemon_state *d, const dtask *t);
/* Starts the hooks waiting, after a commit (not while a transaction is open). */
void d_on_finish_start(daemon_state *d);
/* Drops the hooks waiting (a daemon that failed: their ends were not stored). */
void d_on_finish_drop(daemon_state *d);

/* cancel.c: a queued task is cancelled now; a running one is marked, and d_reap signals it
 * after the commit. */
int d_cancel(daemon_state *d, dtask *t, carma_err *err);

/* restore.c: loads every task from the store at start-up: queued tasks keep their order,
 * running attempts are adopted, classified or requeued (docs/protocol.md). */
int d_restore(daemon_state *d, carma_err *err);
/* A task as its store rows describe it (its latest attempt's: a NULL), entered nowhere; NULL
 * with err naming the task when they are unreadable. */
dtask *task_from_rows(const store_task_row *row, const store_attempt_row *a, carma_err *err);

/* control.c: the queue controls. d_enqueue gives a queued task to the core (recovery queue
 * tail, or the main queue in order of priority, then of submission), or parks it when it is
 * held or has dependencies; d_unpark (each scheduling turn) gives the parked tasks whose
 * dependencies are met to the core and cancels those whose --afterok dependency ended other
 * than done, naming it. */
int d_enqueue(daemon_state *d, dtask *t, carma_err *err);
void d_unpark(daemon_state *d);
/* Hold and release: queued tasks only; a task already held (not held) is left as it is. */
int d_hold(daemon_state *d, dtask *t, carma_err *err);
int d_release(daemon_state *d, dtask *t, carma_err *err);
int d_set_priority(daemon_state *d, dtask *t, int priority, carma_err *err);
/* An attempt that ran run_s seconds ran past the task's time limit. */
bool d_past_time_limit(const dtask *t, double run_s);
/* How long the running attempt has run: by the monotonic clock when this daemon launched it
 * (a step of the wall clock, as NTP setting a clock hours off, would time every task out),
 * else by the wall clock, all a restart has. */
double d_attempt_run_s(const dtask *t);
/* Marks a running task past its time limit for cancelling (d_reap sends it): it ends
 * `timeout`. */
void d_time_limit(daemon_state *d, dtask *t);

/* task_view.c: where the memory figure shown for a task (and its MPS cap) comes from. */
typedef enum dmem_from {
    DMEM_NONE = 0,  /* no figure */
    DMEM_POLICY,    /* the fixed floor of the or-* policies: the policy's, not the task's */
    DMEM_SUBMITTED, /* a figure submitted with the task: .source names it */
    DMEM_HISTORY,   /* the peak measured on an earlier identical run (.source is MEM_ORACLE) */
    DMEM_LEARNED    /* raised by the carma policy after out-of-memory crashes */
} dmem_from;

typedef struct dtask_mem {
    dmem_from from;
    mem_source source; /* DMEM_SUBMITTED, DMEM_HISTORY */
    uint64_t mib;      /* unless DMEM_NONE */
} dtask_mem;

/* The figure the configured policy places the task with (as the core computes it); for
 * policies that use none, or when the task lacks the one its policy uses, the measured figure,
 * else the first estimate known. */
dtask_mem d_task_mem(const daemon_state *d, const dtask *t);
/* mem_source in JSON: "policy", "history", "learned", an estimator's or "oracle"; NULL for
 * DMEM_NONE. */
const char *d_task_mem_name(dtask_mem m);
json_t *d_task_json(const daemon_state *d, const dtask *t, bool detail);
/* Why a queued task waits (SCHED_REASON_NONE for any other), by the core with the daemon's
 * current GPU views; and that reason in words ("no GPU has 30.0 GiB free ..."). */
void d_task_reason(const daemon_state *d, const dtask *t, sched_reason *r);
void d_reason_text(const daemon_state *d, const sched_reason *r, char *buf, size_t cap);

/* task_query.c: the task with this id: the live one, else one read from the store into
 * *loaded (the caller frees it with d_free_task); NULL with err when there is none. */
dtask *d_find_task(daemon_state *d, uint64_t id, dtask **loaded, carma_err *err);

/* task_states.c: many tasks' states looked up at once (the dependencies of a pass's parked
 * tasks, or of a submission's tasks), each cheaply: the live tasks sorted by id once
 * (d_states_make), the states of those not in memory read from the store once and remembered.
 * A zeroed view (or one out of memory) looks each live task up with d_task. */
typedef struct d_states {
    dtask **live;
    size_t nlive;
    uint64_t *ids; /* states read from the store, open addressing (0: an empty slot) */
    dstate *states;
    size_t cap, n;
} d_states;
void d_states_make(const daemon_state *d, d_states *v);
void d_states_free(d_states *v);
/* The live task with this id, or NULL. */
dtask *d_states_live(daemon_state *d, const d_states *v, uint64_t id);
/* Task id's state, live or stored: DS_COUNT when there is no such task; -1 when the store
 * cannot say. */
int d_states_get(daemon_state *d, d_states *v, uint64_t id, dstate *s);

/* What a `queue` request asks for (docs/protocol.md). */
#define QUEUE_PAGE_MAX 1000 /* tasks in one reply of a listing in id order */
typedef struct queue_query {
    bool all;          /* every task, in id order, a page at a time; else the live ones */
    const char *state; /* this state only (an ended one implies all) */
    const char *user;  /* this submitter only */
    int limit;         /* at most this many (0: all live ones, or a page) */
    uint64_t after;    /* in id order: ids above this only (the last reply's "next") */
} queue_query;
/* The reply to a `queue` request: {"ok", "tasks": [...], "next": ID or null}; NULL with err
 * on a database error. */
json_t *d_queue_json(daemon_state *d, const queue_query *q, carma_err *err);
/* A page of the tasks f selects (in id order, at most `limit`, never over QUEUE_PAGE_MAX),
 * each as fn makes it: {"ok", "tasks": [...], "next": ID or null}; NULL with err. */
typedef json_t *(*d_task_json_fn)(daemon_state *d, const dtask *t, carma_err *err);
json_t *d_task_page(daemon_state *d, const store_filter *f, int limit, d_task_json_fn fn,
                    carma_err *err);

/* history.c: a task's attempts (every one, from the store; the current one as the daemon
 * follows it) and their sums. */
typedef struct task_sums {
    int n;             /* attempts */
    double first_start;/* the first attempt's start; 0: never started */
    double elapsed_s;  /* their run times, summed (a running one's up to now) */
    double gpu_s;      /* run time x GPUs, summed */
    int64_t peak_mib;  /* the largest peak; -1 unknown */
} task_sums;
/* The sums, and the attempts as a JSON array in *list when list is not NULL. -1 with err on
 * a database error. */
int d_task_attempts(daemon_state *d, const dtask *t, task_sums *sums, json_t **list,
                    carma_err *err);
/* What `show` shows: d_task_json's detail, the sums and the attempt list; NULL with err. */
json_t *d_task_show_json(daemon_state *d, const dtask *t, carma_err *err);
/* What `history` shows of a task (docs/protocol.md); NULL with err. */
json_t *d_history_task_json(daemon_state *d, const dtask *t, carma_err *err);
/* A `history` request: ended tasks (all: every task) submitted or ended since `since`
 * (0: any), of this state and user, a page at a time as `queue --all`. */
typedef struct history_query {
    bool all;
    const char *state, *user;
    double since;
    int limit;
    uint64_t after;
} history_query;
json_t *d_history_json(daemon_state *d, const history_query *q, carma_err *err);

#endif
