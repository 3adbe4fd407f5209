/* xmem_fit.c — fitting the xmem estimator (xmem.h) on traces of the synthetic datasets only,
 * and measuring how well that fit holds on rows it did not see.
 *
 * The rule: estimate = context + peak x (1 + margin), where peak is the replayed reserved peak
 * with workspaces. No row may be underestimated, so for a margin m the context of a family
 * (with / without convolutions) is the smallest that covers every row; m is the one, on a
 * grid, whose estimates have the smallest median |relative error|; the cuDNN workspace rule's
 * ratio and cap (xmem.h) are the pair, on a grid, that gives the convolution rows the smallest
 * such error. Each family keeps its own margin.
 *
 * A rule that covers every row it was fitted on says nothing of rows it was not, so the fit
 * is also cross-validated: rows are dealt into K folds by their place in the index, and each
 * fold is estimated by the fit on the others. Every row is replayed once per point of the grid
 * and the peaks kept, so the K + 1 fits cost no more replays than one. */
#include "estimate/xmem.h"

#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/csv.h"
#include "util/strutil.h"

#define MIB (1024.0 * 1024.0)

typedef struct fit_row {
    double measured;
    bool conv;
    int fold;
} fit_row;

typedef struct fit_data {
    fit_row *rows;
    size_t n;
    double *peak;   /* peak[p * n + i]: row i's reserved peak (MiB) at grid point p (cap c,
                     * ratio k: p = c * XMEM_FIT_STEPS + k), band applied */
    double *buf;    /* n scratch values */
} fit_data;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

const double xmem_fit_caps_mib[XMEM_FIT_CAPS] = {0, 16384, 8192, 4096, 2048, 1024, 512, 256};

#define FIT_POINTS (XMEM_FIT_CAPS * XMEM_FIT_STEPS)

/* Row i's single-ratio peaks at every grid point, then the band's: the largest over
 * [ratio - band, ratio] (as xmem_replay_band replays it). A cap no workspace of the row
 * reaches replays as no cap: not replayed again. */
static int replay_row(const mtrace_events *t, double band, double *peak, size_t n, size_t i,
                      carma_err *err)
{
    double one[FIT_POINTS], widest = 0; /* the largest convolution input, MiB */
    for (size_t e = 0; e < t->n; e++)
        if (t->ev[e].kind == TEV_CONV)
            widest = fmax(widest, (double)t->ev[e].a / MIB);
    for (size_t c = 0; c < XMEM_FIT_CAPS; c++)
        for (size_t k = 0; k < XMEM_FIT_STEPS; k++) {
            double cap = xmem_fit_caps_mib[c], ratio = k * XMEM_WS_STEP;
            size_t p = c * XMEM_FIT_STEPS + k;
            if ((k > 0 && !t->convs) || (c > 0 && !(ratio * widest > cap))) {
                one[p] = one[k > 0 && !t->convs ? c * XMEM_FIT_STEPS : k];
                continue;
            }
            replay_rules rules = {.workspaces = true, .conv_ws_ratio = ratio,
                                  .conv_ws_cap_mib = cap};
            replay_result r;
            if (mtrace_replay(t, &rules, &r, err))
                return -1;
            one[p] = (double)r.peak_reserved / MIB;
        }
    size_t wide = t->convs ? (size_t)floor(band / XMEM_WS_STEP + 2e-9) : 0;
    for (size_t c = 0; c < XMEM_FIT_CAPS; c++)
        for (size_t k = 0; k < XMEM_FIT_STEPS; k++) {
            double p = 0;
            for (size_t j = 0; j <= wide && j <= k; j++)
                p = fmax(p, one[c * XMEM_FIT_STEPS + k - j]);
            peak[(c * XMEM_FIT_STEPS + k) * n + i] = p;
        }
    return 0;
}

static int load_rows(const char *index_csv, double band, int folds, fit_data *d, carma_err *err)
{
    memset(d, 0, sizeof *d);
    csv_table tb;
    if (csv_load(index_csv, &tb, err))
        return -1;
    int ct = csv_require_column(&tb, "trace", err);
    int cm = csv_require_column(&tb, "measured_mib", err);
    if (ct < 0 || cm < 0) {
        csv_free(&tb);
        return -1;
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", index_csv);
    char *base = dirname(dir);
    size_t cap = tb.nrows ? tb.nrows : 1;
    d->rows = calloc(cap, sizeof *d->rows);
    d->peak = calloc(cap * FIT_POINTS, sizeof *d->peak);
    d->buf = calloc(cap, sizeof *d->buf);
    int rc = d->rows && d->peak && d->buf ? 0 : carma_err_set(err, "out of memory");
    for (size_t i = 0; !rc && i < tb.nrows; i++) {
        fit_row *r = &d->rows[d->n];
        char path[PATH_MAX];
        char **f = tb.rows[i].fields;
        if (parse_double(f[cm], &r->measured) || r->measured <= 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", base, f[ct]);
        mtrace_events t;
        if ((rc = mtrace_load(path, &t, err)))
            break;
        r->conv = t.convs > 0;
        r->fold = folds > 1 ? (int)(d->n % (size_t)folds) : -1;
        rc = replay_row(&t, band, d->peak, cap, d->n, err);
        mtrace_free(&t);
        d->n += !rc;
    }
    csv_free(&tb); /* clears tb: the stride is cap */
    /* peaks were laid out for every index row; close the gaps of the rows left out */
    for (size_t k = 1; !rc && d->n < cap && k < FIT_POINTS; k++)
        memmove(d->peak + k * d->n, d->peak + k * cap, d->n * sizeof *d->peak);
    return rc;
}

/* Whether row i takes part in a fit that leaves out fold `out` (-1: none). */
static bool in_fit(const fit_row *r, bool conv, int out)
{
    return r->conv == conv && (out < 0 || r->fold != out);
}

/* For one family, grid point k and margin m, the rows outside fold `out`: the smallest
 * context that leaves none underestimated, and the median |relative error| that gives. */
static double context_for(const fit_data *d, size_t k, bool conv, int out, double m,
                          double *med_err)
{
    const double *peak = d->peak + k * d->n;
    double ctx = -INFINITY;
    for (size_t i = 0; i < d->n; i++)
        if (in_fit(&d->rows[i], conv, out))
            ctx = fmax(ctx, d->rows[i].measured - peak[i] * (1 + m));
    size_t used = 0;
    for (size_t i = 0; i < d->n; i++)
        if (in_fit(&d->rows[i], conv, out))
            d->buf[used++] = fabs((ctx + peak[i] * (1 + m)) / d->rows[i].measured - 1);
    *med_err = median(d->buf, used);
    return ctx;
}

/* The margin (0..MAX_MARGIN in steps) and context with the smallest median error. */
#define MAX_MARGIN 2.0
#define MARGIN_STEP 0.005
static void fit_family(const fit_data *d, size_t k, bool conv, int out, double *ctx,
                       double *margin, double *med_err)
{
    *med_err = INFINITY;
    *ctx = -INFINITY;
    *margin = 0;
    for (double m = 0; m <= MAX_MARGIN + 1e-9; m += MARGIN_STEP) {
        double e, c = context_for(d, k, conv, out, m, &e);
        if (e < *med_err) {
            *med_err = e;
            *ctx = c;
            *margin = m;
        }
    }
}

/* The whole fit on the rows outside fold `out`; the grid's steps into r when r is not NULL.
 * Returns the chosen grid point (cap, ratio). */
static size_t fit_all(const fit_data *d, int out, xmem_coeffs *c, xmem_fit_report *r)
{
    double best = INFINITY;
    size_t best_k = 0;
    for (size_t k = 0; k < FIT_POINTS; k++) {
        double ctx, m, e;
        fit_family(d, k, true, out, &ctx, &m, &e);
        if (r)
            r->steps[r->nsteps++] = (xmem_fit_step){(k % XMEM_FIT_STEPS) * XMEM_WS_STEP,
                                                    xmem_fit_caps_mib[k / XMEM_FIT_STEPS], e,
                                                    m, ctx};
        if (e < best) {
            best = e;
            best_k = k;
        }
    }
    double e_conv, e_plain;
    c->conv_ws_ratio = (best_k % XMEM_FIT_STEPS) * XMEM_WS_STEP;
    c->conv_ws_cap_mib = xmem_fit_caps_mib[best_k / XMEM_FIT_STEPS];
    fit_family(d, best_k, true, out, &c->context_conv_mib, &c->margin_conv, &e_conv);
    fit_family(d, best_k, false, out, &c->context_plain_mib, &c->margin_plain, &e_plain);
    if (r) {
        r->median_err_conv = e_conv;
        r->median_err_plain = e_plain;
    }
    return best_k;
}

/* Row i's relative error ((estimate - measured) / measured) under c at grid point k. */
static double rel_err(const fit_data *d, size_t k, size_t i, const xmem_coeffs *c)
{
    const fit_row *row = &d->rows[i];
    double est = row->conv ? c->context_conv_mib + d->peak[k * d->n + i] * (1 + c->margin_conv)
                           : c->context_plain_mib +
                                 d->peak[k * d->n + i] * (1 + c->margin_plain);
    return est / row->measured - 1;
}

/* One family's held-out figures over the folds: every row estimated by the fit without it. */
static void held_out(const fit_data *d, int folds, bool conv, const size_t *fold_k,
                     const xmem_coeffs *fold_c, xmem_fit_held *h)
{
    size_t used = 0;
    h->worst = 0;
    for (size_t i = 0; i < d->n; i++) {
        const fit_row *row = &d->rows[i];
        if (row->conv != conv || row->fold < 0 || row->fold >= folds)
            continue;
        const xmem_coeffs *c = &fold_c[row->fold];
        if (!isfinite(conv ? c->context_conv_mib : c->context_plain_mib))
            continue; /* none of this family in the other folds: no fit to judge */
        double e = rel_err(d, fold_k[row->fold], i, c);
        h->under += e < -1e-9;
        h->worst = fmin(h->worst, e);
        d->buf[used++] = fabs(e);
    }
    h->rows = used;
    h->median_err = median(d->buf, used);
}

int xmem_fit(const char *index_csv, double band, int folds, xmem_coeffs *c, xmem_fit_report *r,
             carma_err *err)
{
    memset(r, 0, sizeof *r);
    memset(c, 0, sizeof *c);
    if (folds == 1 || folds < 0 || folds > XMEM_MAX_FOLDS)
        return carma_err_set(err, "folds must be 0 (none) or 2 to %d, not %d", XMEM_MAX_FOLDS,
                             folds);
    fit_data d;
    int rc = load_rows(index_csv, band, folds, &d, err);
    if (!rc) {
        size_t k = fit_all(&d, -1, c, r);
        for (size_t i = 0; i < d.n; i++) {
            bool under = rel_err(&d, k, i, c) < -1e-9;
            if (d.rows[i].conv) {
                r->rows_conv++;
                r->under_conv += under;
            } else {
                r->rows_plain++;
                r->under_plain += under;
            }
        }
        r->folds = folds;
        if (folds > 1) {
            xmem_coeffs fold_c[XMEM_MAX_FOLDS];
            size_t fold_k[XMEM_MAX_FOLDS];
            for (int f = 0; f < folds; f++)
                fold_k[f] = fit_all(&d, f, &fold_c[f], NULL);
            held_out(&d, folds, true, fold_k, fold_c, &r->cv_conv);
            held_out(&d, folds, false, fold_k, fold_c, &r->cv_plain);
        }
    }
    free(d.rows);
    free(d.peak);
    free(d.buf);
    return rc;
}
