/* sim_metrics.h — the figures of a simulation run, from simulated timestamps. */
#ifndef CARMA_SIM_SIM_METRICS_H
#define CARMA_SIM_SIM_METRICS_H

#include "sim/engine.h"

/* Fills r->summary from r->jobs and the integrals the engine accumulated over [t_start, t_end]:
 * util_s = sum over GPUs of the time integral of SM activity, energy_j = of power. Job
 * completion times and waits are over completed jobs; events and placement counts are kept.
 * With no job completed the makespan is unknown, and so are the figures over it (utilization,
 * energy): NaN. */
void sim_summarize(sim_result *r, double t_start, double t_end, int ngpus, double util_s,
                   double energy_j);

/* The q-quantile (0..1) of v[0..n) by linear interpolation; sorts v. NaN when n == 0. */
double sim_quantile(double *v, size_t n, double q);

#endif
