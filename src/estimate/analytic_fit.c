/* analytic_fit.c — see analytic_fit.h. */
#include "estimate/analytic_fit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/csv.h"
#include "util/strutil.h"
#include "util/array.h"

typedef struct fit_row {
    carma_terms t;
    double y;
    bool cnn;
} fit_row;

/* The datasets' lower-case layer names as PyTorch module types. */
static const char *module_type(const char *name)
{
    static const char *const map[][2] = {
        {"linear", "Linear"}, {"batch_normalization", "BatchNorm1d"}, {"conv2d", "Conv2d"},
        {"batchnorm2d", "BatchNorm2d"}, {"dropout", "Dropout"},
        {"adaptive_avg_pool2d", "AdaptiveAvgPool2d"}, {"softmax", "Softmax"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(name, map[i][0]))
            return map[i][1];
    return name; /* activations are already module names */
}

int carma_workload_from_tuples(const char *cell, carma_workload *w, carma_err *err)
{
    memset(w, 0, sizeof *w);
    enum { MAXL = 512 };
    char types[MAXL][48];
    double acts[MAXL], params[MAXL];
    size_t n = 0;
    for (const char *p = cell; (p = strchr(p, '('));) {
        char raw[48];
        int used = 0;
        if (n == MAXL ||
            sscanf(p, "('%47[^']', %lf, %lf)%n", raw, &acts[n], &params[n], &used) != 3 ||
            !used)
            return carma_err_set(err, "bad layer tuple near \"%.30s\"", p);
        snprintf(types[n++], sizeof types[0], "%s", module_type(raw));
        p += used;
    }
    if (!n)
        return carma_err_set(err, "no layer tuples");
    for (size_t i = 0; i < n; i++) {
        const char *next = NULL;
        for (size_t j = i + 1; j < n && !next; j++)
            if (strcmp(types[j], "Identity"))
                next = types[j];
        w->has_conv |= !strcmp(types[i], "Conv2d");
        if (carma_workload_push(w, acts[i] * carma_kept_weight(types[i], next), params[i], err)) {
            carma_workload_free(w);
            return -1;
        }
    }
    return 0;
}

static int push_row(fit_row **rows, size_t *n, size_t *cap, const fit_row *r, carma_err *err)
{
    fit_row *nr = array_grow(*rows, cap, *n + 1, sizeof *nr, 1024);
    if (!nr)
        return carma_err_set(err, "out of memory");
    *rows = nr;
    (*rows)[(*n)++] = *r;
    return 0;
}

static int load_rows(const char *path, bool cnn, fit_row **rows, size_t *n, size_t *cap,
                     carma_err *err)
{
    csv_table t;
    if (csv_load(path, &t, err))
        return -1;
    int c_ap = csv_require_column(&t, "Activations-Params", err);
    int c_b = c_ap < 0 ? -1 : csv_require_column(&t, "Batch Size", err);
    int c_m = c_b < 0 ? -1 : csv_require_column(&t, "Max GPU Memory (MiB)", err);
    int c_act = c_m < 0 ? -1 : csv_require_column(&t, "Activation Function", err);
    int c_st = cnn ? csv_column(&t, "Status") : -1;
    int c_fn = csv_column(&t, "Filename");
    if (c_act < 0 || (cnn && (c_st < 0 || c_fn < 0))) {
        csv_free(&t);
        return c_act < 0 ? -1 : carma_err_set(err, "%s: missing Status or Filename column", path);
    }
    int rc = 0;
    for (size_t i = 0; i < t.nrows && !rc; i++) {
        char **f = t.rows[i].fields;
        if (cnn && (strcmp(f[c_st], "SUCCESSFUL") || !strcmp(f[c_act], "None") || !f[c_act][0] ||
                    strstr(f[c_fn], "arch:residual") || strstr(f[c_fn], "arch:dense")))
            continue;
        int64_t batch;
        double mem;
        if (parse_i64(f[c_b], &batch) || batch < 1 || parse_double(f[c_m], &mem) || mem <= 0) {
            rc = carma_err_set(err, "%s:%zu: bad batch size or memory", path, t.rows[i].line);
            break;
        }
        carma_workload w;
        if (carma_workload_from_tuples(f[c_ap], &w, err)) {
            rc = carma_err_prefix(err, "%s:%zu", path, t.rows[i].line);
            break;
        }
        fit_row r = {.y = mem, .cnn = cnn};
        carma_terms_of(&w, (int)batch, OPT_ADAM, &r.t);
        carma_workload_free(&w);
        rc = push_row(rows, n, cap, &r, err);
    }
    csv_free(&t);
    return rc;
}

/* Solves a (n x n) system by Gaussian elimination with partial pivoting. */
static int solve(double a[CARMA_NCOEF][CARMA_NCOEF], double *b, double *x, int n)
{
    for (int i = 0; i < n; i++) {
        int piv = i;
        for (int r = i + 1; r < n; r++)
            if (fabs(a[r][i]) > fabs(a[piv][i]))
                piv = r;
        if (fabs(a[piv][i]) < 1e-300)
            return -1;
        for (int k = 0; k < n; k++) {
            double tmp = a[i][k];
            a[i][k] = a[piv][k];
            a[piv][k] = tmp;
        }
        double tb = b[i];
        b[i] = b[piv];
        b[piv] = tb;
        for (int r = i + 1; r < n; r++) {
            double f = a[r][i] / a[i][i];
            for (int k = i; k < n; k++)
                a[r][k] -= f * a[i][k];
            b[r] -= f * b[i];
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (int k = i + 1; k < n; k++)
            s -= a[i][k] * x[k];
        x[i] = s / a[i][i];
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* q-quantile (nearest rank) of the ratios of one family; sorts a scratch copy. */
static double family_quantile(const fit_row *rows, size_t n, bool cnn, const carma_coeffs *c,
                              double q, double *scratch, size_t *count)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i].cnn == cnn)
            scratch[k++] = rows[i].y / carma_peak_mib(c, &rows[i].t);
    *count = k;
    if (!k)
        return NAN;
    qsort(scratch, k, sizeof *scratch, cmp_double);
    size_t idx = (size_t)ceil(q * (double)k) - 1;
    return scratch[idx < k ? idx : k - 1];
}

int carma_fit(const char *mlp_csv, const char *cnn_csv, carma_coeffs *out, carma_fit_report *rep,
              carma_err *err)
{
    fit_row *rows = NULL;
    size_t n = 0, cap = 0;
    double *scratch = NULL;
    int rc = load_rows(mlp_csv, false, &rows, &n, &cap, err);
    if (!rc)
        rc = load_rows(cnn_csv, true, &rows, &n, &cap, err);
    if (rc)
        goto done;
    /* minimise sum ((y - c.x) / y)^2 */
    double a[CARMA_NCOEF][CARMA_NCOEF] = {{0}}, b[CARMA_NCOEF] = {0};
    for (size_t r = 0; r < n; r++) {
        double w = 1.0 / (rows[r].y * rows[r].y);
        for (int i = 0; i < CARMA_NCOEF; i++) {
            b[i] += w * rows[r].t.x[i] * rows[r].y;
            for (int j = 0; j < CARMA_NCOEF; j++)
                a[i][j] += w * rows[r].t.x[i] * rows[r].t.x[j];
        }
    }
    memset(out, 0, sizeof *out);
    if (solve(a, b, out->c, CARMA_NCOEF)) {
        rc = carma_err_set(err, "the synthetic rows do not determine the coefficients");
        goto done;
    }
    scratch = malloc((n ? n : 1) * sizeof *scratch);
    if (!scratch) {
        rc = carma_err_set(err, "out of memory");
        goto done;
    }
    carma_fit_report r = {0};
    out->margin = 1.0;
    r.median_ratio_mlp = family_quantile(rows, n, false, out, 0.5, scratch, &r.rows_mlp);
    r.p95_ratio_mlp = family_quantile(rows, n, false, out, 0.95, scratch, &r.rows_mlp);
    r.median_ratio_cnn = family_quantile(rows, n, true, out, 0.5, scratch, &r.rows_cnn);
    r.p95_ratio_cnn = family_quantile(rows, n, true, out, 0.95, scratch, &r.rows_cnn);
    out->margin =
        family_quantile(rows, n, true, out, CARMA_FIT_MARGIN_QUANTILE, scratch, &r.rows_cnn);
    for (size_t i = 0; i < n; i++) {
        bool under = out->margin * carma_peak_mib(out, &rows[i].t) < rows[i].y;
        *(rows[i].cnn ? &r.under_cnn : &r.under_mlp) += under;
    }
    if (rep)
        *rep = r;
done:
    free(scratch);
    free(rows);
    return rc;
}
