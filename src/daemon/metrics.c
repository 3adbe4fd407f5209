/* metrics.c — what the daemon tells Prometheus (docs/metrics.md): each GPU's last sample under
 * dcgm-exporter's names and units where they mean the same (DCGM_FI_DEV_FB_USED ...), the
 * tasks by state, and the counters kept since the daemon started (placements, collocated
 * placements, out-of-memory crashes and recoveries, ended tasks, queue waits). A GPU metric
 * whose sample is unknown is left out for that GPU, never written as 0. No user-controlled
 * text (task names, commands, users) goes into a label. The exposition is served by http.c
 * on `metrics_listen` from the daemon's own loop. */
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/http.h"
#include "daemon/journal.h"
#include "daemon/registry.h"
#include "util/clock.h"
#include "util/promtext.h"

_Static_assert(D_METRICS_MAX_FDS == 1 + HTTP_MAX_CONNS, "the listener and every connection");

/* The queue-wait histogram's upper bounds, seconds: a second to a day. */
static const double wait_bounds[D_WAIT_BOUNDS] = {1,    5,    15,    60,    300,
                                                  900,  3600, 14400, 43200, 86400};

/* ---- the counters ---- */

void d_metrics_placed(daemon_state *d, bool collocated, double wait_s)
{
    d_counters *c = &d->counters;
    c->placements++;
    c->collocated += collocated;
    if (!(wait_s > 0)) /* the wall clock stepped back (or the same instant): no wait */
        wait_s = 0;
    int b = 0;
    while (b < D_WAIT_BOUNDS && wait_s > wait_bounds[b])
        b++;
    c->wait[b]++;
    c->wait_sum += wait_s;
}

void d_metrics_attempt_ended(daemon_state *d, dtask *t, task_outcome outcome)
{
    if (outcome == TASK_OOM) {
        d->counters.oom_crashes++;
        t->oom_seen = true;
    } else if (outcome == TASK_DONE && t->oom_seen) {
        d->counters.oom_recoveries++;
    }
}

void d_metrics_task_ended(daemon_state *d, const dtask *t)
{
    if (t->state != DS_QUEUED && t->state != DS_RUNNING && (unsigned)t->state < DS_COUNT)
        d->counters.ended[t->state]++;
}

/* ---- the exposition ---- */

typedef struct gpu_family {
    const char *name, *type, *help;
    double (*value)(const daemon_state *d, int g);
} gpu_family;

static double fb_used(const daemon_state *d, int g)
{
    return d->readings[g].mem_known ? (double)d->readings[g].used_mib : NAN;
}
static double fb_free(const daemon_state *d, int g)
{
    return d->readings[g].mem_known ? (double)d->readings[g].free_mib : NAN;
}
static double fb_total(const daemon_state *d, int g)
{
    return d->readings[g].mem_known ? (double)d->readings[g].total_mib : NAN;
}
static double sm_active(const daemon_state *d, int g)
{
    return d->readings[g].smact;
}
static double sm_occupancy(const daemon_state *d, int g)
{
    return d->readings[g].smocc;
}
static double dram_active(const daemon_state *d, int g)
{
    return d->readings[g].drama;
}
static double power_w(const daemon_state *d, int g)
{
    return d->readings[g].power_w;
}
static double energy_mj(const daemon_state *d, int g)
{
    return d->readings[g].energy_mj;
}
static double tasks_on(const daemon_state *d, int g)
{
    int n = 0;
    for (int i = 0; i < d->nrunning; i++)
        for (int k = 0; k < d->running[i]->att.ngpus; k++)
            n += d->running[i]->att.gpus[k] == g;
    return n;
}

/* The backend's units are the exporter's (gpu/backend.h: MiB, 0..1, W, mJ): written as read. */
static const gpu_family gpu_families[] = {
    {"DCGM_FI_DEV_FB_USED", "gauge", "GPU memory used, MiB (as dcgm-exporter).", fb_used},
    {"DCGM_FI_DEV_FB_FREE", "gauge", "GPU memory free, MiB (as dcgm-exporter).", fb_free},
    {"carma_gpu_memory_total_mib", "gauge", "GPU memory in all, MiB.", fb_total},
    {"DCGM_FI_PROF_SM_ACTIVE", "gauge",
     "Fraction of time at least one warp was active on an SM, 0..1, last sample "
     "(as dcgm-exporter).", sm_active},
    {"DCGM_FI_PROF_SM_OCCUPANCY", "gauge",
     "Warps resident on the SMs as a fraction of the maximum, 0..1, last sample "
     "(as dcgm-exporter).", sm_occupancy},
    {"DCGM_FI_PROF_DRAM_ACTIVE", "gauge",
     "Fraction of cycles the device memory interface was active, 0..1, last sample "
     "(as dcgm-exporter).", dram_active},
    {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw, W (as dcgm-exporter).", power_w},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "gauge",
     "The GPU's energy counter, mJ (as dcgm-exporter; it only grows, but is typed gauge "
     "because a counter's name must end in _total).", energy_mj},
    {"carma_gpu_tasks", "gauge", "Tasks carma runs on the GPU now.", tasks_on},
};

static void render_gpus(const daemon_state *d, promtext *p, const char *host)
{
    for (size_t f = 0; f < sizeof gpu_families / sizeof gpu_families[0]; f++) {
        const gpu_family *gf = &gpu_families[f];
        promtext_family(p, gf->name, gf->type, gf->help);
        for (int g = 0; g < d->ngpus; g++) {
            /* a failed or missing sample leaves every reading unknown; the task count stays */
            if (!d->sample_ok && gf->value != tasks_on)
                continue;
            char index[16];
            snprintf(index, sizeof index, "%d", g);
            const prom_label labels[] = {{"gpu", index},
                                         {"UUID", d->readings[g].uuid},
                                         {"model_name", d->readings[g].name},
                                         {"Hostname", host}};
            promtext_sample(p, gf->name, labels, 4, gf->value(d, g));
        }
    }
}

/* The GPUs the backend sees and the daemon does not use (MIG mode), as `carma gpus` lists
 * them: a dashboard that counts carma_gpu_tasks series would not know they exist. */
static void render_left_out(const daemon_state *d, promtext *p, const char *host)
{
    int n;
    const nvml_mig_gpu *mig = d_left_out(d, &n);
    promtext_family(p, "carma_gpu_left_out", "gauge",
                    "GPUs the backend sees that carma places nothing on, by reason (always 1).");
    for (int i = 0; i < n; i++) {
        char index[16];
        snprintf(index, sizeof index, "%u", mig[i].nvml_index);
        const prom_label labels[] = {{"nvml_index", index},
                                     {"UUID", mig[i].uuid},
                                     {"reason", "mig"},
                                     {"Hostname", host}};
        promtext_sample(p, "carma_gpu_left_out", labels, 4, 1);
    }
}

static void render_tasks(const daemon_state *d, promtext *p)
{
    const d_counters *c = &d->counters;
    int live[DS_COUNT] = {0};
    for (size_t i = 0; i < d->ntasks; i++)
        if ((unsigned)d->tasks[i]->state < DS_COUNT)
            live[d->tasks[i]->state]++;
    promtext_family(p, "carma_tasks", "gauge",
                    "Live tasks by state: queued (held ones included) and running.");
    for (dstate s = DS_QUEUED; s <= DS_RUNNING; s++)
        promtext_sample(p, "carma_tasks", &(prom_label){"state", dstate_name(s)}, 1, live[s]);
    promtext_family(p, "carma_tasks_ended_total", "counter",
                    "Tasks ended for good, by final state, since the daemon started.");
    for (dstate s = DS_DONE; s < DS_COUNT; s++)
        promtext_sample_u64(p, "carma_tasks_ended_total",
                            &(prom_label){"state", dstate_name(s)}, 1, c->ended[s]);
    promtext_family(p, "carma_task_wait_seconds", "histogram",
                    "Seconds each placed attempt waited: since its task was submitted (a first "
                    "attempt) or its last attempt ended (a retry); since the daemon started.");
    promtext_histogram(p, "carma_task_wait_seconds", wait_bounds, D_WAIT_BOUNDS, c->wait,
                       c->wait_sum);
    static const struct {
        const char *name, *help;
        size_t offset;
    } counters[] = {
        {"carma_placements_total", "Attempts placed on GPUs since the daemon started.",
         offsetof(d_counters, placements)},
        {"carma_collocated_placements_total",
         "Attempts placed on a GPU that already ran another task, since the daemon started.",
         offsetof(d_counters, collocated)},
        {"carma_oom_crashes_total",
         "Attempts that crashed out of GPU memory, since the daemon started.",
         offsetof(d_counters, oom_crashes)},
        {"carma_oom_recoveries_total",
         "Tasks that ended done after an out-of-memory crash, both seen since the daemon "
         "started.", offsetof(d_counters, oom_recoveries)},
    };
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++) {
        uint64_t v;
        memcpy(&v, (const char *)c + counters[i].offset, sizeof v);
        promtext_family(p, counters[i].name, "counter", counters[i].help);
        promtext_sample_u64(p, counters[i].name, NULL, 0, v);
    }
}

char *d_metrics_render(const daemon_state *d, size_t *len)
{
    promtext p = {0};
    char host[256];
    if (gethostname(host, sizeof host))
        snprintf(host, sizeof host, "?");
    host[sizeof host - 1] = '\0';
    promtext_family(&p, "carma_build_info", "gauge", "carma's version (the value is always 1).");
    promtext_sample(&p, "carma_build_info", &(prom_label){"version", CARMA_VERSION}, 1, 1);
    promtext_family(&p, "carma_daemon_start_time_seconds", "gauge",
                    "When the daemon started, seconds since the Unix epoch (its counters count "
                    "from then).");
    promtext_sample(&p, "carma_daemon_start_time_seconds", NULL, 0, d->started_wall);
    promtext_family(&p, "carma_state_free_mib", "gauge",
                    "MiB free (to unprivileged users) in the state directory's filesystem, at "
                    "the last monitor tick; under state_min_free_mib no task is started.");
    if (d->state_free_read > 0) /* unknown: no sample */
        promtext_sample(&p, "carma_state_free_mib", NULL, 0, (double)d->state_free_mib);
    render_gpus(d, &p, host);
    render_left_out(d, &p, host);
    render_tasks(d, &p);
    return promtext_take(&p, len);
}

/* ---- the endpoint ---- */

static char *render_body(void *ctx, size_t *len)
{
    return d_metrics_render(ctx, len);
}

int d_metrics_open(daemon_state *d, carma_err *err)
{
    const char *addr = d->cfg.daemon.metrics_listen;
    if (!addr[0])
        return 0;
    hostport hp;
    if (hostport_parse(addr, &hp, err) || http_open(&d->http, &hp, err))
        return carma_err_prefix(err, "metrics_listen %s", addr);
    dlog(d, "serving metrics on http://%s/metrics", http_bound(d->http));
    return 0;
}

void d_metrics_close(daemon_state *d)
{
    http_close(d->http);
    d->http = NULL;
}

int d_metrics_pollfds(const daemon_state *d, struct pollfd *fds, double *deadline)
{
    if (!d->http)
        return 0;
    *deadline = fmin(*deadline, http_next_deadline(d->http));
    return http_pollfds(d->http, fds, clock_mono_s());
}

void d_metrics_serve(daemon_state *d, const struct pollfd *fds, int nfds)
{
    if (d->http)
        http_serve(d->http, fds, nfds, clock_mono_s(), render_body, d);
}
