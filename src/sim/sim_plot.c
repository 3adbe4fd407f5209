/* sim_plot.c — `carma simulate --plot DIR`: the set of plots (open, render, free) and the helpers
 * the pictures share. The data files and scripts are prepared in memory by sim_plot_gpus.c (one
 * run's GPU timeline) and sim_plot_policies.c (the policies bar chart); sim_plot_render writes
 * them and runs gnuplot on each script through gnuplot_run.c. */
#include "sim/sim_plot.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sim/gnuplot_run.h"
#include "sim/sim_plot_int.h"

/* ---- helpers -------------------------------------------------------------------------------- */

/* A gnuplot single-quoted string: nothing is substituted inside one; ' is written ''. */
void gp_str(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\'')
            fputs("''", f);
        else
            fputc(c < 0x20 || c == 0x7f ? '?' : c, f);
    }
    fputc('\'', f);
}

/* A file-name-safe copy: letters, digits, '.', '-', '_'; anything else becomes '_'. */
void safe_copy(char *out, size_t size, const char *s)
{
    size_t n = 0;
    for (; *s && n + 1 < size; s++) {
        char c = *s;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '-' || c == '_';
        out[n++] = ok ? c : '_';
    }
    out[n] = '\0';
    if (n == 0) /* never empty */
        snprintf(out, size, "_");
    else if (out[0] == '.') /* never hidden */
        out[0] = '_';
}

FILE *text_open(char **buf, size_t *len, carma_err *err)
{
    *buf = NULL;
    *len = 0;
    FILE *f = open_memstream(buf, len);
    if (!f)
        carma_err_set(err, "--plot: out of memory");
    return f;
}

/* Closes a memory stream and keeps its text as file `name` of the set. */
int text_keep(sim_plot *p, const char *name, FILE *f, char **buf, size_t *len,
              carma_err *err)
{
    bool bad = ferror(f) != 0;
    bad |= fclose(f) != 0;
    plot_file *files = bad ? NULL : realloc(p->files, (p->nfiles + 1) * sizeof *files);
    if (!files) {
        free(*buf);
        *buf = NULL;
        return carma_err_set(err, "--plot: out of memory preparing %s", name);
    }
    p->files = files;
    plot_file *pf = &p->files[p->nfiles++];
    snprintf(pf->name, sizeof pf->name, "%s", name);
    pf->text = *buf;
    pf->len = *len;
    *buf = NULL;
    return 0;
}

int image_add(sim_plot *p, const char *script, const char *png, carma_err *err)
{
    plot_image *im = realloc(p->images, (p->nimages + 1) * sizeof *im);
    if (!im)
        return carma_err_set(err, "--plot: out of memory");
    p->images = im;
    snprintf(im[p->nimages].script, sizeof im->script, "%s", script);
    snprintf(im[p->nimages].png, sizeof im->png, "%s", png);
    p->nimages++;
    return 0;
}

/* The header every script starts with: where it comes from, and a PNG terminal (pngcairo when
 * this gnuplot has it, else the libgd png one). `outfile` may be set with -e to write elsewhere. */
void gp_prologue(FILE *f, const char *script, const char *png, const char *what, int w,
                 int h)
{
    fprintf(f,
            "# %s — %s\n"
            "# Written by `carma simulate --plot`; redraw with:  gnuplot %s  (in this directory)\n"
            "if (!exists('outfile')) outfile = '%s'\n"
            "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
            "    set terminal pngcairo size %d,%d noenhanced font 'sans,10'\n"
            "} else {\n"
            "    set terminal png size %d,%d noenhanced\n"
            "}\n"
            "set output outfile\n",
            script, what, script, png, w, h, w, h);
}

/* ---- the set -------------------------------------------------------------------------------- */

/* Whether DIR can hold the plots, checked before any simulation but leaving nothing behind:
 * the staging sim_plot_render will do, done once and undone (a DIR it made is removed again),
 * so that what it refuses (a file, a symlink of another user's) is refused at once. */
static int check_dir(const char *dir, carma_err *err)
{
    safefs_stage st;
    if (safefs_stage_open(&st, "--plot", dir, err))
        return -1;
    safefs_stage_close(&st);
    return 0;
}

sim_plot *sim_plot_open(const char *dir, const sim_plot_info *info, carma_err *err)
{
    if (!dir || !*dir) {
        carma_err_set(err, "--plot: empty directory name");
        return NULL;
    }
    if (strlen(dir) + PLOT_NAME_MAX + 32 > PLOT_PATH_MAX) {
        carma_err_set(err, "--plot %s: path too long", dir);
        return NULL;
    }
    char gnuplot[PATH_MAX];
    if (find_in_path("gnuplot", gnuplot, sizeof gnuplot)) {
        carma_err_set(err, NEEDS_GNUPLOT);
        return NULL;
    }
    if (check_dir(dir, err))
        return NULL;
    sim_plot *p = calloc(1, sizeof *p);
    if (!p) {
        carma_err_set(err, "--plot: out of memory");
        return NULL;
    }
    snprintf(p->dir, sizeof p->dir, "%s", dir);
    snprintf(p->gnuplot, sizeof p->gnuplot, "%s", gnuplot);
    size_t n = strlen(p->dir); /* "out/" names files "out/x", not "out//x" */
    while (n > 1 && p->dir[n - 1] == '/')
        p->dir[--n] = '\0';
    const char *base = info->trace ? strrchr(info->trace, '/') : NULL;
    snprintf(p->trace, sizeof p->trace, "%s",
             base ? base + 1 : info->trace ? info->trace : "(no trace)");
    /* It goes into the .dat files' comment lines too: a newline there would start a data row */
    for (char *c = p->trace; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    snprintf(p->estimator, sizeof p->estimator, "%s", info->estimator ? info->estimator : "-");
    p->ngpus = info->ngpus > 0 ? info->ngpus : 1;
    snprintf(p->server, sizeof p->server, "%dx%s", p->ngpus, info->gpu ? info->gpu->name : "GPU");
    p->mem_gib = info->gpu ? (double)info->gpu->memory_mib / 1024 : 0;
    p->idle_w = info->gpu ? info->gpu->idle_w : 0;
    return p;
}

int sim_plot_render(sim_plot *p, bool policies, FILE *note, carma_err *err)
{
    if (policies && p->nruns && add_policies(p, err))
        return -1;
    const char **names = malloc((p->nfiles + p->nimages + 1) * sizeof *names);
    if (!names)
        return carma_err_set(err, "--plot: out of memory");
    size_t n = 0;
    safefs_stage st;
    int rc = safefs_stage_open(&st, "--plot", p->dir, err);
    for (size_t i = 0; rc == 0 && i < p->nfiles; i++) {
        rc = write_file(&st, &p->files[i], err);
        names[n++] = p->files[i].name;
    }
    for (size_t i = 0; rc == 0 && i < p->nimages; i++) {
        rc = run_gnuplot(p, &st, &p->images[i], err);
        names[n++] = p->images[i].png;
    }
    /* every image drawn: the whole set into place together; otherwise none of it */
    if (rc == 0)
        rc = safefs_stage_commit(&st, names, n, err);
    safefs_stage_close(&st);
    free(names);
    if (rc == 0 && note) {
        fprintf(note, "plots in %s/:", p->dir);
        for (size_t i = 0; i < p->nimages; i++)
            fprintf(note, " %s", p->images[i].png);
        fputs(" (beside them the .dat data and .gp gnuplot scripts)\n", note);
    }
    return rc;
}

void sim_plot_free(sim_plot *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nfiles; i++)
        free(p->files[i].text);
    free(p->files);
    free(p->images);
    free(p->runs);
    free(p);
}
