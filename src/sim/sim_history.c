/* sim_history.c — the run history a simulation builds (sim_history.h). */
#include "sim/sim_history.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct named {
    const char *name;
    size_t job;
} named;

static int by_name(const void *a, const void *b)
{
    const named *x = a, *y = b;
    int c = x->name && y->name ? strcmp(x->name, y->name) : (x->name != NULL) - (y->name != NULL);
    return c ? c : (x->job > y->job) - (x->job < y->job);
}

int sim_history_init(sim_history *h, const sim_job_spec *jobs, size_t n, carma_err *err)
{
    size_t cap = n ? n : 1;
    named *order = malloc(cap * sizeof *order);
    h->file = malloc(cap * sizeof *h->file);
    h->runs = malloc(cap * sizeof *h->runs);
    h->members = malloc(cap * sizeof *h->members);
    h->first = malloc((cap + 1) * sizeof *h->first);
    h->taught_mib = calloc(cap, sizeof *h->taught_mib);
    if (!order || !h->file || !h->runs || !h->members || !h->first || !h->taught_mib) {
        free(order);
        sim_history_free(h);
        return carma_err_set(err, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        order[i] = (named){jobs[i].name, i};
    qsort(order, n, sizeof *order, by_name);
    size_t files = 0;
    for (size_t k = 0; k < n; k++) {
        const char *name = order[k].name, *prev = k ? order[k - 1].name : NULL;
        if (k == 0 || !name || !prev || strcmp(name, prev)) {
            h->first[files] = k;
            h->runs[files++] = (sim_history_run){NAN, NAN, NAN, NAN};
        }
        h->file[order[k].job] = files - 1;
        h->members[k] = order[k].job;
    }
    h->first[files] = n;
    free(order);
    return 0;
}

void sim_history_free(sim_history *h)
{
    free(h->file);
    free(h->runs);
    free(h->members);
    free(h->first);
    free(h->taught_mib);
    *h = (sim_history){0};
}

void sim_history_fill(const sim_history *h, size_t i, sched_task *st)
{
    const sim_history_run *r = &h->runs[h->file[i]];
    st->runtime_est_s = r->runtime_s;
    st->solo_smact = r->smact;
    st->solo_drama = r->drama;
    st->profiled_util = r->util;
}

void sim_history_record(sim_history *h, size_t i, const sim_job_spec *spec, double runtime_s,
                        double startup_s)
{
    /* the mean over the run of what its GPUs read: nothing during start-up */
    double busy = runtime_s > 0 ? fmax(0, runtime_s - startup_s) / runtime_s : 0;
    h->runs[h->file[i]] = (sim_history_run){runtime_s, spec->smact * busy, spec->drama * busy,
                                            isnan(spec->util) ? NAN : spec->util * busy};
}
