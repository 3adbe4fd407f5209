/* sim_plot_int.h — what the pieces of `carma simulate --plot` share: the set's state (the data
 * files and scripts held in memory until sim_plot_render, the images to draw, the runs' summaries)
 * and the helpers that write gnuplot script text. Not for use outside src/sim/sim_plot*.c and
 * src/sim/gnuplot_run.c. */
#ifndef CARMA_SIM_SIM_PLOT_INT_H
#define CARMA_SIM_SIM_PLOT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sim/sim_plot.h"
#include "util/err.h"

#define PLOT_NAME_MAX 96
#define PLOT_PATH_MAX 4096

/* Colors: SM activity (area), memory (line), the exclusive baseline bar, the other bars. */
#define COLOR_ACT "#9ecae1"
#define COLOR_ACT_LINE "#3182bd"
#define COLOR_MEM "#e6550d"
#define COLOR_BASE 0x969696
#define COLOR_BAR 0x3182bd

typedef struct plot_file { /* a data file or script, held in memory until sim_plot_render */
    char name[PLOT_NAME_MAX];
    char *text;
    size_t len;
} plot_file;

typedef struct plot_image { /* a PNG and the script that draws it */
    char script[PLOT_NAME_MAX], png[PLOT_NAME_MAX];
} plot_image;

typedef struct plot_run {
    char policy[PLOT_NAME_MAX];
    sim_summary s;
} plot_run;

struct sim_plot {
    char dir[PLOT_PATH_MAX];
    char gnuplot[PLOT_PATH_MAX]; /* its absolute path, found by sim_plot_open */
    char trace[256], estimator[64], server[96];
    double mem_gib, idle_w;
    int ngpus;
    plot_file *files;
    size_t nfiles;
    plot_image *images;
    size_t nimages;
    plot_run *runs;
    size_t nruns;
};

/* ---- sim_plot.c: helpers the pictures share ------------------------------------------------- */

/* A gnuplot single-quoted string: nothing is substituted inside one; ' is written ''. */
void gp_str(FILE *f, const char *s);

/* A file-name-safe copy: letters, digits, '.', '-', '_'; anything else becomes '_'. */
void safe_copy(char *out, size_t size, const char *s);

/* A memory stream for the text of a data file or script (err set on failure). */
FILE *text_open(char **buf, size_t *len, carma_err *err);

/* Closes a memory stream and keeps its text as file `name` of the set. */
int text_keep(sim_plot *p, const char *name, FILE *f, char **buf, size_t *len, carma_err *err);

/* Adds the PNG `png` drawn by script `script` to the images sim_plot_render draws. */
int image_add(sim_plot *p, const char *script, const char *png, carma_err *err);

/* The header every script starts with: where it comes from, and a PNG terminal. */
void gp_prologue(FILE *f, const char *script, const char *png, const char *what, int w, int h);

/* ---- sim_plot_policies.c -------------------------------------------------------------------- */

/* Prepares policies.dat and policies.gp (makespan, mean JCT and energy of every run added) and
 * adds policies.png to the images. */
int add_policies(sim_plot *p, carma_err *err);

#endif
