/* tasks.c — the daemon's tasks: submission, scheduling through the core, launch through
 * supervisors, reaping and exit classification, cancel, and restore after a restart. Every
 * change is written to the store (in the loop iteration's transaction) before it is acted
 * on; launches and signals happen only after the commit. */
#include <errno.h>
#include <math.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/daemon_int.h"
#include "daemon/supervisor.h"
#include "sched/policy.h"
#include "util/strutil.h"

static const char *const state_names[] = {"queued", "running", "done", "failed", "cancelled"};

const char *dstate_name(dstate s)
{
    return state_names[s];
}

static int dstate_from(const char *name, dstate *out)
{
    for (int i = 0; i < 5; i++)
        if (!strcmp(name, state_names[i])) {
            *out = (dstate)i;
            return 0;
        }
    return -1;
}

dtask *d_task(daemon_state *d, uint64_t id)
{
    return id < d->ntasks_cap ? d->tasks[id] : NULL;
}

int d_put_task(daemon_state *d, dtask *t, carma_err *err)
{
    uint64_t id = t->st.id;
    if (id >= d->ntasks_cap) {
        uint64_t cap = d->ntasks_cap ? d->ntasks_cap : 1024;
        while (cap <= id)
            cap *= 2;
        dtask **n = realloc(d->tasks, cap * sizeof *n);
        if (!n)
            return carma_err_set(err, "out of memory");
        memset(n + d->ntasks_cap, 0, (cap - d->ntasks_cap) * sizeof *n);
        d->tasks = n;
        d->ntasks_cap = cap;
    }
    d->tasks[id] = t;
    return 0;
}

void d_free_task(dtask *t)
{
    if (!t)
        return;
    submission_free(&t->sub);
    free(t->user);
    free(t->att_dir);
    free(t);
}

static dtask *new_task(void)
{
    dtask *t = calloc(1, sizeof *t);
    if (t) {
        submission_init(&t->sub);
        t->running_idx = -1;
        t->history_mib = -1;
        t->peak_mib = -1;
    }
    return t;
}

/* The core's view of the task: the submitted figures, and, when no measured figure was
 * submitted, the peak measured on an earlier identical run. */
static void fill_sched_task(dtask *t)
{
    t->st.ngpus = t->sub.ngpus;
    t->st.mem = t->sub.mem;
    uint64_t mib;
    if (t->history_mib >= 0 && !mem_figures_get(&t->st.mem, MEM_ORACLE, &mib))
        mem_figures_set(&t->st.mem, MEM_ORACLE, (uint64_t)t->history_mib);
    t->st.max_retries = t->sub.max_retries;
    t->st.profiled_util = NAN; /* no solo profile: horus and lucid place it on idle GPUs only */
    t->st.lucid_class = LUCID_UNKNOWN;
}

static void running_add(daemon_state *d, dtask *t)
{
    if (d->nrunning == d->running_cap) {
        int cap = d->running_cap ? d->running_cap * 2 : 64;
        dtask **n = realloc(d->running, (size_t)cap * sizeof *n);
        if (!n) {
            carma_err e;
            carma_err_set(&e, "out of memory");
            d_fail(d, &e);
            return;
        }
        d->running = n;
        d->running_cap = cap;
    }
    t->running_idx = d->nrunning;
    d->running[d->nrunning++] = t;
}

static void running_remove(daemon_state *d, dtask *t)
{
    int i = t->running_idx;
    if (i < 0)
        return;
    d->running[i] = d->running[--d->nrunning];
    d->running[i]->running_idx = i;
    t->running_idx = -1;
}

bool d_save_task(daemon_state *d, dtask *t)
{
    if (!d_txn(d))
        return false;
    store_task_row row = {
        .id = t->st.id, .state = dstate_name(t->state), .recovery = t->recovery,
        .queue_seq = t->queue_seq, .attempts = t->st.attempts, .ended_at = t->ended_at,
        .outcome = t->outcome,
    };
    carma_err err;
    if (store_update_task(d->db, &row, &err)) {
        d_fail(d, &err);
        return false;
    }
    return true;
}

bool d_event(daemon_state *d, const dtask *t, const char *kind, const char *detail)
{
    carma_err err;
    if (!d_txn(d))
        return false;
    if (store_event(d->db, t->st.id, daemon_wall_now(), kind, detail, &err)) {
        d_fail(d, &err);
        return false;
    }
    return true;
}

static void gpus_text(const int *gpus, int n, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%d", i ? "," : "", gpus[i]);
}

static bool save_attempt(daemon_state *d, const dtask *t, const char *state, bool insert)
{
    char gpus[128];
    gpus_text(t->att_gpus, t->att_ngpus, gpus, sizeof gpus);
    store_attempt_row a = {
        .task_id = t->st.id, .n = t->att_n, .gpus = gpus, .dir = t->att_dir, .state = state,
        .task_pid = t->task_pid, .started_at = t->att_started, .ended_at = t->att_ended,
        .exited = t->att_exit.exited, .exit_code = t->att_exit.exit_code,
        .term_signal = t->att_exit.term_signal, .outcome = t->outcome, .tail = "",
        .peak_mib = t->peak_mib,
    };
    carma_err err;
    if (!d_txn(d))
        return false;
    if ((insert ? store_insert_attempt : store_update_attempt)(d->db, &a, &err)) {
        d_fail(d, &err);
        return false;
    }
    return true;
}

/* ---- submission --------------------------------------------------------------------------- */

int d_submit(daemon_state *d, const client *c, submission *sub, uint64_t *id, carma_err *err)
{
    if (sub->ngpus > d->ngpus)
        return carma_err_set(err, "task asks for %d GPUs but this server has %d", sub->ngpus,
                             d->ngpus);
    struct passwd *pw = getpwuid(c->uid);
    char uname[32];
    snprintf(uname, sizeof uname, "%u", (unsigned)c->uid);
    json_t *spec = submission_to_json(sub);
    char *spec_text = spec ? json_dumps(spec, JSON_COMPACT) : NULL;
    json_decref(spec);
    dtask *t = new_task();
    if (!spec_text || !t || !(t->user = str_dup(pw ? pw->pw_name : uname))) {
        free(spec_text);
        d_free_task(t);
        return carma_err_set(err, "out of memory");
    }
    t->sub = *sub;
    submission_init(sub); /* the task owns it now */
    t->uid = c->uid;
    t->gid = c->gid;
    t->state = DS_QUEUED;
    t->submitted_at = daemon_wall_now();
    uint64_t mib;
    int rc = d_txn(d) ? 0 : carma_err_set(err, "%s", d->fatal.msg);
    if (rc == 0 && !mem_figures_get(&t->sub.mem, MEM_ORACLE, &mib)) {
        int found = store_history_get(d->db, t->sub.command, t->sub.batch, t->sub.ngpus, &mib,
                                      err);
        if (found > 0)
            t->history_mib = (int64_t)mib;
        rc = found < 0 ? -1 : 0;
    }
    fill_sched_task(t);
    store_task_row row = {
        .uid = t->uid, .gid = t->gid, .user = t->user, .spec = spec_text, .state = "queued",
        .submitted_at = t->submitted_at, .outcome = "", .history_mib = t->history_mib,
    };
    if (rc == 0)
        rc = store_insert_task(d->db, &row, err);
    free(spec_text);
    if (rc) {
        d_free_task(t);
        d_fail(d, err);
        return -1;
    }
    t->st.id = row.id;
    t->queue_seq = row.queue_seq;
    if (d_put_task(d, t, err) || sched_submit(d->core, &t->st, err)) {
        d->tasks[row.id] = NULL;
        d_free_task(t);
        d_fail(d, err);
        return -1;
    }
    char detail[96] = "";
    if (t->history_mib >= 0)
        snprintf(detail, sizeof detail, "memory figure %lld MiB from an earlier identical run",
                 (long long)t->history_mib);
    d_event(d, t, "submitted", detail);
    d->need_schedule = true;
    *id = row.id;
    return 0;
}

/* ---- ending an attempt ------------------------------------------------------------------- */

static void finish_attempt(daemon_state *d, dtask *t, task_outcome outcome, const char *why)
{
    snprintf(t->outcome, sizeof t->outcome, "%s", task_outcome_name(outcome));
    t->att_ended = daemon_wall_now();
    running_remove(d, t);
    sched_end end = sched_task_ended(d->core, &t->st, outcome, daemon_mono_now());
    if (end == SCHED_END_RETRY) {
        t->state = DS_QUEUED;
        t->recovery = true;
        t->queue_seq = store_next_seq(d->db);
    } else {
        t->state = outcome == TASK_DONE        ? DS_DONE
                   : outcome == TASK_CANCELLED ? DS_CANCELLED
                                               : DS_FAILED;
        t->recovery = false;
        t->ended_at = t->att_ended;
    }
    save_attempt(d, t, "ended", false);
    d_save_task(d, t);
    if (outcome == TASK_DONE && t->peak_mib >= 0 && d_txn(d)) {
        carma_err err;
        if (store_history_put(d->db, t->sub.command, t->sub.batch, t->sub.ngpus,
                              (uint64_t)t->peak_mib, daemon_wall_now(), &err))
            d_fail(d, &err);
    }
    char detail[160];
    snprintf(detail, sizeof detail, "attempt %d: %s%s%s", t->att_n, t->outcome, why ? ", " : "",
             why ? why : "");
    d_event(d, t, end == SCHED_END_RETRY ? "recovery" : "ended", detail);
    dlog(d, "task %llu %s (%s)", (unsigned long long)t->st.id,
         end == SCHED_END_RETRY ? "to the recovery queue" : dstate_name(t->state), detail);
    d->need_schedule = true;
}

static void attempt_result(daemon_state *d, dtask *t, const sup_result *r)
{
    t->att_exit = r->status;
    task_outcome o = oom_classify(r->status, r->cancelled || t->cancel_requested, r->tail,
                                  r->tail_len);
    char why[96];
    if (r->status.exited)
        snprintf(why, sizeof why, "exit %d", r->status.exit_code);
    else
        snprintf(why, sizeof why, "signal %d", r->status.term_signal);
    if (o == TASK_OOM) {
        const char *m = oom_marker_in(r->tail, r->tail_len);
        snprintf(why + strlen(why), sizeof why - strlen(why), ", '%s' in stderr", m);
    }
    finish_attempt(d, t, o, why);
}

/* Looks at every running attempt's supervisor. */
void d_reap(daemon_state *d)
{
    for (int i = d->nrunning - 1; i >= 0 && !d->failed; i--) {
        dtask *t = d->running[i];
        if (t->launch_pending)
            continue;
        pid_t task_pid = 0;
        sup_result *r = malloc(sizeof *r);
        if (!r)
            return;
        sup_status s = supervisor_poll(t->att_dir, &task_pid, r);
        if (task_pid > 0)
            t->task_pid = task_pid;
        if (s == SUP_ENDED)
            attempt_result(d, t, r);
        else if (s == SUP_LOST || s == SUP_NEVER_STARTED) {
            if (s == SUP_LOST)
                supervisor_kill_leftovers(t->task_pid);
            finish_attempt(d, t, t->cancel_requested ? TASK_CANCELLED : TASK_FAILED,
                           "its supervisor died without a result");
        } else if (t->cancel_requested && !t->cancel_sent) {
            carma_err err;
            d_mps_terminate(d, t);
            if (supervisor_cancel(t->att_dir, &err) == 0)
                t->cancel_sent = true;
        }
        free(r);
    }
}

/* ---- launching ---------------------------------------------------------------------------- */

typedef struct env_list {
    char **v;
    size_t n, cap;
} env_list;

static void env_set(env_list *e, const char *kv)
{
    size_t klen = (size_t)(strchr(kv, '=') - kv) + 1;
    for (size_t i = 0; i < e->n; i++)
        if (!strncmp(e->v[i], kv, klen)) {
            free(e->v[i]);
            e->v[i] = str_dup(kv);
            return;
        }
    if (e->n + 2 > e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 32;
        char **v = realloc(e->v, cap * sizeof *v);
        if (!v)
            return;
        e->v = v;
        e->cap = cap;
    }
    e->v[e->n++] = str_dup(kv);
    e->v[e->n] = NULL;
}

static void env_setf(env_list *e, const char *key, const char *value)
{
    size_t n = strlen(key) + strlen(value) + 2;
    char *kv = malloc(n);
    if (!kv)
        return;
    snprintf(kv, n, "%s=%s", key, value);
    env_set(e, kv);
    free(kv);
}

static void env_free(env_list *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->v[i]);
    free(e->v);
}

static void build_env(daemon_state *d, const dtask *t, env_list *e)
{
    struct passwd *pw = getpwuid(t->uid);
    env_setf(e, "PATH", "/usr/local/bin:/usr/bin:/bin");
    env_setf(e, "USER", t->user);
    env_setf(e, "LOGNAME", t->user);
    env_setf(e, "HOME", pw && pw->pw_dir ? pw->pw_dir : "/");
    for (size_t i = 0; i < t->sub.nenv; i++)
        env_set(e, t->sub.env[i]);
    char uuids[SCHED_MAX_TASK_GPUS * 100] = "", num[32];
    size_t o = 0;
    for (int i = 0; i < t->att_ngpus; i++)
        o += (size_t)snprintf(uuids + o, sizeof uuids - o, "%s%s", i ? "," : "",
                              d->readings[t->att_gpus[i]].uuid);
    env_setf(e, "CUDA_VISIBLE_DEVICES", uuids);
    env_setf(e, "CUDA_DEVICE_ORDER", "PCI_BUS_ID");
    snprintf(num, sizeof num, "%llu", (unsigned long long)t->st.id);
    env_setf(e, "CARMA_TASK_ID", num);
    snprintf(num, sizeof num, "%d", t->att_n);
    env_setf(e, "CARMA_ATTEMPT", num);
    if (d->sim_state[0])
        env_setf(e, "CARMA_SIM_STATE", d->sim_state);
    mps_env mps;
    carma_err err;
    if (d_mps_task_env(d, t, &mps, &err))
        dlog(d, "task %llu: no MPS limits: %s", (unsigned long long)t->st.id, err.msg);
    for (int i = 0; i < mps.n; i++)
        env_set(e, mps.vars[i]);
}

static void launch_one(daemon_state *d, dtask *t)
{
    env_list env = {0};
    build_env(d, t, &env);
    gid_t groups[256];
    int ngroups = 256;
    bool switch_user = geteuid() == 0 && t->uid != 0;
    if (switch_user && getgrouplist(t->user, t->gid, groups, &ngroups) < 0) {
        groups[0] = t->gid;
        ngroups = 1;
    }
    launch_spec spec = {
        .dir = t->att_dir, .command = t->sub.command, .cwd = t->sub.cwd, .env = env.v,
        .switch_user = switch_user, .uid = t->uid, .gid = t->gid, .groups = groups,
        .ngroups = ngroups, .kill_grace_s = d->cfg.daemon.kill_grace_s,
    };
    pid_t sup = 0;
    carma_err err;
    t->launch_pending = false;
    if (supervisor_launch(&spec, &sup, &err)) {
        dlog(d, "task %llu: launch failed: %s", (unsigned long long)t->st.id, err.msg);
        finish_attempt(d, t, TASK_FAILED, "launch failed");
    } else {
        dlog(d, "task %llu attempt %d: supervisor %d started", (unsigned long long)t->st.id,
             t->att_n, (int)sup);
        save_attempt(d, t, "running", false);
    }
    env_free(&env);
}

/* Places what the core allows, writes the attempts, commits, then starts the supervisors. */
void d_schedule(daemon_state *d)
{
    if (!d->have_sample || d->failed)
        return;
    d->need_schedule = false;
    dtask *launched[256];
    int n = 0;
    sched_decision dec;
    double now = daemon_mono_now();
    while (n < 256 && sched_next(d->core, now, d->views, &dec)) {
        dtask *t = (dtask *)dec.task; /* st is the first member */
        t->state = DS_RUNNING;
        t->recovery = false;
        t->att_n = t->st.attempts;
        t->att_ngpus = dec.ngpus;
        memcpy(t->att_gpus, dec.gpus, sizeof dec.gpus);
        memset(t->seen, 0, sizeof t->seen);
        t->peak_mib = -1;
        t->peak_lost = false;
        t->att_collocated = dec.collocated;
        t->task_pid = 0;
        t->att_started = daemon_wall_now();
        t->att_ended = 0;
        t->att_exit = (exit_status){0};
        t->outcome[0] = '\0';
        t->cancel_sent = false;
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/attempts/%llu.%d", d->opts->state_dir,
                 (unsigned long long)t->st.id, t->att_n);
        free(t->att_dir);
        t->att_dir = str_dup(dir);
        t->launch_pending = true;
        running_add(d, t);
        save_attempt(d, t, "starting", true);
        d_save_task(d, t);
        char detail[320], gpus[128];
        gpus_text(dec.gpus, dec.ngpus, gpus, sizeof gpus);
        snprintf(detail, sizeof detail, "attempt %d on GPUs %s (%s%s%s)", t->att_n, gpus,
                 dec.rule == PLACE_EXCLUSIVE_FIRST ? "exclusive-first" : "policy",
                 dec.collocated ? ", collocated" : "", dec.from_recovery ? ", recovery" : "");
        d_event(d, t, "launch", detail);
        dlog(d, "task %llu: %s", (unsigned long long)t->st.id, detail);
        launched[n++] = t;
    }
    if (n == 0 || !d_commit(d))
        return;
    for (int i = 0; i < n; i++)
        launch_one(d, launched[i]);
    d_commit(d);
}

/* ---- cancel ------------------------------------------------------------------------------ */

int d_cancel(daemon_state *d, dtask *t, carma_err *err)
{
    if (t->state == DS_QUEUED) {
        sched_remove_queued(d->core, &t->st);
        t->state = DS_CANCELLED;
        t->recovery = false;
        t->ended_at = daemon_wall_now();
        snprintf(t->outcome, sizeof t->outcome, "cancelled");
        if (!d_save_task(d, t) || !d_event(d, t, "cancelled", "while queued"))
            return carma_err_set(err, "%s", d->fatal.msg);
        d->need_schedule = true;
        return 0;
    }
    if (t->state != DS_RUNNING)
        return carma_err_set(err, "task %llu is already %s", (unsigned long long)t->st.id,
                             dstate_name(t->state));
    if (t->cancel_requested)
        return 0;
    t->cancel_requested = true;
    if (!d_event(d, t, "cancel", "SIGTERM, then SIGKILL after the grace period"))
        return carma_err_set(err, "%s", d->fatal.msg);
    return 0; /* the signal goes out in d_reap, after the commit */
}

/* ---- what a task looks like to clients ---------------------------------------------------- */

/* The figure the configured policy places the task with; for policies that use none, the
 * measured figure, else the first estimate known. *source names where it came from: "oracle"
 * (submitted), "history" (measured on an earlier identical run), an estimator's name, or
 * "policy" (the fixed floor of the or-* policies). */
bool d_task_mem(const daemon_state *d, const dtask *t, uint64_t *mib, const char **source)
{
    const sched_config *cfg = sched_get_config(d->core);
    const policy_desc *p = policy_describe(cfg->policy);
    if (p && p->memory == PMEM_FIXED) {
        *mib = cfg->or_min_free_mib;
        *source = "policy";
        return true;
    }
    int want = p && p->memory == PMEM_ESTIMATE ? (int)cfg->estimator : (int)MEM_ORACLE;
    for (int k = -1; k < MEM_SOURCE_COUNT; k++) {
        mem_source src = (mem_source)(k < 0 ? want : k);
        if (!mem_figures_get(&t->st.mem, src, mib))
            continue;
        uint64_t submitted;
        *source = src == MEM_ORACLE && !mem_figures_get(&t->sub.mem, MEM_ORACLE, &submitted)
                      ? "history"
                      : proto_mem_source_name(src);
        return true;
    }
    return false;
}

json_t *d_task_json(const daemon_state *d, const dtask *t, bool detail)
{
    json_t *j = json_object();
    json_object_set_new(j, "id", json_integer((json_int_t)t->st.id));
    json_object_set_new(j, "name", json_string(t->sub.name));
    json_object_set_new(j, "user", json_string(t->user));
    json_object_set_new(j, "uid", json_integer(t->uid));
    json_object_set_new(j, "state", json_string(dstate_name(t->state)));
    json_object_set_new(j, "queue", t->state != DS_QUEUED ? json_null()
                                    : json_string(t->recovery ? "recovery" : "main"));
    json_object_set_new(j, "attempts", json_integer(t->st.attempts));
    json_object_set_new(j, "ngpus", json_integer(t->sub.ngpus));
    json_t *gpus = json_array();
    for (int i = 0; t->att_n > 0 && i < t->att_ngpus; i++)
        json_array_append_new(gpus, json_integer(t->att_gpus[i]));
    json_object_set_new(j, "gpus", gpus);
    uint64_t mib;
    const char *source = NULL;
    bool have = d_task_mem(d, t, &mib, &source);
    json_object_set_new(j, "mem_mib", have ? json_integer((json_int_t)mib) : json_null());
    json_object_set_new(j, "mem_source", have ? json_string(source) : json_null());
    json_object_set_new(j, "peak_mib", t->att_n > 0 && t->peak_mib >= 0
                                           ? json_integer((json_int_t)t->peak_mib)
                                           : json_null());
    json_object_set_new(j, "outcome", t->outcome[0] ? json_string(t->outcome) : json_null());
    json_object_set_new(j, "submitted_at", json_real(t->submitted_at));
    json_object_set_new(j, "ended_at", t->ended_at > 0 ? json_real(t->ended_at) : json_null());
    if (detail) {
        json_object_set_new(j, "command", json_string(t->sub.command));
        json_object_set_new(j, "cwd", json_string(t->sub.cwd));
        json_object_set_new(j, "max_retries", json_integer(t->sub.max_retries));
        json_t *spec = submission_to_json(&t->sub);
        json_object_set_new(j, "mem", json_incref(json_object_get(spec, "mem")));
        json_decref(spec);
        if (t->att_n > 0) {
            json_t *a = json_object();
            json_object_set_new(a, "n", json_integer(t->att_n));
            json_object_set_new(a, "dir", json_string(t->att_dir ? t->att_dir : ""));
            json_object_set_new(a, "pid", t->task_pid ? json_integer(t->task_pid) : json_null());
            json_object_set_new(a, "started_at", json_real(t->att_started));
            bool ended = t->att_ended > 0;
            json_object_set_new(a, "ended_at", ended ? json_real(t->att_ended) : json_null());
            json_object_set_new(a, "exit_code", ended && t->att_exit.exited
                                                    ? json_integer(t->att_exit.exit_code)
                                                    : json_null());
            json_object_set_new(a, "signal", ended && !t->att_exit.exited
                                                 ? json_integer(t->att_exit.term_signal)
                                                 : json_null());
            json_object_set_new(j, "last_attempt", a);
        }
    }
    return j;
}

/* ---- restore after a restart --------------------------------------------------------------- */

typedef struct restore_ctx {
    daemon_state *d;
    dtask **queued;
    size_t nqueued, cap;
    dtask **ended;  /* running at the crash, ended since: classified once the core is ready */
    sup_result **results;
    size_t nended, ecap;
} restore_ctx;

static int push(dtask ***v, size_t *n, size_t *cap, dtask *t)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        dtask **nv = realloc(*v, c * sizeof *nv);
        if (!nv)
            return -1;
        *v = nv;
        *cap = c;
    }
    (*v)[(*n)++] = t;
    return 0;
}

static int parse_gpus(const char *text, int *gpus, int max)
{
    int n = 0;
    for (const char *p = text; *p && n < max;) {
        char *end;
        long g = strtol(p, &end, 10);
        if (end == p)
            return -1;
        gpus[n++] = (int)g;
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

static int restore_row(void *ctx, const store_task_row *row, const store_attempt_row *a,
                       carma_err *err)
{
    restore_ctx *rc = ctx;
    daemon_state *d = rc->d;
    json_error_t jerr;
    json_t *spec = json_loads(row->spec, 0, &jerr);
    dtask *t = new_task();
    if (!t || !spec || submission_from_json(spec, &t->sub, err) || !(t->user = str_dup(row->user)) ||
        dstate_from(row->state, &t->state)) {
        json_decref(spec);
        d_free_task(t);
        return carma_err_prefix(err, "task %llu in the state database is unreadable",
                                (unsigned long long)row->id);
    }
    json_decref(spec);
    t->st.id = row->id;
    t->uid = row->uid;
    t->gid = row->gid;
    t->recovery = row->recovery;
    t->queue_seq = row->queue_seq;
    t->st.attempts = row->attempts;
    t->submitted_at = row->submitted_at;
    t->ended_at = row->ended_at;
    snprintf(t->outcome, sizeof t->outcome, "%s", row->outcome);
    t->history_mib = row->history_mib;
    fill_sched_task(t);
    if (a) {
        t->att_n = a->n;
        t->att_ngpus = parse_gpus(a->gpus, t->att_gpus, SCHED_MAX_TASK_GPUS);
        t->att_dir = str_dup(a->dir);
        t->task_pid = a->task_pid;
        t->att_started = a->started_at;
        t->att_ended = a->ended_at;
        t->att_exit = (exit_status){a->exited, a->exit_code, a->term_signal};
        t->peak_mib = a->peak_mib;
    }
    if (d_put_task(d, t, err)) {
        d_free_task(t);
        return -1;
    }
    if (t->state == DS_QUEUED)
        return push(&rc->queued, &rc->nqueued, &rc->cap, t) ? carma_err_set(err, "out of memory") : 0;
    if (t->state != DS_RUNNING)
        return 0;
    if (!a || t->att_ngpus != t->sub.ngpus)
        return carma_err_set(err, "task %llu is running without a valid attempt record",
                             (unsigned long long)t->st.id);
    pid_t task_pid = 0;
    sup_result *r = malloc(sizeof *r);
    if (!r)
        return carma_err_set(err, "out of memory");
    sup_status s = supervisor_poll(t->att_dir, &task_pid, r);
    if (task_pid > 0)
        t->task_pid = task_pid;
    if (s == SUP_NEVER_STARTED) {
        /* Written but never launched: back to its queue, the attempt does not count. */
        free(r);
        t->state = DS_QUEUED;
        t->st.attempts--;
        t->recovery = t->att_n > 1;
        dlog(d, "task %llu: attempt %d was never started; queued again",
             (unsigned long long)t->st.id, t->att_n);
        if (!d_txn(d) || store_delete_attempt(d->db, t->st.id, t->att_n, err) ||
            !d_save_task(d, t) ||
            !d_event(d, t, "requeued", "attempt never started before a daemon restart"))
            return d->failed ? carma_err_set(err, "%s", d->fatal.msg) : -1;
        t->att_n--;
        return push(&rc->queued, &rc->nqueued, &rc->cap, t) ? carma_err_set(err, "out of memory") : 0;
    }
    if (sched_restore_running(d->core, &t->st, t->att_gpus, t->att_ngpus, GPU_LAUNCHING, 0, err)) {
        free(r);
        return -1;
    }
    running_add(d, t);
    if (s == SUP_RUNNING) {
        free(r);
        dlog(d, "task %llu: attempt %d still running; adopted", (unsigned long long)t->st.id,
             t->att_n);
        return 0;
    }
    dlog(d, "task %llu: attempt %d %s while the daemon was away", (unsigned long long)t->st.id,
         t->att_n, s == SUP_LOST ? "lost its supervisor" : "ended");
    if (s == SUP_LOST)
        supervisor_kill_leftovers(t->task_pid);
    if (push(&rc->ended, &rc->nended, &rc->ecap, t)) {
        free(r);
        return carma_err_set(err, "out of memory");
    }
    sup_result **nr = realloc(rc->results, rc->ecap * sizeof *nr);
    if (!nr) {
        free(r);
        return carma_err_set(err, "out of memory");
    }
    rc->results = nr;
    nr[rc->nended - 1] = s == SUP_LOST ? (free(r), NULL) : r;
    return 0;
}

static int by_seq(const void *a, const void *b)
{
    const dtask *x = *(dtask *const *)a, *y = *(dtask *const *)b;
    return (x->queue_seq > y->queue_seq) - (x->queue_seq < y->queue_seq);
}

int d_restore(daemon_state *d, carma_err *err)
{
    restore_ctx rc = {.d = d};
    int r = store_load(d->db, restore_row, &rc, err);
    if (r == 0) {
        if (rc.nqueued > 1)
            qsort(rc.queued, rc.nqueued, sizeof *rc.queued, by_seq);
        for (size_t i = 0; i < rc.nqueued && r == 0; i++) {
            dtask *t = rc.queued[i];
            r = (t->recovery ? sched_submit_recovery : sched_submit)(d->core, &t->st, err);
        }
    }
    for (size_t i = 0; i < rc.nended; i++) {
        if (r == 0 && rc.results[i])
            attempt_result(d, rc.ended[i], rc.results[i]);
        else if (r == 0)
            finish_attempt(d, rc.ended[i], TASK_FAILED, "its supervisor died without a result");
        free(rc.results[i]);
    }
    free(rc.queued);
    free(rc.ended);
    free(rc.results);
    if (r == 0 && d->failed)
        r = carma_err_set(err, "%s", d->fatal.msg);
    if (r == 0 && d->in_txn && !d_commit(d))
        r = carma_err_set(err, "%s", d->fatal.msg);
    d->need_schedule = true;
    return r;
}
