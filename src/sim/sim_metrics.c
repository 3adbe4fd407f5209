/* sim_metrics.c — makespan, job completion times, waits, utilization and energy of a run. */
#include "sim/sim_metrics.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double sim_quantile(double *v, size_t n, double q)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)floor(pos);
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    return v[lo] + (v[hi] - v[lo]) * (pos - (double)lo);
}

void sim_summarize(sim_result *r, double t_start, double t_end, int ngpus, double util_s,
                   double energy_j)
{
    sim_summary *s = &r->summary;
    s->tasks = r->njobs;
    s->completed = s->failed = 0;
    double *jct = malloc((r->njobs ? r->njobs : 1) * sizeof *jct);
    double jct_sum = 0, wait_sum = 0;
    for (size_t i = 0; i < r->njobs; i++) {
        const sim_job_result *j = &r->jobs[i];
        if (!j->completed) {
            s->failed += !isnan(j->end_s);
            continue;
        }
        double t = j->end_s - j->submit_s;
        if (jct)
            jct[s->completed] = t;
        s->completed++;
        jct_sum += t;
        wait_sum += j->wait_s;
    }
    double span = t_end - t_start;
    s->makespan_s = s->completed ? span : NAN;
    s->mean_jct_s = s->completed ? jct_sum / (double)s->completed : NAN;
    s->mean_wait_s = s->completed ? wait_sum / (double)s->completed : NAN;
    s->median_jct_s = jct ? sim_quantile(jct, s->completed, 0.5) : NAN;
    s->p95_jct_s = jct ? sim_quantile(jct, s->completed, 0.95) : NAN;
    /* both are over the makespan: unknown (not 0) when it is, with no task completed */
    s->gpu_util_mean = s->completed && span > 0 ? util_s / (span * ngpus) : NAN;
    s->energy_j = s->completed ? energy_j : NAN;
    free(jct);
}
