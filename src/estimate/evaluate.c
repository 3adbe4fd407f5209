/* evaluate.c — see evaluate.h. */
#include "estimate/evaluate.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/csv.h"
#include "util/datadir.h"
#include "util/strutil.h"
#include "util/array.h"
#include "estimate/xmem.h"

const char *const eval_estimator_names[EVAL_NEST] = {"gpumemnet", "horus", "carma", "faketensor",
                                                     "xmem"};
static const mem_source computed[] = {MEM_GPUMEMNET, MEM_HORUS, MEM_CARMA};

/* FakeTensor figures of 40000 in .rad files mean "unknown / whole GPU". */
#define PLACEHOLDER_MIB 40000.0

const char *eval_table_name(eval_table t)
{
    return t == EVAL_REALWORLD ? "realworld" : "carma-workloads";
}

static int push(eval_report *rep, size_t *cap, const eval_row *r, carma_err *err)
{
    eval_row *nr = array_grow(rep->rows, cap, rep->nrows + 1, sizeof *nr, 64);
    if (!nr)
        return carma_err_set(err, "out of memory");
    rep->rows = nr;
    rep->rows[rep->nrows++] = *r;
    return 0;
}

static int estimate_row(estimator *e, eval_row *r, carma_err *err)
{
    char path[PATH_MAX];
    if (estimate_resolve_summary(r->summary, path, sizeof path, err))
        return -1;
    model_summary s;
    if (summary_load(path, &s, err))
        return -1;
    int seq = estimate_seq_len_from_name(path);
    for (int k = 0; k < 3; k++) {
        est_result res;
        if (estimator_run(e, computed[k], &s, r->batch, seq, &res, err)) {
            summary_free(&s);
            return carma_err_prefix(err, "%s", r->summary);
        }
        r->est_mib[k] = res.raw_mib;
        r->has[k] = true;
        if (computed[k] == MEM_GPUMEMNET)
            r->gpumemnet_class = res.cls;
    }
    summary_free(&s);
    return 0;
}

/* The xmem figure of a real-world row, from its trace in data/gpumemnet/xmem_traces/ (listed
 * by model and batch size in its index.csv); none when the row has no trace. */
static int xmem_row(const csv_table *idx, eval_row *r, carma_err *err)
{
    int cm = csv_column(idx, "model"), cb = csv_column(idx, "batch_size"),
        ct = csv_column(idx, "trace");
    if (cm < 0 || cb < 0 || ct < 0)
        return carma_err_set(err, "xmem_traces/index.csv: needs model, batch_size, trace");
    for (size_t i = 0; i < idx->nrows; i++) {
        char **f = idx->rows[i].fields;
        int64_t b;
        if (strcmp(f[cm], r->model) || parse_i64(f[cb], &b) || b != r->batch)
            continue;
        char rel[PATH_MAX], path[PATH_MAX];
        snprintf(rel, sizeof rel, "gpumemnet/xmem_traces/%s", f[ct]);
        mtrace_events t;
        xmem_estimate e;
        if (carma_data_path(rel, path, sizeof path, err) || mtrace_load(path, &t, err))
            return -1;
        int rc = xmem_estimate_trace(&t, xmem_default_coeffs(), &e, err);
        mtrace_free(&t);
        if (rc)
            return -1;
        r->est_mib[EVAL_XMEM] = e.total_mib;
        r->has[EVAL_XMEM] = true;
        return 0;
    }
    return 0;
}

static int load_table(estimator *e, eval_table which, eval_report *rep, size_t *cap, carma_err *err)
{
    char path[PATH_MAX];
    const char *rel = which == EVAL_REALWORLD ? "gpumemnet/realworld_eval.csv"
                                              : "gpumemnet/carma_rad_estimates.csv";
    if (carma_data_path(rel, path, sizeof path, err))
        return -1;
    csv_table t;
    if (csv_load(path, &t, err))
        return -1;
    const char *c_name = which == EVAL_REALWORLD ? "model" : "rad_file";
    const char *c_batch = which == EVAL_REALWORLD ? "batch_size" : "batch_size_field";
    int cm = csv_require_column(&t, c_name, err), cb = csv_require_column(&t, c_batch, err);
    int ca = csv_require_column(&t, "actual_mib", err),
        cs = csv_require_column(&t, "summary_file", err);
    int cf = csv_require_column(&t, "faketensor_mib", err);
    int rc = (cm < 0 || cb < 0 || ca < 0 || cs < 0 || cf < 0) ? -1 : 0;
    csv_table xidx = {0};
    char xpath[PATH_MAX];
    if (!rc && which == EVAL_REALWORLD &&
        (carma_data_path("gpumemnet/xmem_traces/index.csv", xpath, sizeof xpath, err) ||
         csv_load(xpath, &xidx, err)))
        rc = -1;
    for (size_t i = 0; !rc && i < t.nrows; i++) {
        char **f = t.rows[i].fields;
        eval_row r = {.table = which, .gpumemnet_class = -1};
        int64_t b;
        if (parse_double(f[ca], &r.actual_mib) || !f[cs][0])
            continue; /* no measurement or no summary */
        if (parse_i64(f[cb], &b) || b < 1) {
            rc = carma_err_set(err, "%s:%zu: bad batch size '%s'", path, t.rows[i].line, f[cb]);
            break;
        }
        /* every error is relative to the measured peak: 0 or less would make them infinite
         * (JSON has no such number, and --json dropped the estimators' summaries) */
        if (!(r.actual_mib > 0)) {
            rc = carma_err_set(err, "%s:%zu: bad measured peak '%s' (MiB, above 0)", path,
                               t.rows[i].line, f[ca]);
            break;
        }
        r.batch = (int)b;
        snprintf(r.model, sizeof r.model, "%s", f[cm]);
        snprintf(r.summary, sizeof r.summary, "%s", f[cs]);
        bool dup = false; /* the .rad files repeat tasks (20 and 50 epochs) */
        for (size_t k = 0; k < rep->nrows; k++)
            dup |= rep->rows[k].table == which && rep->rows[k].batch == r.batch &&
                   !strcmp(rep->rows[k].summary, r.summary);
        if (dup)
            continue;
        double ft;
        if (!parse_double(f[cf], &ft) && ft < PLACEHOLDER_MIB) {
            r.est_mib[EVAL_FAKETENSOR] = ft;
            r.has[EVAL_FAKETENSOR] = true;
        }
        rc = estimate_row(e, &r, err);
        if (!rc && which == EVAL_REALWORLD)
            rc = xmem_row(&xidx, &r, err);
        if (!rc)
            rc = push(rep, cap, &r, err);
    }
    csv_free(&xidx);
    csv_free(&t);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void compute_stats(eval_report *rep)
{
    double *errs = malloc((rep->nrows ? rep->nrows : 1) * sizeof *errs);
    for (int tb = 0; tb < EVAL_NTABLES; tb++) {
        for (int k = 0; k < EVAL_NEST; k++) {
            eval_stats st = {.table = (eval_table)tb, .estimator = k};
            double sum = 0;
            for (size_t i = 0; i < rep->nrows; i++) {
                const eval_row *r = &rep->rows[i];
                if ((int)r->table != tb || !r->has[k])
                    continue;
                double ratio = r->est_mib[k] / r->actual_mib;
                if (errs)
                    errs[st.rows] = fabs(ratio - 1);
                sum += fabs(ratio - 1);
                st.rows++;
                st.underestimates += ratio < 1;
                st.max_over_ratio = fmax(st.max_over_ratio, ratio);
            }
            if (!st.rows)
                continue;
            st.mean_abs_rel_err = sum / (double)st.rows;
            if (errs) {
                qsort(errs, st.rows, sizeof *errs, cmp_double);
                st.median_abs_rel_err = st.rows % 2
                                            ? errs[st.rows / 2]
                                            : (errs[st.rows / 2 - 1] + errs[st.rows / 2]) / 2;
            }
            rep->stats[rep->nstats++] = st;
        }
    }
    free(errs);
}

int eval_run(estimator *e, eval_report *rep, carma_err *err)
{
    memset(rep, 0, sizeof *rep);
    size_t cap = 0;
    if (load_table(e, EVAL_REALWORLD, rep, &cap, err) ||
        load_table(e, EVAL_CARMA_WORKLOADS, rep, &cap, err)) {
        eval_free(rep);
        return -1;
    }
    compute_stats(rep);
    return 0;
}

void eval_free(eval_report *rep)
{
    free(rep->rows);
    memset(rep, 0, sizeof *rep);
}
