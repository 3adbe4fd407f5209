/* sim_workload.h — turns a trace and the workload catalog into the simulator's jobs. The one
 * place where a job's memory figures (what policies place with) and its real peak (what it
 * allocates) are decided: sim_job_figures. */
#ifndef CARMA_SIM_SIM_WORKLOAD_H
#define CARMA_SIM_SIM_WORKLOAD_H

#include "task/catalog.h"
#include "task/trace.h"
#include "sim/engine.h"

/* The figures a job is placed with, by source, and the memory it really allocates: its early
 * and full-run peaks as measured on an A100 where the catalog has them, else the measured
 * figure (.rad line 9) for both. Returns false when the row has neither (the job cannot be
 * simulated). */
bool sim_job_figures(const workload *w, mem_figures *figures, uint64_t *early_mib,
                     uint64_t *peak_mib);

/* One job per trace entry; names point into the trace. `estimated` is the estimator the
 * est-* policies use: when it is computed from model summaries (horus, gpumemnet, carma), each
 * catalog row the trace uses gets that figure from its summary and batch size (once per row,
 * written into the catalog), replacing the figure stored in its .rad file; a row without a
 * summary keeps its stored figure, if any. Errors name the
 * trace file and entry (an unknown task file, a row without measured memory, runtime,
 * activity, or with a summary that cannot be read). */
int sim_jobs_from_trace(const trace *tr, workload_catalog *cat, mem_source estimated,
                        sim_job_spec **out, carma_err *err);

#endif
