/* monitor.c — the daemon's sampler: each tick reads every GPU through the backend, pushes the
 * activity into the core's rolling window, rebuilds the GPU views the core places with, and
 * follows each running task's processes (its tree read from /proc, matched against the GPUs'
 * process lists, the same for every backend): a process seen on one of its GPUs moves that GPU
 * from LAUNCHING to GRACE, and the memory its processes hold gives the attempt's peak. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/journal.h"
#include "daemon/tasks.h"
#include "gpu/dcgm.h"
#include "gpu/fakegpu_state.h"
#include "gpu/nvml_backend.h"
#include "gpu/print.h"
#include "gpu/procs.h"

int d_monitor_check(const daemon_state *d, carma_err *err)
{
    if (gpu_backend_check(d->opts->backend, err))
        return -1;
    if (strcmp(d->opts->backend, "sim"))
        return 0;
    if (fakegpu_check_spec(d->opts->fakegpu_spec, err))
        return carma_err_prefix(err, "GPU backend sim");
    return 0;
}

int d_monitor_open(daemon_state *d, carma_err *err)
{
    if (d_monitor_check(d, err))
        return -1;
    d->ops = gpu_backend_find(d->opts->backend);
    /* DCGM (the nvml backend's, for GPUs without GPM) logs what happens after it opened: a
     * move from its embedded engine to a host engine started later */
    dcgm_set_log(d->opts->log);
    char arg[4400];
    const char *argp = NULL;
    if (!strcmp(d->ops->name, "sim")) {
        snprintf(d->fakegpu_state_path, sizeof d->fakegpu_state_path, "%s/sim-gpus",
                 d->opts->state_dir);
        snprintf(arg, sizeof arg, "%s@%s", d->opts->fakegpu_spec, d->fakegpu_state_path);
        argp = arg;
    }
    if (d->ops->open(&d->backend, argp, err))
        return carma_err_prefix(err, "GPU backend %s", d->ops->name);
    d->ngpus = d->ops->count(d->backend);
    /* Inside a job allocation, say which of the node's GPUs this daemon took (and which not). */
    if (d->ops == &gpu_backend_nvml && *nvml_backend_visible_note(d->backend))
        dlog(d, "GPUs from the allocation: %s", nvml_backend_visible_note(d->backend));
    /* The GPUs in MIG mode the backend left out: once each, here, as it decides once. */
    int nmig;
    const nvml_mig_gpu *mig = d_left_out(d, &nmig);
    for (int i = 0; i < nmig; i++)
        dlog(d, "NVML GPU %u (%s) has MIG enabled: carma schedules whole GPUs, so it places "
                "nothing there", mig[i].nvml_index, *mig[i].uuid ? mig[i].uuid : "UUID unknown");
    if (d->ngpus < 1 && nmig > 0)
        return carma_err_set(err, "GPU backend %s: all %d GPU(s) have MIG enabled and carma "
                                  "schedules whole GPUs: no GPU is left to place tasks on "
                                  "(`nvidia-smi -i N -mig 0` turns MIG off on GPU N)",
                             d->ops->name, nmig);
    if (d->ngpus < 1)
        return carma_err_set(err, "GPU backend %s found no GPU", d->ops->name);
    d->readings = calloc((size_t)d->ngpus, sizeof *d->readings);
    d->windows = calloc((size_t)d->ngpus, sizeof *d->windows);
    d->views = calloc((size_t)d->ngpus, sizeof *d->views);
    d->unnamed = calloc((size_t)d->ngpus, sizeof *d->unnamed);
    d->mig_late = calloc((size_t)d->ngpus, sizeof *d->mig_late);
    if (!d->readings || !d->windows || !d->views || !d->unnamed || !d->mig_late)
        return carma_err_set(err, "out of memory");
    for (int g = 0; g < d->ngpus; g++) {
        if (window_init(&d->windows[g], d->cfg.sched.window, err))
            return -1;
        d->views[g] = (gpu_view){0, 0, false, NAN, NAN, NAN, false};
    }
    return 0;
}

void d_monitor_close(daemon_state *d)
{
    if (d->windows)
        for (int g = 0; g < d->ngpus; g++)
            window_free(&d->windows[g]);
    free(d->windows);
    free(d->readings);
    free(d->views);
    free(d->unnamed);
    free(d->mig_late);
    if (d->backend)
        d->ops->close(d->backend);
    dcgm_set_log(NULL);
}

static int task_gpu_pos(const dtask *t, int gpu)
{
    for (int k = 0; k < t->att.ngpus; k++)
        if (t->att.gpus[k] == gpu)
            return k;
    return -1;
}

#define PEAK_SAVE_STEP_MIB 64

/* One task's processes on the GPUs of this sample. */
static void track_task(daemon_state *d, dtask *t, const task_gpu_usage *u, double now)
{
    for (int i = 0; i < u->ngpus; i++) {
        int k = task_gpu_pos(t, u->gpus[i]);
        if (k < 0)
            continue; /* not one of its GPUs (it chose its own device): not counted */
        if (!t->att.seen[k]) {
            t->att.seen[k] = true;
            sched_process_seen(d->core, &t->st, u->gpus[i], now);
        }
        if (t->att.peak_lost)
            continue;
        if (!u->used_known[i]) {
            /* Under MPS, or on drivers that do not report it, a process's memory can be
             * unknown; the GPU's own total mixes in its neighbours, so no peak is kept. */
            t->att.peak_lost = true;
            t->att.peak_mib = -1;
            dlog(d, "task %llu: GPU %d does not report its processes' memory; no peak recorded",
                 (unsigned long long)t->st.id, u->gpus[i]);
            continue;
        }
        if ((int64_t)u->used_mib[i] > t->att.peak_mib)
            t->att.peak_mib = (int64_t)u->used_mib[i];
    }
    /* Stored as it grows (by 64 MiB at least, so a slow climb costs few writes): a task that
     * ends while the daemon is away keeps the peak seen before. */
    if (t->att.peak_mib >= 0 && t->att.peak_mib >= t->att.peak_saved_mib + PEAK_SAVE_STEP_MIB &&
        d_save_attempt(d, t, false))
        t->att.peak_saved_mib = t->att.peak_mib;
}

/* Whether the task still has its GPUs to itself (no other task placed there, no process there
 * but its own and MPS servers), and while it does, their mean activity in this sample: its
 * solo profile once it ends done (reap.c). */
static void track_solo(daemon_state *d, dtask *t, const pid_set *pids, const proc_table *live)
{
    double smact = 0, drama = 0, util = 0;
    for (int k = 0; k < t->att.ngpus && !t->att.not_solo; k++) {
        int g = t->att.gpus[k];
        const gpu_reading *r = &d->readings[g];
        t->att.not_solo = sched_gpu_ledger(d->core, g).ntasks > 1;
        /* only GPUs whose processes were looked up have a table to tell the exited by */
        if (!t->att.not_solo &&
            !gpu_reading_only(r, pids, g < PROC_MAX_GPUS ? live : NULL, PROC_ROOT)) {
            /* unlike another task placed there, nothing else in the log says so */
            t->att.not_solo = true;
            dlog(d, "task %llu: GPU %d holds %s besides its own; no solo run recorded",
                 (unsigned long long)t->st.id, g,
                 r->procs_known ? "another process" : "processes carma cannot list");
        }
        smact += r->smact / t->att.ngpus;
        drama += r->drama / t->att.ngpus;
        util += r->util_gpu / t->att.ngpus;
    }
    if (t->att.not_solo)
        return;
    if (!isnan(smact) && !isnan(drama)) {
        t->att.act_smact += smact;
        t->att.act_drama += drama;
        t->att.act_n++;
    }
    if (!isnan(util)) {
        t->att.act_util += util;
        t->att.util_n++;
    }
}

static void track_tasks(daemon_state *d, double now)
{
    if (d->nrunning == 0)
        return;
    /* Only the processes on the GPUs, and their ancestors, can place a task on a GPU. */
    pid_t on_gpus[PROC_MAX_GPUS * GPU_MAX_PROCS];
    int n = 0;
    for (int g = 0; g < d->ngpus && g < PROC_MAX_GPUS; g++)
        for (int p = 0; d->readings[g].procs_known && p < d->readings[g].nprocs; p++)
            on_gpus[n++] = d->readings[g].procs[p].pid;
    carma_err err;
    proc_table pt;
    if (proc_table_scan_pids(PROC_ROOT, on_gpus, n, &pt, &err)) {
        dlog(d, "cannot follow task processes: %s", err.msg);
        return;
    }
    pid_set pids = {0};
    for (int i = 0; i < d->nrunning; i++) {
        dtask *t = d->running[i];
        if (t->att.launch_pending || t->att.pid <= 0)
            continue;
        if (proc_table_task_tree(&pt, t->att.pid, &pids, &err)) {
            dlog(d, "task %llu: %s", (unsigned long long)t->st.id, err.msg);
            continue;
        }
        task_gpu_usage u;
        proc_match_task(&pids, d->readings, d->ngpus, &u);
        track_task(d, t, &u, now);
        track_solo(d, t, &pids, &pt);
        d_mps_watch(d, t, &pids);
    }
    pid_set_free(&pids);
    proc_table_free(&pt);
}

/* A task is told its GPUs by UUID (CUDA_VISIBLE_DEVICES, env.c): on a GPU whose UUID the
 * backend cannot read (NVML retries it each sample) it would be told none and see no GPU. A
 * GPU found in MIG mode only then (its mode was unknown when the backend left such GPUs out:
 * lost at start) runs no task as a whole GPU. So such a GPU takes nothing (its view: busy,
 * memory unknown), and the log says so when that starts and ends. */
static void unusable_gpu_takes_nothing(daemon_state *d, int g)
{
    const gpu_reading *r = &d->readings[g];
    bool unnamed = r->uuid[0] == '\0', mig = r->mig == GPU_MIG_ON;
    if (unnamed || mig) {
        d->views[g].idle = false;
        d->views[g].free_known = false;
    }
    if (unnamed && !d->unnamed[g])
        dlog(d, "GPU %d: its UUID cannot be read, so nothing is placed on it until it can", g);
    else if (!unnamed && d->unnamed[g] && !mig) /* in MIG mode: said below */
        dlog(d, "GPU %d: its UUID is %s now; tasks may be placed on it", g, r->uuid);
    if (mig && !d->mig_late[g])
        dlog(d, "GPU %d (%s) is in MIG mode: carma schedules whole GPUs, so nothing is placed "
                "on it (a restart of the daemon leaves it out)", g, r->uuid);
    d->unnamed[g] = unnamed;
    d->mig_late[g] = mig;
}

void d_monitor_tick(daemon_state *d)
{
    carma_err err;
    double now = clock_mono_s();
    if (d->ops->sample(d->backend, d->readings, &err)) {
        dlog(d, "GPU sample failed: %s", err.msg);
        d->sample_ok = false;
        for (int g = 0; g < d->ngpus; g++) {
            d->views[g].free_known = false;
            window_push(&d->windows[g], (activity_sample){NAN, NAN, NAN});
        }
        return;
    }
    const sched_config *sc = &d->cfg.sched;
    for (int g = 0; g < d->ngpus; g++) {
        const gpu_reading *r = &d->readings[g];
        window_push(&d->windows[g], (activity_sample){r->smact, r->smocc, r->drama});
        activity_sample a = window_aggregate(&d->windows[g], sc->agg, sc->ewma_alpha);
        d->views[g] = (gpu_view){
            .total_mib = r->total_mib, .free_mib = r->free_mib, .free_known = r->mem_known,
            .smact = a.smact, .smocc = a.smocc, .drama = a.drama,
            .idle = gpu_reading_idle(r, PROC_ROOT), /* MPS servers do not make a GPU busy */
        };
        unusable_gpu_takes_nothing(d, g);
    }
    /* Before any placement too: an out-of-memory crash the restore finds (the first sample
     * comes before it) is judged against the GPUs' memory. While no GPU's is known, the
     * judgement waits (d_oom_waits): a task needing more than any GPU holds was queued for
     * recovery, at the head, where it never fit. */
    sched_see_gpus(d->core, d->views);
    d->have_sample = d->sample_ok = true;
    track_tasks(d, now);
    d->need_schedule = true;
}

static json_t *num_or_null(double v)
{
    return isnan(v) ? json_null() : json_real(v);
}

/* A running task as a GPU's holder: who, what, and the figure it was placed with. */
static json_t *held_json(const daemon_state *d, const dtask *t)
{
    json_t *j = json_object();
    dtask_mem m = d_task_mem(d, t);
    json_object_set_new(j, "id", json_integer((json_int_t)t->st.id));
    json_object_set_new(j, "user", json_string(t->user));
    json_object_set_new(j, "name", json_string(t->sub.name));
    json_object_set_new(j, "mem_mib", m.from != DMEM_NONE ? json_integer((json_int_t)m.mib)
                                                          : json_null());
    json_object_set_new(j, "mem_source", m.from != DMEM_NONE ? json_string(d_task_mem_name(m))
                                                             : json_null());
    json_object_set_new(j, "peak_mib", t->att.peak_mib >= 0
                                           ? json_integer((json_int_t)t->att.peak_mib)
                                           : json_null());
    return j;
}

const nvml_mig_gpu *d_left_out(const daemon_state *d, int *n)
{
    *n = 0;
    return d->ops == &gpu_backend_nvml ? nvml_backend_mig_left_out(d->backend, n) : NULL;
}

json_t *d_left_out_json(const daemon_state *d)
{
    json_t *out = json_array();
    int n;
    const nvml_mig_gpu *mig = d_left_out(d, &n);
    for (int i = 0; out && i < n; i++) {
        json_array_append_new(out, json_pack("{sIsoss}", "nvml_index",
                                             (json_int_t)mig[i].nvml_index, "uuid",
                                             gpu_text_json(mig[i].uuid), "why", "MIG enabled"));
    }
    return out;
}

json_t *d_gpus_json(const daemon_state *d)
{
    json_t *arr = json_array();
    double now = clock_mono_s();
    for (int g = 0; g < d->ngpus; g++) {
        const gpu_reading *r = &d->readings[g];
        const gpu_view *v = &d->views[g];
        json_t *j = json_object();
        json_object_set_new(j, "index", json_integer(g));
        json_object_set_new(j, "minor", r->minor >= 0 ? json_integer(r->minor) : json_null());
        json_object_set_new(j, "uuid", gpu_text_json(r->uuid));
        json_object_set_new(j, "name", gpu_text_json(r->name));
        json_object_set_new(j, "mem_used_mib", r->mem_known ? json_integer((json_int_t)r->used_mib)
                                                            : json_null());
        json_object_set_new(j, "mem_total_mib", r->mem_known
                                                    ? json_integer((json_int_t)r->total_mib)
                                                    : json_null());
        json_object_set_new(j, "smact", num_or_null(v->smact));
        json_object_set_new(j, "smocc", num_or_null(v->smocc));
        json_object_set_new(j, "drama", num_or_null(v->drama));
        json_object_set_new(j, "activity_source", json_string(metric_source_name(r->src_activity)));
        json_object_set_new(j, "util_gpu", num_or_null(r->util_gpu));
        json_object_set_new(j, "power_w", num_or_null(r->power_w));
        json_object_set_new(j, "power_source", json_string(metric_source_name(r->src_power)));
        json_t *tasks = json_array(), *holds = json_array();
        for (int i = 0; i < d->nrunning; i++) {
            const dtask *t = d->running[i];
            for (int k = 0; k < t->att.ngpus; k++)
                if (t->att.gpus[k] == g) {
                    json_array_append_new(tasks, json_integer((json_int_t)t->st.id));
                    json_array_append_new(holds, held_json(d, t));
                }
        }
        json_object_set_new(j, "tasks", tasks);
        json_object_set_new(j, "holds", holds);
        /* the policy's ledger: what the tasks placed here were placed with */
        sched_gpu_load load = sched_gpu_ledger(d->core, g);
        bool by_commit = sched_get_config(d->core)->policy == POLICY_CARMA;
        json_object_set_new(j, "committed_mib", by_commit && load.ntasks
                                                    ? json_integer((json_int_t)load.commit_mib)
                                                    : json_null());
        json_object_set_new(j, "committed_unknown", json_integer(by_commit ? load.commit_unknown
                                                                           : 0));
        /* null where the policy places without one (carma's ledger): a state shown there
         * would read as a wait that does not happen */
        gpu_grace gr = sched_gpu_grace(d->core, g);
        bool applies = sched_grace_applies(d->core);
        static const char *const names[] = {"available", "launching", "grace"};
        json_object_set_new(j, "grace", applies ? json_string(names[gr.state]) : json_null());
        double left = gr.state == GPU_GRACE ? d->cfg.sched.grace_s - (now - gr.seen_at) : 0;
        json_object_set_new(j, "grace_left_s", applies && gr.state == GPU_GRACE
                                                   ? json_real(left > 0 ? left : 0)
                                                   : json_null());
        json_array_append_new(arr, j);
    }
    return arr;
}
