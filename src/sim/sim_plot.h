/* sim_plot.h — `carma simulate --plot DIR`: pictures of simulated runs, drawn by gnuplot.
 * Per run DIR/gpus-POLICY.png (each GPU's SM activity and used memory over the hours since the
 * first submission; mean and max across GPUs above 16 GPUs); with --compare DIR/policies.png
 * (makespan, mean JCT and energy per policy). The data files (.dat) and gnuplot scripts (.gp)
 * stay next to the PNGs, so `cd DIR && gnuplot gpus-POLICY.gp` redraws one by hand. */
#ifndef CARMA_SIM_SIM_PLOT_H
#define CARMA_SIM_SIM_PLOT_H

#include <stdbool.h>
#include <stdio.h>

#include "sim/engine.h"
#include "util/err.h"

/* What the titles name: the trace (its file name is shown), the server, the estimator. */
typedef struct sim_plot_info {
    const char *trace;     /* trace path */
    const char *estimator; /* estimator of the est-* policies */
    const gpu_model *gpu;
    int ngpus;
} sim_plot_info;

typedef struct sim_plot sim_plot;

/* Starts a set of plots under `dir`, checking before any simulation that gnuplot is on PATH
 * ("--plot needs gnuplot (apt-get install gnuplot-nox)") and that `dir` is a directory we may
 * write to, or can be made; nothing is created yet. Returns NULL (err set) on failure. */
sim_plot *sim_plot_open(const char *dir, const sim_plot_info *info, carma_err *err);

/* Adds one run (simulated with setup.record_timeline = true) under its policy name: prepares
 * gpus-POLICY.dat and gpus-POLICY.gp in memory and keeps the summary for policies.png.
 * Nothing is written yet, and `r` may be freed after the call. */
int sim_plot_add_run(sim_plot *p, const char *policy, const sim_result *r, carma_err *err);

/* Writes the data files and scripts and runs gnuplot (found by sim_plot_open, fork + execv, no
 * shell) on each script, giving the PNGs; with `policies` also policies.dat/.gp/.png from every
 * run added. All or nothing: the set is made in a private staging directory inside DIR and moved
 * into place when every image is drawn (util/safefs.h), so no symlink planted in DIR is followed
 * and a failure leaves DIR as it was (no DIR, when it made it). Errors: a file that cannot be
 * written, gnuplot failing (the message names the script and quotes gnuplot's error). When
 * `note` is non-NULL, one line naming the files written goes there. */
int sim_plot_render(sim_plot *p, bool policies, FILE *note, carma_err *err);

/* Frees the set (NULL is fine). */
void sim_plot_free(sim_plot *p);

#endif
