/* sim_workload.h — turns a trace and the workload catalog into the simulator's jobs. The one
 * place where a job's memory figures (what policies place with) and its real peak (what it
 * allocates) are decided: sim_job_figures. */
#ifndef CARMA_SIM_SIM_WORKLOAD_H
#define CARMA_SIM_SIM_WORKLOAD_H

#include "core/catalog.h"
#include "core/trace.h"
#include "sim/engine.h"

/* The figures a job is placed with, by source (oracle = measured peak; the estimators' figures
 * as stored in the catalog), and the peak it really allocates. Returns false when the row has no
 * measured peak (the job cannot be simulated). Swap the estimate source here. */
bool sim_job_figures(const workload *w, mem_figures *figures, uint64_t *peak_mib);

/* One job per trace entry; names point into the trace. Errors name the trace file and line
 * (an unknown task file, a row without measured memory, runtime or activity). */
int sim_jobs_from_trace(const trace *tr, const workload_catalog *cat, sim_job_spec **out,
                        carma_err *err);

#endif
