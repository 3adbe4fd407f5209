/* estimate.c — `carma estimate`: its options and modes; memory estimates from a model summary,
 * the evaluation of every estimator on measured peaks, GPUMemNet training and the carma
 * estimator's fit (the xmem modes: estimate_xmem.c). */
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/estimate_xmem.h"
#include "estimate/analytic_fit.h"
#include "estimate/estimate.h"
#include "estimate/evaluate.h"
#include "estimate/mlptrain.h"
#include "estimate/xmem.h"
#include "estimate/xmem_run.h"
#include "util/datadir.h"
#include "util/strutil.h"

static const char *const usage =
    "usage: carma estimate --summary FILE --batch N [--estimator NAME] [--seq-len N]\n"
    "                      [--optimizer adam|sgd|sgd-momentum] [--json]\n"
    "       carma estimate --eval [--json]\n"
    "       carma estimate --train-gpumemnet [--folds K] [--epochs N] [--out FILE] [--json]\n"
    "       carma estimate --fit-carma\n"
    "       carma estimate --run [--iterations K] [--json] -- COMMAND [ARGS...]\n"
    "       carma estimate --trace FILE [--json]\n"
    "       carma estimate --fit-xmem INDEX [--ws-band W] [--folds K]\n\n"
    "Estimates the peak GPU memory (MiB, as nvidia-smi shows it) of training a model, from its\n"
    "summary (torchsummary, torchinfo, or a module printout with parameter counts).\n"
    "  --estimator NAME  gpumemnet (published classifiers, 8000 MiB bins), horus (formula),\n"
    "                    carma (analytic, the default) or all\n"
    "  --seq-len N       tokens per sample for module printouts (default: from the file name\n"
    "                    \"sl:N\", else 512); a table (torchsummary, torchinfo) has its own\n"
    "  --optimizer O     optimizer state the carma estimator counts (default adam); not with\n"
    "                    --estimator gpumemnet or horus\n"
    "  --json            JSON output: {estimator, mib[, class]}, an array with --estimator all\n"
    "  --eval            every estimator on the real-world models and the CARMA workloads:\n"
    "                    per-row figures, then per estimator the median and mean absolute\n"
    "                    relative error, underestimates and the largest over-estimate ratio\n"
    "  --train-gpumemnet train the MLP-ensemble on data/gpumemnet/mlp_data_step2.csv (1 GB bins)\n"
    "                    with K-fold cross-validation (default 3 folds, 300 epochs, seed 42);\n"
    "                    --out writes the weights trained on all rows\n"
    "  --fit-carma       fit the carma estimator on the synthetic datasets and print the\n"
    "                    coefficients\n"
    "  --run             the xmem estimator: run the PyTorch training COMMAND (a script, after\n"
    "                    python3 or not, or -m MODULE) on the CPU under carma's tracer, as you\n"
    "                    (never as root), until its K-th optimizer step (default 3; K of each\n"
    "                    of up to 4 optimizers, as a GAN has two), replay its memory\n"
    "                    requests through a model of PyTorch's CUDA caching\n"
    "                    allocator and print the estimate with its parts (context, reserved\n"
    "                    peak, workspaces, margin). Needs /usr/bin/python3 with torch.\n"
    "                    A script still short of its steps after $CARMA_TRACE_TIMEOUT seconds\n"
    "                    (default 600; over 0 and at most 86400, fractions allowed) is stopped.\n"
    "  --trace FILE      the same estimate from a trace the tracer wrote\n"
    "  --fit-xmem INDEX  fit the xmem estimator's workspace rule, contexts and margin on traces\n"
    "                    of the synthetic datasets (tools/xmem_synthetic.py writes INDEX);\n"
    "                    prints the fit at each workspace ratio (with the cap chosen) and\n"
    "                    the best ratio at each cap tried, the coefficients, and how they\n"
    "                    hold on rows they were not fitted on: K-fold cross-validation,\n"
    "                    row i in fold i mod K (default 5; 0: none)\n"
    "  --ws-band W       with --fit-xmem, to compare: fit with the workspace rule's band\n"
    "                    W x the input wide (default 1, the estimator's; 0: one size)\n"
    "Data files are read from $CARMA_DATA_DIR, else PREFIX/share/carma of an installed\n"
    "carma (" CARMA_INSTALL_DATADIR "), or the source tree's data/ (`carma --help`).\n";

typedef struct est_args {
    const char *summary, *estimator, *out, *optimizer, *trace, *fit_xmem;
    int batch, seq_len, folds, epochs, iterations;
    double ws_band; /* --fit-xmem's band, XMEM_WS_BAND unless --ws-band */
    bool batch_set, folds_set, json, eval, train, fit, run;
} est_args;

/* An int option of at least `min` (cli_int_arg; INT_MIN: its mode checks it). */
static int parse_int_opt(const char *name, const char *v, int min, int *out)
{
    int64_t x;
    if (cli_int_arg("estimate", name, v, min, INT_MAX, &x))
        return EXIT_USAGE;
    *out = (int)x;
    return 0;
}

static int print_estimates(const est_args *a)
{
    carma_err err;
    bool all = !strcasecmp(a->estimator, "all");
    mem_source src = MEM_CARMA;
    if (!all && !mem_source_from_estimator(a->estimator, &src) && src == MEM_XMEM)
        return cli_usage_error("estimate", "the xmem estimator reads no summary: carma estimate "
                                           "--run -- COMMAND (or --trace FILE)");
    if (!all && (mem_source_from_estimator(a->estimator, &src) || !estimator_computes(src)))
        return cli_usage_error("estimate", "unknown estimator '%s' (gpumemnet, horus, carma, all)",
                               a->estimator);
    if (a->optimizer && !all && src != MEM_CARMA) /* it would be ignored */
        return cli_usage_error("estimate", "--optimizer counts for the carma estimator only, not "
                                           "%s", mem_source_estimator_name(src));
    estimator e;
    estimator_init(&e);
    if (a->optimizer && carma_optimizer_from_name(a->optimizer, &e.optimizer)) {
        estimator_free(&e);
        return cli_usage_error("estimate", "unknown optimizer '%s' (adam, sgd, sgd-momentum)",
                               a->optimizer);
    }
    char path[PATH_MAX];
    model_summary s;
    if (estimate_resolve_summary(a->summary, path, sizeof path, &err) ||
        summary_load(path, &s, &err)) {
        estimator_free(&e);
        return cli_fail("estimate", &err);
    }
    if (a->seq_len > 0 && s.format != SUMMARY_MODULE_REPR) { /* a table gives its own sizes */
        int rc = cli_usage_error("estimate", "--seq-len is for module printouts; %s is a %s "
                                 "table", a->summary, summary_format_name(s.format));
        summary_free(&s);
        estimator_free(&e);
        return rc;
    }
    int seq = a->seq_len > 0 ? a->seq_len : estimate_seq_len_from_name(path);
    const mem_source srcs[] = {MEM_GPUMEMNET, MEM_HORUS, MEM_CARMA};
    json_t *arr = json_array();
    int rc = 0;
    for (int k = 0; k < 3 && !rc; k++) {
        if (!all && srcs[k] != src)
            continue;
        est_result r;
        if (estimator_run(&e, srcs[k], &s, a->batch, seq, &r, &err)) {
            rc = cli_fail("estimate", &err);
            break;
        }
        const char *name = mem_source_estimator_name(srcs[k]);
        json_t *o = json_pack("{s:s, s:I}", "estimator", name, "mib", (json_int_t)r.mib);
        if (r.cls >= 0)
            json_object_set_new(o, "class", json_integer(r.cls));
        json_array_append_new(arr, o);
    }
    /* printed once every estimator has given its figure: a failing one leaves no partial
     * table, as it leaves no partial JSON */
    size_t i;
    json_t *o;
    if (!rc && !a->json) {
        json_array_foreach(arr, i, o) {
            json_t *cls = json_object_get(o, "class");
            printf("%-10s %8llu MiB", json_string_value(json_object_get(o, "estimator")),
                   (unsigned long long)json_integer_value(json_object_get(o, "mib")));
            if (cls)
                printf("  (class %lld)", (long long)json_integer_value(cls));
            putchar('\n');
        }
    }
    if (!rc && a->json) {
        json_t *out = all ? arr : json_array_get(arr, 0);
        char *txt = json_dumps(out, JSON_INDENT(2));
        puts(txt);
        free(txt);
    }
    json_decref(arr);
    summary_free(&s);
    estimator_free(&e);
    return rc;
}

static int run_eval(const est_args *a)
{
    carma_err err;
    estimator e;
    estimator_init(&e);
    eval_report rep;
    int rc = eval_run(&e, &rep, &err);
    estimator_free(&e);
    if (rc)
        return cli_fail("estimate", &err);
    if (a->json) {
        json_t *rows = json_array(), *sum = json_array();
        for (size_t i = 0; i < rep.nrows; i++) {
            const eval_row *r = &rep.rows[i];
            json_t *o = json_pack("{s:s, s:s, s:s, s:i, s:f}", "table", eval_table_name(r->table),
                                  "model", r->model, "summary", r->summary, "batch", r->batch,
                                  "actual_mib", r->actual_mib);
            for (int k = 0; k < EVAL_NEST; k++)
                json_object_set_new(o, eval_estimator_names[k],
                                    r->has[k] ? json_real(r->est_mib[k]) : json_null());
            json_array_append_new(rows, o);
        }
        for (size_t i = 0; i < rep.nstats; i++) {
            const eval_stats *st = &rep.stats[i];
            json_array_append_new(sum, json_pack("{s:s, s:s, s:I, s:f, s:f, s:I, s:f}", "table",
                                                 eval_table_name(st->table), "estimator",
                                                 eval_estimator_names[st->estimator], "rows",
                                                 (json_int_t)st->rows, "median_abs_rel_err",
                                                 st->median_abs_rel_err, "mean_abs_rel_err",
                                                 st->mean_abs_rel_err, "underestimates",
                                                 (json_int_t)st->underestimates, "max_over_ratio",
                                                 st->max_over_ratio));
        }
        json_t *doc = json_pack("{s:o, s:o}", "rows", rows, "summary", sum);
        char *txt = json_dumps(doc, JSON_INDENT(2));
        puts(txt);
        free(txt);
        json_decref(doc);
    } else {
        printf("%-16s %-34s %6s %9s", "table", "summary", "batch", "actual");
        for (int k = 0; k < EVAL_NEST; k++)
            printf(" %10s", eval_estimator_names[k]);
        putchar('\n');
        for (size_t i = 0; i < rep.nrows; i++) {
            const eval_row *r = &rep.rows[i];
            printf("%-16s %-34s %6d %9.0f", eval_table_name(r->table), r->summary, r->batch,
                   r->actual_mib);
            for (int k = 0; k < EVAL_NEST; k++) {
                if (r->has[k])
                    printf(" %10.0f", r->est_mib[k]);
                else
                    printf(" %10s", "-");
            }
            putchar('\n');
        }
        printf("\n%-16s %-11s %5s %11s %11s %7s %9s\n", "table", "estimator", "rows", "median_err",
               "mean_err", "under", "max_over");
        for (size_t i = 0; i < rep.nstats; i++) {
            const eval_stats *st = &rep.stats[i];
            printf("%-16s %-11s %5zu %10.1f%% %10.1f%% %7zu %8.2fx\n", eval_table_name(st->table),
                   eval_estimator_names[st->estimator], st->rows, 100 * st->median_abs_rel_err,
                   100 * st->mean_abs_rel_err, st->underestimates, st->max_over_ratio);
        }
    }
    eval_free(&rep);
    return 0;
}

static int run_fit(void)
{
    carma_err err;
    char mlp[PATH_MAX], cnn[PATH_MAX];
    if (carma_data_path("gpumemnet/mlp_data_step2.csv", mlp, sizeof mlp, &err) ||
        carma_data_path("gpumemnet/cnn_data_step1_partial_2024-09-22.csv", cnn, sizeof cnn, &err))
        return cli_fail("estimate", &err);
    carma_coeffs c;
    carma_fit_report r;
    if (carma_fit(mlp, cnn, &c, &r, &err))
        return cli_fail("estimate", &err);
    printf("rows: mlp %zu, cnn %zu\n", r.rows_mlp, r.rows_cnn);
    printf("measured/fitted: mlp median %.4f p95 %.4f; cnn median %.4f p95 %.4f\n",
           r.median_ratio_mlp, r.p95_ratio_mlp, r.median_ratio_cnn, r.p95_ratio_cnn);
    printf("underestimated with the margin: mlp %zu, cnn %zu\n", r.under_mlp, r.under_cnn);
    printf("coefficients: context %.17g MiB, cudnn %.17g MiB, state %.17g, activations %.17g, "
           "largest output %.17g\nmargin %.17g\n",
           c.c[0], c.c[1], c.c[2], c.c[3], c.c[4], c.margin);
    return 0;
}

static int run_train(const est_args *a)
{
    carma_err err;
    char csv[PATH_MAX];
    if (carma_data_path("gpumemnet/mlp_data_step2.csv", csv, sizeof csv, &err))
        return cli_fail("estimate", &err);
    mlp_dataset ds;
    if (mlp_dataset_load_mlp(csv, &ds, &err))
        return cli_fail("estimate", &err);
    train_options opt;
    train_options_defaults(&opt);
    if (a->epochs > 0)
        opt.epochs = a->epochs;
    if (a->folds < 2 || (size_t)a->folds > ds.n) {
        mlp_dataset_free(&ds);
        return cli_usage_error("estimate", "--folds must be between 2 and the number of rows");
    }
    cv_result cv;
    if (mlp_cross_validate(&ds, a->folds, &opt, &cv, &err)) {
        mlp_dataset_free(&ds);
        return cli_fail("estimate", &err);
    }
    if (a->json) {
        json_t *folds = json_array();
        for (int f = 0; f < a->folds; f++)
            json_array_append_new(folds, json_real(cv.fold_accuracy[f]));
        json_t *o = json_pack("{s:i, s:i, s:f, s:f, s:o, s:f}", "rows", (int)ds.n, "epochs",
                              opt.epochs, "accuracy_mean", cv.mean_accuracy, "accuracy_std",
                              cv.std_accuracy, "fold_accuracy", folds, "underestimation_rate",
                              cv.under_rate);
        char *txt = json_dumps(o, JSON_INDENT(2));
        puts(txt);
        free(txt);
        json_decref(o);
    } else {
        printf("MLP-ensemble on %zu MLP rows, 1 GB bins, %d-fold CV, %d epochs\n", ds.n, a->folds,
               opt.epochs);
        for (int f = 0; f < a->folds; f++)
            printf("fold %d: accuracy %.4f\n", f + 1, cv.fold_accuracy[f]);
        printf("mean accuracy %.4f (std %.4f), underestimation rate %.4f\n", cv.mean_accuracy,
               cv.std_accuracy, cv.under_rate);
    }
    int rc = 0;
    if (a->out) {
        mlp_net net;
        if (mlp_train(&ds, NULL, 0, &opt, &net, &err)) {
            rc = cli_fail("estimate", &err);
        } else {
            char tmp[PATH_MAX];
            snprintf(tmp, sizeof tmp, "%s.tmp", a->out);
            FILE *f = fopen(tmp, "w");
            if (!f ||
                mlp_net_write(&net, f,
                              "GPUMemNet MLP-ensemble trained by carma on mlp_data_step2.csv") ||
                fclose(f) || rename(tmp, a->out)) {
                carma_err_set(&err, "cannot write %s", a->out);
                remove(tmp);
                rc = cli_fail("estimate", &err);
            }
            mlp_net_free(&net);
        }
    }
    mlp_dataset_free(&ds);
    return rc;
}

/* The options that shape one mode each: one given to another mode would be ignored, so it is
 * a usage error (the bit of each, and which modes take it). */
enum {
    O_BATCH = 1 << 0, O_ESTIMATOR = 1 << 1, O_SEQ_LEN = 1 << 2, O_OPTIMIZER = 1 << 3,
    O_JSON = 1 << 4, O_FOLDS = 1 << 5, O_EPOCHS = 1 << 6, O_OUT = 1 << 7,
    O_ITERATIONS = 1 << 8, O_WS_BAND = 1 << 9,
};
static const char *const option_names[] = {"--batch", "--estimator", "--seq-len", "--optimizer",
                                           "--json", "--folds", "--epochs", "--out",
                                           "--iterations", "--ws-band"};

/* A usage error for the first option given that `mode` (named) does not take; 0 when none. */
static int only_options(unsigned given, unsigned takes, const char *mode)
{
    for (size_t i = 0; i < sizeof option_names / sizeof *option_names; i++)
        if (given & ~takes & (1u << i))
            return cli_usage_error("estimate", "%s does not go with %s", option_names[i], mode);
    return 0;
}

int cmd_estimate(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"summary", required_argument, NULL, 's'},
        {"batch", required_argument, NULL, 'b'},
        {"estimator", required_argument, NULL, 'e'},
        {"seq-len", required_argument, NULL, 'L'},
        {"optimizer", required_argument, NULL, 'O'},
        {"json", no_argument, NULL, 'j'},
        {"eval", no_argument, NULL, 'E'},
        {"train-gpumemnet", no_argument, NULL, 'T'},
        {"folds", required_argument, NULL, 'k'},
        {"epochs", required_argument, NULL, 'n'},
        {"out", required_argument, NULL, 'o'},
        {"fit-carma", no_argument, NULL, 'F'},
        {"run", no_argument, NULL, 'R'},
        {"iterations", required_argument, NULL, 'I'},
        {"trace", required_argument, NULL, 't'},
        {"fit-xmem", required_argument, NULL, 'X'},
        {"ws-band", required_argument, NULL, 'W'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    est_args a = {.estimator = "carma", .folds = 3, .iterations = XMEM_DEFAULT_ITERATIONS,
                  .ws_band = XMEM_WS_BAND};
    unsigned given = 0;
    int opt;
    opterr = 0;
    optind = 1;
    /* '+': options stop at the first operand, so --run's COMMAND keeps its own options. */
    while ((opt = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 's': a.summary = optarg; break;
        case 'b':
            if (parse_int_opt("--batch", optarg, 1, &a.batch))
                return EXIT_USAGE;
            a.batch_set = true;
            given |= O_BATCH;
            break;
        case 'e':
            a.estimator = optarg;
            given |= O_ESTIMATOR;
            break;
        case 'L':
            if (parse_int_opt("--seq-len", optarg, 1, &a.seq_len))
                return EXIT_USAGE;
            given |= O_SEQ_LEN;
            break;
        case 'O':
            a.optimizer = optarg;
            given |= O_OPTIMIZER;
            break;
        case 'j':
            a.json = true;
            given |= O_JSON;
            break;
        case 'E': a.eval = true; break;
        case 'T': a.train = true; break;
        case 'k':
            if (parse_int_opt("--folds", optarg, INT_MIN, &a.folds))
                return EXIT_USAGE;
            a.folds_set = true;
            given |= O_FOLDS;
            break;
        case 'n':
            if (parse_int_opt("--epochs", optarg, 1, &a.epochs))
                return EXIT_USAGE;
            given |= O_EPOCHS;
            break;
        case 'o':
            a.out = optarg;
            given |= O_OUT;
            break;
        case 'F': a.fit = true; break;
        case 'R': a.run = true; break;
        case 'I':
            if (parse_int_opt("--iterations", optarg, 1, &a.iterations))
                return EXIT_USAGE;
            given |= O_ITERATIONS;
            break;
        case 't': a.trace = optarg; break;
        case 'X': a.fit_xmem = optarg; break;
        case 'W':
            if (parse_double(optarg, &a.ws_band) || a.ws_band < 0 || a.ws_band > 14)
                return cli_usage_error("estimate", "--ws-band must be a number from 0 to 14");
            given |= O_WS_BAND;
            break;
        case 'h': fputs(usage, stdout); return 0;
        default: return cli_bad_option("estimate", argv, optopt, opt);
        }
    }
    const char *const paths[][2] = {{"--summary", a.summary}, {"--out", a.out},
                                    {"--trace", a.trace}, {"--fit-xmem", a.fit_xmem}};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++)
        if (paths[i][1] && cli_path_arg("estimate", paths[i][0], paths[i][1]))
            return EXIT_USAGE;
    if (a.eval + a.train + a.fit + (a.summary != NULL) + a.run + (a.trace != NULL) +
            (a.fit_xmem != NULL) > 1)
        return cli_usage_error("estimate", "--summary, --eval, --train-gpumemnet, --fit-carma, "
                                           "--run, --trace and --fit-xmem do not go together");
    int rc = a.run                ? only_options(given, O_ITERATIONS | O_JSON, "--run")
             : a.trace            ? only_options(given, O_JSON, "--trace")
             : a.fit_xmem         ? only_options(given, O_WS_BAND | O_FOLDS, "--fit-xmem")
             : a.eval             ? only_options(given, O_JSON, "--eval")
             : a.train            ? only_options(given, O_FOLDS | O_EPOCHS | O_OUT | O_JSON,
                                                 "--train-gpumemnet")
             : a.fit              ? only_options(given, 0, "--fit-carma")
                                  : only_options(given, O_BATCH | O_ESTIMATOR | O_SEQ_LEN |
                                                            O_OPTIMIZER | O_JSON,
                                                 "--summary");
    if (rc)
        return rc;
    if (a.run) {
        if (optind >= argc)
            return cli_usage_error("estimate", "--run needs a command: --run -- COMMAND [ARGS...]");
        return estimate_run_xmem(a.json, NULL, a.iterations, argv + optind, argc - optind);
    }
    if (optind < argc)
        return cli_usage_error("estimate", "unexpected argument '%s'", argv[optind]);
    if (a.trace)
        return estimate_run_xmem(a.json, a.trace, a.iterations, NULL, 0);
    if (a.fit_xmem) {
        int folds = a.folds_set ? a.folds : XMEM_DEFAULT_FOLDS;
        if (folds < 0 || folds == 1 || folds > XMEM_MAX_FOLDS)
            return cli_usage_error("estimate", "--folds must be 0 (none) or 2 to %d with "
                                               "--fit-xmem, not %d", XMEM_MAX_FOLDS, folds);
        return estimate_fit_xmem(a.fit_xmem, a.ws_band, folds);
    }
    if (a.eval)
        return run_eval(&a);
    if (a.train)
        return run_train(&a);
    if (a.fit)
        return run_fit();
    if (!a.summary)
        return cli_usage_error("estimate", "--summary FILE is required");
    if (!a.batch_set)
        return cli_usage_error("estimate", "--batch N is required");
    return print_estimates(&a);
}
