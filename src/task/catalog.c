/* catalog.c — loads data/workloads.csv into workload rows (see catalog.h). Empty cells mean
 * "not known" (gpt2_xl.rad has no measured memory, mnist_train.rad no README runtime). */
#include "task/catalog.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/csv.h"
#include "util/strutil.h"

/* Column indices; -1 for an optional column the file lacks. */
typedef struct catalog_cols {
    int rad, model, size_class, script, summary, dataset, batch_eff, batch_line6, gpus, epochs;
    int mem[MEM_SOURCE_COUNT];
    int runtime_min, smact, smocc, drama;
    int startup, peak_early, peak_full, util, lucid_class;
} catalog_cols;

static int find_columns(const csv_table *t, catalog_cols *c, carma_err *err)
{
    if ((c->rad = csv_require_column(t, "rad_file", err)) < 0 ||
        (c->model = csv_require_column(t, "model_name", err)) < 0 ||
        (c->gpus = csv_require_column(t, "gpus_line8", err)) < 0 ||
        (c->mem[MEM_ORACLE] = csv_require_column(t, "measured_mem_mb_line9", err)) < 0 ||
        (c->runtime_min = csv_require_column(t, "exclusive_runtime_min", err)) < 0)
        return -1;
    c->size_class = csv_column(t, "size_class");
    c->script = csv_column(t, "script");
    c->summary = csv_column(t, "model_summary_line4");
    c->dataset = csv_column(t, "dataset_line5");
    c->batch_eff = csv_column(t, "batch_size_effective");
    c->batch_line6 = csv_column(t, "batch_size_line6");
    c->epochs = csv_column(t, "epochs");
    c->mem[MEM_HORUS] = csv_column(t, "horus_est_mb_line10");
    c->mem[MEM_FAKETENSOR] = csv_column(t, "faketensor_est_mb_line11");
    c->mem[MEM_GPUMEMNET] = csv_column(t, "gpumemnet_est_mb_line12");
    c->mem[MEM_CARMA] = -1;
    c->mem[MEM_XMEM] = -1;
    c->smact = csv_column(t, "solo_smact");
    c->smocc = csv_column(t, "solo_smocc");
    c->drama = csv_column(t, "solo_drama");
    c->startup = csv_column(t, "startup_s");
    c->peak_early = csv_column(t, "peak_early_mib");
    c->peak_full = csv_column(t, "peak_full_mib");
    c->util = csv_column(t, "profiled_util");
    c->lucid_class = csv_column(t, "lucid_class");
    return 0;
}

/* The cell's text, or NULL when the column is absent or the cell is blank. */
static const char *cell(const csv_row *r, int col)
{
    if (col < 0)
        return NULL;
    const char *s = r->fields[col];
    while (*s == ' ' || *s == '\t')
        s++;
    return *s ? r->fields[col] : NULL;
}

typedef struct row_ctx {
    const csv_table *t;
    const csv_row *r;
    carma_err *err;
} row_ctx;

static int bad_cell(row_ctx *x, int col, const char *want)
{
    return carma_err_set(x->err, "%s:%zu: %s: expected %s, got '%s'", x->t->path, x->r->line,
                         x->t->header.fields[col], want, x->r->fields[col]);
}

/* A number cell in lo..hi (a whole number when `whole`); *out untouched when blank. Returns 1
 * when set, 0 blank, -1 bad. */
static int bounded_cell(row_ctx *x, int col, double lo, double hi, bool whole, double *out)
{
    const char *s = cell(x->r, col);
    double v = 0;
    int64_t i;
    if (!s)
        return 0;
    bool bad = whole ? parse_i64(s, &i) != 0 : parse_double(s, &v) != 0;
    if (whole && !bad)
        v = (double)i;
    if (bad || v < lo || v > hi) {
        char want[64];
        snprintf(want, sizeof want, whole ? "a whole number %.0f..%.0f" : "a number %g..%g", lo,
                 hi);
        return bad_cell(x, col, want);
    }
    *out = v;
    return 1;
}

static int int_cell(row_ctx *x, int col, int lo, int hi, int *out)
{
    double v;
    int got = bounded_cell(x, col, lo, hi, true, &v);
    if (got == 1)
        *out = (int)v;
    return got;
}

static int num_cell(row_ctx *x, int col, double lo, double hi, double *out)
{
    return bounded_cell(x, col, lo, hi, false, out);
}

static int str_cell(row_ctx *x, int col, char **out)
{
    const char *s = cell(x->r, col);
    if (s && !(*out = str_dup(s)))
        return carma_err_set(x->err, "%s: out of memory", x->t->path);
    return 0;
}

static void workload_free(workload *w)
{
    free(w->rad_file);
    free(w->model_name);
    free(w->size_class);
    free(w->script);
    free(w->summary_file);
    free(w->dataset);
}

static int load_profile(row_ctx *x, const catalog_cols *c, workload *w)
{
    workload_profile *p = &w->profile;
    double early = 0, full = 0;
    int got_early, got_full;
    if (num_cell(x, c->startup, 0, 1e8, &p->startup_s) < 0 ||
        num_cell(x, c->util, 0, 1, &p->util) < 0 ||
        int_cell(x, c->lucid_class, 0, 2, &p->lucid_class) < 0 ||
        (got_early = num_cell(x, c->peak_early, 0, 1e9, &early)) < 0 ||
        (got_full = num_cell(x, c->peak_full, 0, 1e9, &full)) < 0)
        return -1;
    if (got_early != got_full) {
        int other = got_early ? c->peak_full : c->peak_early;
        if (other < 0) /* the other column is not in the file: there is no cell to show */
            return carma_err_set(x->err, "%s:%zu: %s needs a %s column", x->t->path, x->r->line,
                                 got_early ? "peak_early_mib" : "peak_full_mib",
                                 got_early ? "peak_full_mib" : "peak_early_mib");
        return bad_cell(x, other, "both peaks (peak_early_mib and peak_full_mib) or neither");
    }
    if (got_early && early > full)
        return bad_cell(x, c->peak_early, "a peak no larger than peak_full_mib");
    if (got_full && full < 1) /* the simulator would place the task as needing no memory */
        return bad_cell(x, c->peak_full, "at least 1 MiB (blank cells: not measured)");
    p->peaks_known = got_early;
    p->peak_early_mib = (uint64_t)early;
    p->peak_full_mib = (uint64_t)full;
    return 0;
}

static int load_row(row_ctx *x, const catalog_cols *c, workload *w)
{
    memset(w, 0, sizeof *w);
    w->sim.smact = w->sim.smocc = w->sim.drama = NAN;
    w->profile.startup_s = w->profile.util = NAN;
    w->profile.lucid_class = -1;
    if (!cell(x->r, c->rad))
        return bad_cell(x, c->rad, "a .rad file name");
    if (str_cell(x, c->rad, &w->rad_file) || str_cell(x, c->model, &w->model_name) ||
        str_cell(x, c->size_class, &w->size_class) || str_cell(x, c->script, &w->script) ||
        str_cell(x, c->summary, &w->summary_file) || str_cell(x, c->dataset, &w->dataset))
        return -1;
    if (int_cell(x, c->gpus, 1, SCHED_MAX_TASK_GPUS, &w->ngpus) <= 0)
        return cell(x->r, c->gpus) ? -1 : bad_cell(x, c->gpus, "the number of GPUs");
    int got = int_cell(x, c->batch_eff, 1, 1 << 30, &w->batch_size);
    if (got == 0)
        got = int_cell(x, c->batch_line6, 1, 1 << 30, &w->batch_size);
    if (got < 0 || int_cell(x, c->epochs, 0, 1 << 20, &w->epochs) < 0)
        return -1;
    for (int src = 0; src < MEM_SOURCE_COUNT; src++) {
        double mib;
        got = num_cell(x, c->mem[src], 0, 1e12, &mib);
        if (got < 0)
            return -1;
        /* cut to whole MiB as a .rad's figures, and as theirs at least 1: a task needs some
         * memory, and a figure of 0 would be placed as one that needs none */
        if (got && mib < 1)
            return bad_cell(x, c->mem[src], "at least 1 MiB (a blank cell: unknown)");
        if (got)
            mem_figures_set(&w->mem, (mem_source)src, (uint64_t)mib);
    }
    double minutes;
    if ((got = num_cell(x, c->runtime_min, 0, 1e8, &minutes)) < 0)
        return -1;
    if (got && minutes == 0) /* 0 s is the simulator's "unknown": a blank cell says that */
        return bad_cell(x, c->runtime_min, "more than 0 minutes (a blank cell: unknown)");
    if (got)
        w->sim.solo_runtime_s = minutes * 60.0;
    if (num_cell(x, c->smact, 0, 1, &w->sim.smact) < 0 ||
        num_cell(x, c->smocc, 0, 1, &w->sim.smocc) < 0 ||
        num_cell(x, c->drama, 0, 1, &w->sim.drama) < 0)
        return -1;
    return load_profile(x, c, w);
}

int catalog_load(const char *path, workload_catalog *out, carma_err *err)
{
    memset(out, 0, sizeof *out);
    csv_table t;
    catalog_cols cols = {0};
    if (csv_load(path, &t, err))
        return -1;
    int rc = find_columns(&t, &cols, err);
    if (rc == 0 && t.nrows == 0)
        rc = carma_err_set(err, "%s: no workloads (only a header)", path);
    if (rc == 0 && !(out->items = calloc(t.nrows, sizeof *out->items)))
        rc = carma_err_set(err, "%s: out of memory", path);
    for (size_t i = 0; rc == 0 && i < t.nrows; i++) {
        row_ctx x = {&t, &t.rows[i], err};
        workload *w = &out->items[out->n];
        rc = load_row(&x, &cols, w);
        for (size_t j = 0; rc == 0 && j < out->n; j++)
            if (!strcmp(out->items[j].rad_file, w->rad_file))
                rc = carma_err_set(err, "%s:%zu: rad_file '%s' appears twice (first on line %zu)",
                                   path, t.rows[i].line, w->rad_file, t.rows[j].line);
        if (rc)
            workload_free(w);
        else
            out->n++;
    }
    csv_free(&t);
    if (rc)
        catalog_free(out);
    return rc;
}

void catalog_free(workload_catalog *c)
{
    for (size_t i = 0; i < c->n; i++)
        workload_free(&c->items[i]);
    free(c->items);
    c->items = NULL;
    c->n = 0;
}

const workload *catalog_find(const workload_catalog *c, const char *rad_name)
{
    if (!rad_name)
        return NULL;
    const char *slash = strrchr(rad_name, '/');
    const char *base = slash ? slash + 1 : rad_name;
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->items[i].rad_file, base))
            return &c->items[i];
    return NULL;
}

/* The task has no command: the catalog describes recorded runs for simulation, not how to
 * launch them (the .rad file itself carries the command). */
int catalog_to_task(const workload *w, task_spec *out, carma_err *err)
{
    task_spec_init(out);
    out->ngpus = w->ngpus;
    out->mem = w->mem;
    out->batch_size = w->batch_size;
    out->sim = w->sim;
    if (!(out->name = str_dup(w->rad_file)) ||
        (w->summary_file && !(out->summary_path = str_dup(w->summary_file))) ||
        (w->dataset && !(out->dataset = str_dup(w->dataset)))) {
        task_spec_free(out);
        return carma_err_set(err, "out of memory");
    }
    return 0;
}
