/* sim_workload.c — trace + catalog -> simulator jobs. */
#include "sim/sim_workload.h"

#include <math.h>
#include <stdlib.h>

#include "estimate/estimate.h"

bool sim_job_figures(const workload *w, mem_figures *figures, uint64_t *early_mib,
                     uint64_t *peak_mib)
{
    *figures = w->mem;
    if (w->profile.peaks_known) {
        *early_mib = w->profile.peak_early_mib;
        *peak_mib = w->profile.peak_full_mib;
        return true;
    }
    if (!mem_figures_get(&w->mem, MEM_ORACLE, peak_mib))
        return false;
    *early_mib = *peak_mib;
    return true;
}

static bool known_fraction(double x)
{
    return isfinite(x) && x >= 0 && x <= 1;
}

/* Replaces a row's stored figure of `src` by one computed from its summary and batch size. A
 * row without a summary keeps its stored figure (the AEGIS rows: what AEGIS placed with), or
 * none: its task is then placed only on idle GPUs, as the core does with unknown figures. */
static int estimate_row(estimator *est, mem_source src, workload *w, carma_err *err)
{
    if (!w->summary_file || !*w->summary_file)
        return 0;
    w->mem.known &= ~(1u << src);
    return estimate_fill_mem(est, src, w->summary_file, w->batch_size, &w->mem, err);
}

int sim_jobs_from_trace(const trace *tr, workload_catalog *cat, mem_source estimated,
                        sim_job_spec **out, carma_err *err)
{
    sim_job_spec *jobs = calloc(tr->n ? tr->n : 1, sizeof *jobs);
    bool *estimated_row = calloc(cat->n ? cat->n : 1, sizeof *estimated_row);
    if (!jobs || !estimated_row) {
        free(jobs);
        free(estimated_row);
        return carma_err_set(err, "out of memory");
    }
    bool compute = estimator_computes(estimated);
    estimator est;
    estimator_init(&est);
    int rc = 0;
    for (size_t i = 0; i < tr->n; i++) {
        const trace_entry *e = &tr->entries[i];
        const workload *found = catalog_find(cat, e->task_file);
        workload *w = found ? &cat->items[found - cat->items] : NULL;
        const char *why = NULL;
        sim_job_spec *j = &jobs[i];
        if (w && compute && !estimated_row[found - cat->items]) {
            if (estimate_row(&est, estimated, w, err)) {
                rc = carma_err_prefix(err, "%s: entry %zu (seq %d): task file '%s'", tr->path,
                                      i + 1, e->seq, e->task_file);
                break;
            }
            estimated_row[found - cat->items] = true;
        }
        if (!w)
            why = "not in the workload catalog";
        else if (!sim_job_figures(w, &j->mem, &j->early_mib, &j->peak_mib))
            why = "has no measured peak memory in the catalog";
        else if (!(w->sim.solo_runtime_s > 0))
            why = "has no solo runtime in the catalog";
        else if (!known_fraction(w->sim.smact) || !known_fraction(w->sim.smocc) ||
                 !known_fraction(w->sim.drama))
            why = "has no solo activity (solo_smact, solo_smocc, solo_drama) in the catalog";
        if (why) {
            rc = carma_err_set(err, "%s: entry %zu (seq %d): task file '%s' %s", tr->path,
                               i + 1, e->seq, e->task_file, why);
            break;
        }
        j->name = e->task_file;
        j->seq = e->seq;
        j->submit_s = e->submit_offset_s;
        j->ngpus = w->ngpus;
        j->runtime_s = w->sim.solo_runtime_s;
        j->smact = w->sim.smact;
        j->smocc = w->sim.smocc;
        j->drama = w->sim.drama;
        j->startup_s = w->profile.startup_s;
        j->util = w->profile.util;
        j->lucid_class = w->profile.lucid_class;
    }
    estimator_free(&est);
    free(estimated_row);
    if (rc) {
        free(jobs);
        return rc;
    }
    *out = jobs;
    return 0;
}
