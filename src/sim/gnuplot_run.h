/* gnuplot_run.h — `carma simulate --plot` on disk: writes each data file and script atomically
 * (a temporary name in DIR, then renamed) and runs gnuplot on a script (fork + execv, no shell),
 * renaming the PNG into place only when gnuplot succeeded. */
#ifndef CARMA_SIM_GNUPLOT_RUN_H
#define CARMA_SIM_GNUPLOT_RUN_H

#include <stddef.h>

#include "sim/sim_plot_int.h"
#include "util/err.h"

#define NEEDS_GNUPLOT "--plot needs gnuplot (apt-get install gnuplot-nox)"

/* The first executable `prog` on PATH, as an absolute path in `out` (gnuplot runs in DIR).
 * Returns 0, or -1 when there is none. */
int find_in_path(const char *prog, char *out, size_t size);

/* Writes `pf` to DIR/.NAME.tmp, then renames it to DIR/NAME. */
int write_file(const sim_plot *p, const plot_file *pf, carma_err *err);

/* Runs `gnuplot -e "outfile='.PNG.tmp'" SCRIPT` in DIR, then renames the image into place; on
 * failure the message names the script and quotes gnuplot's last line of stderr. */
int run_gnuplot(const sim_plot *p, const char *gnuplot, const plot_image *im, carma_err *err);

#endif
