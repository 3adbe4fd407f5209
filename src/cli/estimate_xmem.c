/* estimate_xmem.c — `carma estimate`'s xmem modes (estimate_xmem.h): the estimate of a traced
 * run or a saved trace with its parts, and the fit on the synthetic traces with its grid. */
#include "cli/estimate_xmem.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "estimate/xmem.h"
#include "estimate/xmem_run.h"

static int print_xmem(bool json, const xmem_estimate *e)
{
    if (json) {
        json_t *o = json_pack("{s:s, s:I, s:f, s:f, s:f, s:f, s:f, s:i, s:b}", "estimator", "xmem",
                              "mib", (json_int_t)e->total_mib, "context_mib", e->context_mib,
                              "reserved_mib", e->reserved_mib, "workspaces_mib", e->workspaces_mib,
                              "margin_mib", e->margin_mib, "allocated_mib", e->allocated_mib,
                              "steps", e->steps, "convolutions", e->convolutions);
        char *txt = json_dumps(o, JSON_INDENT(2));
        puts(txt);
        free(txt);
        json_decref(o);
        return 0;
    }
    printf("xmem       %8.0f MiB\n", e->total_mib);
    printf("  context     %8.0f MiB  (CUDA context and libraries, %s)\n", e->context_mib,
           e->convolutions ? "with cuDNN" : "no convolutions");
    printf("  reserved    %8.0f MiB  (caching allocator's peak for the tensors)\n",
           e->reserved_mib);
    printf("  workspaces  %+8.0f MiB  (cuBLAS, cuBLASLt and cuDNN workspaces on that peak)\n",
           e->workspaces_mib);
    printf("  margin      %8.0f MiB\n", e->margin_mib);
    printf("  (%d optimizer step%s traced; peak of live tensors %.0f MiB)\n", e->steps,
           e->steps == 1 ? "" : "s", e->allocated_mib);
    return 0;
}

int estimate_run_xmem(bool json, const char *trace, int iterations, char **cmd, int ncmd)
{
    carma_err err;
    xmem_estimate e;
    if (trace) {
        mtrace_events t;
        if (mtrace_load(trace, &t, &err))
            return cli_fail("estimate", &err);
        int rc = xmem_estimate_trace(&t, xmem_default_coeffs(), &e, &err);
        mtrace_free(&t);
        if (rc)
            return cli_fail("estimate", &err);
    } else if (xmem_run(cmd, ncmd, iterations, xmem_default_coeffs(), &e, &err)) {
        return cli_fail("estimate", &err);
    }
    return print_xmem(json, &e);
}

static void print_held(const char *family, const xmem_fit_held *h)
{
    printf("  %s: %zu of %zu rows underestimated (worst %.1f %%), median |relative error| "
           "%.4f\n", family, h->under, h->rows, 100 * h->worst, h->median_err);
}

static void print_step(const xmem_fit_step *s)
{
    char cap[32] = "none";
    if (s->cap_mib > 0)
        snprintf(cap, sizeof cap, "%.0f", s->cap_mib);
    printf("%5.1f  %7s  %10.4f  %6.3f  %11.1f\n", s->ratio, cap, s->median_err, s->margin,
           s->context_mib);
}

int estimate_fit_xmem(const char *index, double band, int folds)
{
    carma_err err;
    xmem_coeffs c;
    xmem_fit_report r;
    if (xmem_fit(index, band, folds, &c, &r, &err))
        return cli_fail("estimate", &err);
    const char *head = "ratio  cap_mib  median_err  margin  context_mib\n";
    printf("workspace band %g x the input; the convolution rows' fit at each ratio, with the cap "
           "chosen:\n%s", band, head);
    for (size_t i = 0; i < r.nsteps; i++)
        if (r.steps[i].cap_mib == c.conv_ws_cap_mib)
            print_step(&r.steps[i]);
    printf("at each cap, its best ratio:\n%s", head);
    for (size_t k = 0; k < XMEM_FIT_CAPS; k++) {
        const xmem_fit_step *b = NULL;
        for (size_t i = 0; i < r.nsteps; i++)
            if (r.steps[i].cap_mib == xmem_fit_caps_mib[k] &&
                (!b || r.steps[i].median_err < b->median_err))
                b = &r.steps[i];
        if (b)
            print_step(b);
    }
    printf("rows: with convolutions %zu, without %zu\n", r.rows_conv, r.rows_plain);
    printf("median |relative error| with the margins: with convolutions %.4f, without %.4f\n",
           r.median_err_conv, r.median_err_plain);
    printf("underestimated with the margin: with convolutions %zu, without %zu\n", r.under_conv,
           r.under_plain);
    printf("coefficients: context_conv %.17g MiB, context_plain %.17g MiB, conv_ws_ratio %.17g,"
           " conv_ws_cap %.17g MiB (0: none)\nmargin_conv %.17g, margin_plain %.17g\n",
           c.context_conv_mib, c.context_plain_mib, c.conv_ws_ratio, c.conv_ws_cap_mib,
           c.margin_conv, c.margin_plain);
    if (r.folds) {
        printf("cross-validated, %d folds (each row estimated by the fit on the others):\n",
               r.folds);
        print_held("with convolutions", &r.cv_conv);
        print_held("without", &r.cv_plain);
    }
    return 0;
}
