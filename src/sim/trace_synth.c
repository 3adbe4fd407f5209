/* trace_synth.c — Philly-like synthetic traces (see trace_synth.h). */
#include "sim/trace_synth.h"

#include <math.h>
#include <stdlib.h>

#include "sim/sim_workload.h"
#include "util/csv.h"
#include "util/strutil.h"
#include "util/rng.h"

#define PHILLY_ONE_GPU_PCT 92.96
#define PHILLY_TWO_GPU_PCT 2.21

int philly_gaps_load(const char *path, double **gaps, size_t *n, carma_err *err)
{
    csv_table t;
    if (csv_load(path, &t, err))
        return -1;
    int col = csv_require_column(&t, "wait_before_s", err);
    double *g = col >= 0 ? malloc((t.nrows ? t.nrows : 1) * sizeof *g) : NULL;
    size_t k = 0;
    int rc = col < 0 ? -1 : g ? 0 : carma_err_set(err, "out of memory");
    for (size_t i = 0; rc == 0 && i < t.nrows; i++) {
        double x;
        if (parse_double(t.rows[i].fields[col], &x) || !isfinite(x) || x < 0)
            rc = carma_err_set(err, "%s:%zu: wait_before_s: expected seconds >= 0", path,
                               t.rows[i].line);
        else if (x > 0)
            g[k++] = x;
    }
    if (rc == 0 && k == 0)
        rc = carma_err_set(err, "%s: no positive inter-arrival gaps", path);
    csv_free(&t);
    if (rc) {
        free(g);
        return -1;
    }
    *gaps = g;
    *n = k;
    return 0;
}

static bool simulatable(const workload *w)
{
    mem_figures m;
    uint64_t early, peak;
    return sim_job_figures(w, &m, &early, &peak) && w->sim.solo_runtime_s > 0 &&
           isfinite(w->sim.smact) && isfinite(w->sim.smocc) && isfinite(w->sim.drama);
}

int trace_synth(const workload_catalog *cat, const double *gaps, size_t ngaps, size_t njobs,
                uint64_t seed, trace *out, carma_err *err)
{
    out->path = NULL;
    out->n = 0;
    out->entries = NULL;
    if (njobs == 0 || ngaps == 0)
        return carma_err_set(err, "trace synth: need at least one job and one arrival gap");
    size_t *pool[2] = {malloc(cat->n * sizeof(size_t) + 1), malloc(cat->n * sizeof(size_t) + 1)};
    size_t npool[2] = {0, 0};
    trace_entry *e = calloc(njobs, sizeof *e);
    int rc = pool[0] && pool[1] && e ? 0 : carma_err_set(err, "out of memory");
    for (size_t i = 0; rc == 0 && i < cat->n; i++)
        if (simulatable(&cat->items[i]) && (cat->items[i].ngpus == 1 || cat->items[i].ngpus == 2))
            pool[cat->items[i].ngpus - 1][npool[cat->items[i].ngpus - 1]++] = i;
    if (rc == 0 && npool[0] == 0)
        rc = carma_err_set(err, "trace synth: the catalog has no simulatable 1-GPU task");
    uint64_t state = seed;
    double t = 0, p_two = PHILLY_TWO_GPU_PCT / (PHILLY_ONE_GPU_PCT + PHILLY_TWO_GPU_PCT);
    for (size_t i = 0; rc == 0 && i < njobs; i++) {
        if (i > 0)
            t += gaps[rng_next(&state) % ngaps];
        if (!(t <= TRACE_MAX_OFFSET_S)) { /* also inf, from gaps divided by a tiny rate */
            char when[32]; /* in full: %g wrote 1000000000.5 as 1e+09, not past the limit */
            fmt_double(when, sizeof when, t);
            carma_err_set(err,
                          "job %zu would be submitted %s s in, past the latest a trace may hold, "
                          "%.0f s (about 31 years)",
                          i + 1, when, TRACE_MAX_OFFSET_S);
            rc = TRACE_SYNTH_TOO_LONG;
        }
        int which = npool[1] > 0 && rng_uniform(&state) < p_two ? 1 : 0;
        const workload *w = &cat->items[pool[which][rng_next(&state) % npool[which]]];
        e[i].seq = (int)(i + 1);
        e[i].submit_offset_s = t;
        e[i].task_file = str_dup(w->rad_file);
        out->n = i + 1;
        if (!e[i].task_file)
            rc = carma_err_set(err, "out of memory");
    }
    out->entries = e;
    free(pool[0]);
    free(pool[1]);
    if (rc)
        trace_free(out);
    return rc;
}
