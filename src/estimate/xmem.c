/* xmem.c — see xmem.h. The fit, on the synthetic traces only: estimate = context + peak x
 * (1 + margin), where peak is the replayed reserved peak with workspaces. No synthetic row may
 * be underestimated, so for a margin m the context of a family (with / without convolutions)
 * is the smallest that covers every row; m is the one, on a grid, whose estimates have the
 * smallest median |relative error|; the cuDNN workspace rule's ratio (xmem.h) is the one, on
 * a grid, that gives the convolution rows the smallest such error. Each family keeps its own
 * margin. */
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

int xmem_replay_band(const mtrace_events *t, double ratio, double band, replay_result *r,
                     carma_err *err)
{
    memset(r, 0, sizeof *r);
    /* without convolutions every k replays the same: once is enough */
    double lo = t->convs ? fmax(0, ratio - band) : ratio;
    for (double k = ratio; k >= lo - 1e-9; k -= XMEM_WS_STEP) {
        replay_rules rules = {.workspaces = true, .conv_ws_ratio = fmax(0, k)};
        replay_result one;
        if (mtrace_replay(t, &rules, &one, err))
            return -1;
        if (one.peak_reserved > r->peak_reserved)
            *r = one;
    }
    return 0;
}

int xmem_estimate_trace(const mtrace_events *t, const xmem_coeffs *c, xmem_estimate *e,
                        carma_err *err)
{
    memset(e, 0, sizeof *e);
    replay_rules bare = {.workspaces = false};
    replay_result rb, rf;
    if (mtrace_replay(t, &bare, &rb, err) || xmem_replay_band(t, c->conv_ws_ratio, XMEM_WS_BAND, &rf, err))
        return -1;
    e->convolutions = t->convs > 0;
    e->steps = t->steps;
    e->context_mib = e->convolutions ? c->context_conv_mib : c->context_plain_mib;
    e->reserved_mib = (double)rb.peak_reserved / MIB;
    e->workspaces_mib = ((double)rf.peak_reserved - (double)rb.peak_reserved) / MIB;
    e->margin_mib = (e->convolutions ? c->margin_conv : c->margin_plain) *
                    (double)rf.peak_reserved / MIB;
    e->allocated_mib = (double)rb.peak_allocated / MIB;
    e->total_mib = ceil(e->context_mib + (double)rf.peak_reserved / MIB + e->margin_mib);
    return 0;
}

typedef struct fit_row {
    mtrace_events t;
    double measured;
    bool conv;
    double peak; /* MiB, with workspaces, for the ratio being tried */
} fit_row;

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

static int load_rows(const char *index_csv, fit_row **rows, size_t *n, carma_err *err)
{
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
    char *d = dirname(dir);
    *rows = calloc(tb.nrows ? tb.nrows : 1, sizeof **rows);
    *n = 0;
    int rc = *rows ? 0 : carma_err_set(err, "out of memory");
    for (size_t i = 0; !rc && i < tb.nrows; i++) {
        fit_row *r = &(*rows)[*n];
        char path[PATH_MAX];
        char **f = tb.rows[i].fields;
        if (parse_double(f[cm], &r->measured) || r->measured <= 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", d, f[ct]);
        if ((rc = mtrace_load(path, &r->t, err)))
            break;
        r->conv = r->t.convs > 0;
        (*n)++;
    }
    csv_free(&tb);
    return rc;
}

static int replay_all(fit_row *rows, size_t n, double ratio, double band, carma_err *err)
{
    for (size_t i = 0; i < n; i++) {
        replay_result r;
        if (xmem_replay_band(&rows[i].t, ratio, band, &r, err))
            return -1;
        rows[i].peak = (double)r.peak_reserved / MIB;
    }
    return 0;
}

/* For one family (with or without convolutions) and a margin m: the smallest context that
 * leaves no row underestimated, and the median |relative error| that gives. */
static double context_for(const fit_row *rows, size_t n, bool conv, double m, double *buf,
                          double *med_err)
{
    double ctx = -INFINITY;
    for (size_t i = 0; i < n; i++)
        if (rows[i].conv == conv)
            ctx = fmax(ctx, rows[i].measured - rows[i].peak * (1 + m));
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i].conv == conv)
            buf[k++] = fabs((ctx + rows[i].peak * (1 + m)) / rows[i].measured - 1);
    *med_err = median(buf, k);
    return ctx;
}

/* The margin (0..MAX_MARGIN in steps) and context with the smallest median error. */
#define MAX_MARGIN 2.0
#define MARGIN_STEP 0.005
static void fit_family(const fit_row *rows, size_t n, bool conv, double *buf, double *ctx,
                       double *margin, double *med_err)
{
    *med_err = INFINITY;
    for (double m = 0; m <= MAX_MARGIN + 1e-9; m += MARGIN_STEP) {
        double e, c = context_for(rows, n, conv, m, buf, &e);
        if (e < *med_err) {
            *med_err = e;
            *ctx = c;
            *margin = m;
        }
    }
}

int xmem_fit(const char *index_csv, double band, xmem_coeffs *c, xmem_fit_report *r,
             carma_err *err)
{
    memset(r, 0, sizeof *r);
    memset(c, 0, sizeof *c);
    fit_row *rows;
    size_t n;
    int rc = load_rows(index_csv, &rows, &n, err);
    double *buf = rc ? NULL : malloc((n ? n : 1) * sizeof *buf);
    if (!rc && !buf)
        rc = carma_err_set(err, "out of memory");
    double best = INFINITY, best_ratio = 0;
    for (size_t k = 0; !rc && k < XMEM_FIT_STEPS; k++) {
        double ratio = k * XMEM_WS_STEP, ctx, m, e;
        if ((rc = replay_all(rows, n, ratio, band, err)))
            break;
        fit_family(rows, n, true, buf, &ctx, &m, &e);
        r->steps[r->nsteps++] = (xmem_fit_step){ratio, e, m, ctx};
        if (e < best) {
            best = e;
            best_ratio = ratio;
        }
    }
    if (!rc && !(rc = replay_all(rows, n, best_ratio, band, err))) {
        c->conv_ws_ratio = best_ratio;
        fit_family(rows, n, true, buf, &c->context_conv_mib, &c->margin_conv,
                   &r->median_err_conv);
        fit_family(rows, n, false, buf, &c->context_plain_mib, &c->margin_plain,
                   &r->median_err_plain);
        for (size_t i = 0; i < n; i++) {
            double ctx = rows[i].conv ? c->context_conv_mib : c->context_plain_mib;
            double m = rows[i].conv ? c->margin_conv : c->margin_plain;
            bool under = ctx + rows[i].peak * (1 + m) < rows[i].measured - 1e-9;
            if (rows[i].conv) {
                r->rows_conv++;
                r->under_conv += under;
            } else {
                r->rows_plain++;
                r->under_plain += under;
            }
        }
    }
    for (size_t i = 0; rows && i < n; i++)
        mtrace_free(&rows[i].t);
    free(rows);
    free(buf);
    return rc;
}
