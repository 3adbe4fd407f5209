/* sim_report.h — a run's results as JSON (the `--json` contract of `carma simulate`) and as the
 * per-task and per-GPU timeline CSV files written under --out. */
#ifndef CARMA_SIM_SIM_REPORT_H
#define CARMA_SIM_SIM_REPORT_H

#include <jansson.h>

#include "sim/engine.h"
#include "task/trace.h"

/* {policy, estimator, tasks, completed, makespan_s, mean_jct_s, p95_jct_s, mean_wait_s,
 *  gpu_util_mean, energy_j, oom_crashes, collocated_placements} plus median_jct_s, failed,
 * placements, events. Unknown figures (NaN) are null. NULL on allocation failure. */
json_t *sim_summary_json(const sim_summary *s, const char *policy, const char *estimator);

/* Writes DIR/tasks.csv (a row per entry of the trace the jobs came from, with its seq and task
 * file name, CSV-quoted where needed) and DIR/gpu_timeline.csv (DIR is created if missing) all
 * or nothing:
 * both are written in a private staging directory inside DIR, then moved into place together
 * (util/safefs.h), so a failure leaves neither (and no DIR it created), and no symlink planted
 * in DIR is followed. */
/* Whether sim_write_outputs could write into dir, found before a run (nothing left behind):
 * the staging it does, and no directory at an output file's name. Returns 0, or -1 with err. */
int sim_outputs_check(const char *dir, carma_err *err);

int sim_write_outputs(const char *dir, const sim_result *r, const trace *tr,
                      const sim_job_spec *jobs, carma_err *err);

#endif
