/* gnuplot_run.h — `carma simulate --plot` on disk: writes each data file and script into the
 * plot directory's private staging directory (util/safefs.h) and runs gnuplot on a script there
 * (fork + execv, no shell); sim_plot_render moves the whole set into place when all went well. */
#ifndef CARMA_SIM_GNUPLOT_RUN_H
#define CARMA_SIM_GNUPLOT_RUN_H

#include <stddef.h>

#include "sim/sim_plot_int.h"
#include "util/err.h"
#include "util/safefs.h"

#define NEEDS_GNUPLOT "--plot needs gnuplot (apt-get install gnuplot-nox)"

/* The first executable `prog` on PATH, as an absolute path in `out` (gnuplot runs in DIR).
 * Returns 0, or -1 when there is none. */
int find_in_path(const char *prog, char *out, size_t size);

/* Writes `pf` to the staging directory under its name. */
int write_file(safefs_stage *st, const plot_file *pf, carma_err *err);

/* Runs `gnuplot SCRIPT` (p->gnuplot) in the staging directory, where the script writes its PNG;
 * on failure the message names the script (as DIR/SCRIPT) and quotes gnuplot's last line of
 * stderr. */
int run_gnuplot(const sim_plot *p, safefs_stage *st, const plot_image *im, carma_err *err);

#endif
