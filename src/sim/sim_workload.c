/* sim_workload.c — trace + catalog -> simulator jobs. */
#include "sim/sim_workload.h"

#include <math.h>
#include <stdlib.h>

bool sim_job_figures(const workload *w, mem_figures *figures, uint64_t *peak_mib)
{
    *figures = w->mem;
    return mem_figures_get(&w->mem, MEM_ORACLE, peak_mib);
}

static bool known_fraction(double x)
{
    return isfinite(x) && x >= 0 && x <= 1;
}

int sim_jobs_from_trace(const trace *tr, const workload_catalog *cat, sim_job_spec **out,
                        carma_err *err)
{
    sim_job_spec *jobs = calloc(tr->n ? tr->n : 1, sizeof *jobs);
    if (!jobs)
        return carma_err_set(err, "out of memory");
    for (size_t i = 0; i < tr->n; i++) {
        const trace_entry *e = &tr->entries[i];
        const workload *w = catalog_find(cat, e->task_file);
        const char *why = NULL;
        sim_job_spec *j = &jobs[i];
        if (!w)
            why = "not in the workload catalog";
        else if (!sim_job_figures(w, &j->mem, &j->peak_mib))
            why = "has no measured peak memory in the catalog";
        else if (!(w->sim.solo_runtime_s > 0))
            why = "has no solo runtime in the catalog";
        else if (!known_fraction(w->sim.smact) || !known_fraction(w->sim.smocc) ||
                 !known_fraction(w->sim.drama))
            why = "has no solo activity (solo_smact, solo_smocc, solo_drama) in the catalog";
        if (why) {
            free(jobs);
            return carma_err_set(err, "%s: entry %zu (seq %d): task file '%s' %s", tr->path,
                                 i + 1, e->seq, e->task_file, why);
        }
        j->name = e->task_file;
        j->submit_s = e->submit_offset_s;
        j->ngpus = w->ngpus;
        j->runtime_s = w->sim.solo_runtime_s;
        j->smact = w->sim.smact;
        j->smocc = w->sim.smocc;
        j->drama = w->sim.drama;
    }
    *out = jobs;
    return 0;
}
