/* trace_synth.h — Philly-like synthetic traces for scale runs: inter-arrival gaps resampled from
 * Philly's recorded arrivals (data/philly/interarrival_sequences.csv), GPU counts in Philly's
 * 1-GPU : 2-GPU proportion (92.96 % : 2.21 %, reference/literature.md 6.1; larger jobs have no
 * catalog task and are folded into these two), tasks drawn uniformly from the catalog rows with
 * that GPU count that can be simulated. Deterministic for a given seed. */
#ifndef CARMA_SIM_TRACE_SYNTH_H
#define CARMA_SIM_TRACE_SYNTH_H

#include <stdint.h>

#include "task/catalog.h"
#include "task/trace.h"

/* Reads the positive `wait_before_s` gaps of the arrivals file. */
int philly_gaps_load(const char *path, double **gaps, size_t *n, carma_err *err);

/* What trace_synth returns when the gaps and the job count would put a job past
 * TRACE_MAX_OFFSET_S: the caller's parameters are at fault, not a file. */
#define TRACE_SYNTH_TOO_LONG (-2)

/* Builds an n-job trace (out->path = NULL; free with trace_free). Returns 0, -1 or
 * TRACE_SYNTH_TOO_LONG, with err set. */
int trace_synth(const workload_catalog *cat, const double *gaps, size_t ngaps, size_t njobs,
                uint64_t seed, trace *out, carma_err *err);

#endif
