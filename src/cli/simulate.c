/* simulate.c — `carma simulate`: replay a job trace on a simulated server through the
 * scheduling core, for one policy or (--compare) every policy, and report the figures. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/simulate_validate.h"
#include "task/catalog.h"
#include "task/trace.h"
#include "sim/sim_plot.h"
#include "sim/sim_report.h"
#include "sim/sim_workload.h"
#include "util/datadir.h"
#include "util/strutil.h"

/* Under the data directory (util/datadir.h), so that $CARMA_DATA_DIR moves them too. */
#define DEFAULT_TRACE "traces/philly_mix_90.csv"
#define DEFAULT_CATALOG "workloads.csv"

static const char *const usage =
    "usage: carma simulate [--trace FILE] [--gpus SPEC] [--policy NAME] [--estimator NAME]\n"
    "                      [--startup-s N] [--no-interference] [--compare] [--out DIR]\n"
    "                      [--plot DIR] [--json] [--catalog FILE] [--config FILE]\n"
    "                      [--set KEY=VALUE]...\n"
    "       carma simulate --validate [--json] [--config FILE] [--set KEY=VALUE]...\n\n"
    "Replays a trace (CSV `seq,submit_offset_s,task_file`) on a simulated server, with the\n"
    "same scheduling core the daemon uses, and prints makespan, job completion times, waits,\n"
    "GPU utilization (SM activity), energy, out-of-memory crashes and collocations.\n\n"
    "  --trace FILE        the trace (default data/traces/philly_mix_90.csv)\n"
    "  --gpus SPEC         COUNTxMODEL, e.g. 4xA100-40GB, 1000xH100-80GB (a MODEL alone is\n"
    "                      one GPU; default: the config's sim_server, 4xA100-40GB);\n"
    "                      models: A100-40GB, A100-80GB, H100-80GB, V100-32GB, V100-16GB,\n"
    "                      RTX3090-24GB, and any sim_gpu_model of the config; a model\n"
    "                      sets memory and power, not speed (tasks run at the speed\n"
    "                      measured on A100s)\n"
    "  --policy NAME       placement policy (default: the config's, carma)\n"
    "  --estimator NAME    memory figure of est-* policies: none (the measured peak),\n"
    "                      faketensor (the figure stored in the .rad), or horus,\n"
    "                      gpumemnet, carma (computed from each task's model summary\n"
    "                      and batch size)\n"
    "  --startup-s N       CPU start-up seconds of tasks with none measured (default: the\n"
    "                      config's sim_startup_s, 30)\n"
    "  --no-interference   collocated tasks run at solo speed\n"
    "  --compare           run every policy on the trace; a table with each figure's change\n"
    "                      against exclusive (with --json: an array of objects)\n"
    "  --out DIR           write DIR/tasks.csv and DIR/gpu_timeline.csv (single policy;\n"
    "                      DIR is made if missing, a symlink of another user's on the way to\n"
    "                      it is refused, and the files are replaced together or not at all)\n"
    "  --plot DIR          draw PNGs with gnuplot: DIR/gpus-POLICY.png per run (each GPU's\n"
    "                      SM activity and used memory over hours; mean and max above 16\n"
    "                      GPUs) and, with --compare, DIR/policies.png (makespan, mean JCT,\n"
    "                      energy); the .dat data and .gp scripts stay beside them (DIR as\n"
    "                      for --out)\n"
    "  --validate          the calibration check: the AEGIS traces (philly, saturn, venus)\n"
    "                      under data/aegis.conf (or --config) with the six policies AEGIS\n"
    "                      ran, simulated vs real normalized makespan, mean JCT, OOM\n"
    "                      crashes, completed and failed jobs, and energy\n"
    "  --json              one JSON object with policy, estimator, tasks, completed,\n"
    "                      failed, makespan_s, mean_jct_s, median_jct_s, p95_jct_s,\n"
    "                      mean_wait_s, gpu_util_mean, energy_j (joules), oom_crashes,\n"
    "                      placements, collocated_placements, events (with --validate: an\n"
    "                      array, an object per trace and policy with trace, policy and\n"
    "                      sim_ and real_ makespan_s, norm_makespan, mean_jct_s,\n"
    "                      norm_mean_jct, oom, energy_j, completed, failed; null where\n"
    "                      unknown)\n"
    "  --catalog FILE      workload catalog (default data/workloads.csv)\n"
    "  --config FILE, --set KEY=VALUE   configuration (see `carma config`)\n";

typedef struct sim_cli {
    const char *trace_path, *catalog_path; /* NULL: the defaults */
    const char *gpus, *policy, *estimator, *out_dir, *plot_dir;
    double startup_s;
    bool startup_set, no_interference, compare, json, validate;
    cli_config_args cargs;
} sim_cli;

static void show_progress(size_t done, size_t total, void *user)
{
    fprintf(stderr, "\rsimulating %s: %3.0f%% (%zu/%zu jobs)", (const char *)user,
            100.0 * (double)done / (double)total, done, total);
}

static double change_pct(double x, double base)
{
    return isfinite(x) && isfinite(base) && base != 0 ? 100.0 * (x - base) / base : NAN;
}

static void print_cell(double x, double base, double scale, const char *fmt, bool with_change)
{
    char buf[64];
    if (!isfinite(x)) {
        printf(" %15s", "-");
        return;
    }
    int n = snprintf(buf, sizeof buf, fmt, x * scale);
    double c = change_pct(x, base);
    if (with_change && isfinite(c))
        snprintf(buf + n, sizeof buf - (size_t)n, " (%+.1f%%)", c);
    printf(" %15s", buf);
}

static void print_table(const sim_summary *rows, const policy_id *ids, int n, const char *est)
{
    const sim_summary *base = NULL;
    for (int i = 0; i < n; i++)
        if (ids[i] == POLICY_EXCLUSIVE)
            base = &rows[i];
    printf("%-12s %15s %15s %15s %15s %15s %15s %5s %7s %9s\n", "policy", "makespan_h",
           "mean_jct_h", "p95_jct_h", "mean_wait_h", "gpu_util_%", "energy_MJ", "oom",
           "colloc", "completed");
    for (int i = 0; i < n; i++) {
        const sim_summary *r = &rows[i];
        bool ch = base && r != base;
        printf("%-12s", policy_name(ids[i]));
        print_cell(r->makespan_s, base ? base->makespan_s : NAN, 1 / 3600.0, "%.2f", ch);
        print_cell(r->mean_jct_s, base ? base->mean_jct_s : NAN, 1 / 3600.0, "%.2f", ch);
        print_cell(r->p95_jct_s, base ? base->p95_jct_s : NAN, 1 / 3600.0, "%.2f", ch);
        print_cell(r->mean_wait_s, base ? base->mean_wait_s : NAN, 1 / 3600.0, "%.2f", ch);
        print_cell(r->gpu_util_mean, base ? base->gpu_util_mean : NAN, 100.0, "%.1f", ch);
        print_cell(sim_display_mj(r->energy_j), base ? sim_display_mj(base->energy_j) : NAN, 1.0,
                   "%.1f", ch);
        printf(" %5d %7d %4zu/%-4zu\n", r->oom_crashes, r->collocated_placements, r->completed,
               r->tasks);
    }
    printf("(estimator for est-*: %s; changes against exclusive)\n", est);
}

/* A figure of the text summary: "-" when unknown (NaN), as in the --compare table. */
static const char *figure(char *buf, size_t size, const char *fmt, double x)
{
    if (!isfinite(x))
        return "-";
    snprintf(buf, size, fmt, x);
    return buf;
}

static void print_summary(const sim_summary *r, const char *policy, const char *est)
{
    char a[64], b[64], c[64];
    printf("policy                 %s (estimator %s)\n", policy, est);
    /* The run ends when nothing is left to happen: a task neither completed nor failed then
     * waits for a GPU the policy will never give it (one it learned is too small) */
    size_t stuck = r->tasks - r->completed - r->failed;
    printf("tasks completed        %zu of %zu (%zu failed", r->completed, r->tasks, r->failed);
    if (stuck)
        printf(", %zu left in the queue: no GPU would take them", stuck);
    printf(")\n");
    if (isfinite(r->makespan_s))
        printf("makespan               %.0f s (%.2f h)\n", r->makespan_s, r->makespan_s / 3600);
    else
        printf("makespan               -\n");
    printf("job completion time    mean %s, median %s, p95 %s\n",
           figure(a, sizeof a, "%.0f s", r->mean_jct_s),
           figure(b, sizeof b, "%.0f s", r->median_jct_s),
           figure(c, sizeof c, "%.0f s", r->p95_jct_s));
    printf("mean wait              %s\n", figure(a, sizeof a, "%.0f s", r->mean_wait_s));
    printf("GPU utilization        %s (time-averaged SM activity)\n",
           figure(a, sizeof a, "%.1f %%", 100 * r->gpu_util_mean));
    printf("energy                 %s\n",
           figure(a, sizeof a, "%.2f MJ", sim_display_mj(r->energy_j)));
    printf("out-of-memory crashes  %d\n", r->oom_crashes);
    printf("collocated placements  %d of %d\n", r->collocated_placements, r->placements);
}

static int parse_args(int argc, char **argv, sim_cli *a)
{
    static const struct option longopts[] = {
        {"trace", required_argument, NULL, 't'},
        {"gpus", required_argument, NULL, 'g'},
        {"policy", required_argument, NULL, 'p'},
        {"estimator", required_argument, NULL, 'e'},
        {"startup-s", required_argument, NULL, 's'},
        {"no-interference", no_argument, NULL, 'I'},
        {"compare", no_argument, NULL, 'C'},
        {"out", required_argument, NULL, 'o'},
        {"plot", required_argument, NULL, 'P'},
        {"json", no_argument, NULL, 'j'},
        {"validate", no_argument, NULL, 'V'},
        {"catalog", required_argument, NULL, 'k'},
        {"config", required_argument, NULL, 'c'},
        {"set", required_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof *a);
    int opt;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (opt) {
        case 't': a->trace_path = optarg; break;
        case 'g': a->gpus = optarg; break;
        case 'p': a->policy = optarg; break;
        case 'e': a->estimator = optarg; break;
        case 's':
            if (parse_double(optarg, &a->startup_s) || a->startup_s < 0)
                return cli_usage_error("simulate", "--startup-s: expected seconds >= 0, got '%s'",
                                       optarg);
            a->startup_set = true;
            break;
        case 'I': a->no_interference = true; break;
        case 'C': a->compare = true; break;
        case 'o': a->out_dir = optarg; break;
        case 'P': a->plot_dir = optarg; break;
        case 'j': a->json = true; break;
        case 'V': a->validate = true; break;
        case 'k': a->catalog_path = optarg; break;
        case 'c': a->cargs.path = optarg; break;
        case 'S':
            if (cli_add_set("simulate", &a->cargs, optarg))
                return EXIT_USAGE;
            break;
        case 'h': fputs(usage, stdout); return -1;
        default: return cli_bad_option("simulate", argv, optopt, opt);
        }
    }
    if (optind < argc)
        return cli_usage_error("simulate", "unexpected argument '%s'", argv[optind]);
    /* it read as a file named '-': "No such file or directory" */
    if (a->trace_path && strcmp(a->trace_path, "-") == 0)
        return cli_usage_error("simulate", "--trace -: a trace is read from a file, not standard "
                               "input (carma trace synth --out FILE writes one)");
    const char *const paths[][2] = {{"--trace", a->trace_path}, {"--out", a->out_dir},
                                    {"--plot", a->plot_dir},    {"--catalog", a->catalog_path},
                                    {"--config", a->cargs.path}};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++)
        if (paths[i][1] && cli_path_arg("simulate", paths[i][0], paths[i][1]))
            return EXIT_USAGE;
    if (a->validate && (a->compare || a->out_dir || a->plot_dir || a->policy || a->estimator ||
                        a->gpus || a->startup_set || a->no_interference || a->trace_path ||
                        a->catalog_path))
        return cli_usage_error("simulate", "--validate runs its own traces and policies; it "
                               "takes only --json, --config and --set");
    if (a->compare && a->out_dir)
        return cli_usage_error("simulate", "--out writes one run's files; not with --compare");
    /* it was ignored: the table showed every policy, none of them the one asked for */
    if (a->compare && a->policy)
        return cli_usage_error("simulate", "--compare runs every policy; not with --policy");
    return 0;
}

/* The config, then --policy and --estimator over it: 0, or cli_load_config's result with err
 * (CLI_CONFIG_BAD_SET also for a --policy or --estimator the config refuses: like a bad --set,
 * the command line is wrong). */
static int load_config(const sim_cli *a, carma_config *cfg, carma_err *err)
{
    int rc = cli_load_config(cfg, &a->cargs, err);
    if (rc)
        return rc;
    if ((a->policy && config_set(cfg, "policy", a->policy, err)) ||
        (a->estimator && config_set(cfg, "estimator", a->estimator, err)))
        return CLI_CONFIG_BAD_SET;
    /* xmem traces a training script: the catalog's tasks have none, so no figure either */
    if (cfg->sched.estimator == MEM_XMEM && a->estimator) {
        carma_err_set(err, "--estimator xmem: the simulator has no xmem figures (xmem runs a "
                           "task's training script; the catalog has none): use none, "
                           "faketensor, horus, gpumemnet or carma");
        return CLI_CONFIG_BAD_SET;
    }
    if (cfg->sched.estimator == MEM_XMEM)
        fprintf(stderr, "carma simulate: note: the config's estimator, xmem, has no figures in "
                        "the simulator: est-* policies place tasks as with no figure\n");
    return 0;
}

/* The config's and the command line's simulation settings; the server. */
static int build_setup(const sim_cli *a, sim_setup *setup, carma_config *cfg, carma_err *err)
{
    if (a->startup_set)
        cfg->sim.startup_s = a->startup_s;
    if (a->no_interference)
        cfg->sim.interference = false;
    memset(setup, 0, sizeof *setup);
    setup->sched = cfg->sched;
    setup->params = cfg->sim;
    return gpu_spec_parse(a->gpus ? a->gpus : cfg->sim.server, &setup->params.gpu_models,
                          &setup->ngpus, &setup->gpu, err);
}

static int run_one(sim_setup *setup, const sim_job_spec *jobs, size_t njobs, sim_result *res,
                   bool progress, carma_err *err)
{
    setup->progress = progress ? show_progress : NULL;
    setup->progress_user = (void *)policy_name(setup->sched.policy);
    int rc = sim_run(setup, jobs, njobs, res, err);
    if (progress)
        fputs("\r\033[K", stderr); /* clear the progress line */
    return rc;
}

static int emit_json(json_t *j, carma_err *err)
{
    if (!j)
        return carma_err_set(err, "out of memory");
    errno = 0;
    int rc = json_dumpf(j, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    fputc('\n', stdout);
    json_decref(j);
    return rc ? carma_err_set(err, "cannot write the output: %s", strerror(errno ? errno : EIO))
              : 0;
}

static int simulate(const sim_cli *a, sim_setup *setup, carma_err *err)
{
    trace tr = {0};
    workload_catalog cat = {0};
    sim_job_spec *jobs = NULL;
    sim_plot *plot = NULL;
    int rc = -1;
    char trace_buf[4096], catalog_buf[4096];
    const char *trace_path = a->trace_path, *catalog_path = a->catalog_path;
    /* A --out that cannot be written is found before anything is read or run; the files are
     * staged afresh when the run is done (nothing is left behind if it is interrupted). */
    if (a->out_dir && sim_outputs_check(a->out_dir, err))
        goto done;
    if (carma_data_default(&trace_path, DEFAULT_TRACE, trace_buf, sizeof trace_buf, err) ||
        carma_data_default(&catalog_path, DEFAULT_CATALOG, catalog_buf, sizeof catalog_buf, err) ||
        trace_load(trace_path, &tr, err) || catalog_load(catalog_path, &cat, err) ||
        sim_jobs_from_trace(&tr, &cat, setup->sched.estimator, &jobs, err))
        goto done;
    setup->source = tr.path;
    bool progress = !a->json && isatty(STDERR_FILENO);
    const char *est = mem_source_estimator_name(setup->sched.estimator);
    setup->record_timeline = a->out_dir || a->plot_dir;
    if (a->plot_dir && !(plot = sim_plot_open(a->plot_dir, &(sim_plot_info){tr.path, est,
                                              setup->gpu, setup->ngpus}, err)))
        goto done;
    if (!a->compare) {
        sim_result res;
        if (run_one(setup, jobs, tr.n, &res, progress, err))
            goto done;
        rc = a->out_dir ? sim_write_outputs(a->out_dir, &res, &tr, jobs, err) : 0;
        if (rc == 0 && a->json)
            rc = emit_json(sim_summary_json(&res.summary, policy_name(setup->sched.policy), est),
                           err);
        else if (rc == 0)
            print_summary(&res.summary, policy_name(setup->sched.policy), est);
        if (rc == 0 && plot)
            rc = sim_plot_add_run(plot, policy_name(setup->sched.policy), &res, err) ||
                 sim_plot_render(plot, false, stderr, err);
        sim_result_free(&res);
        if (rc && !err->msg[0])
            carma_err_set(err, "cannot write the output");
        goto done;
    }
    sim_summary rows[POLICY_COUNT];
    policy_id ids[POLICY_COUNT];
    for (int p = 0; p < POLICY_COUNT; p++) {
        sim_result res;
        ids[p] = (policy_id)p;
        setup->sched.policy = (policy_id)p;
        if (run_one(setup, jobs, tr.n, &res, progress, err))
            goto done;
        rows[p] = res.summary;
        int bad = plot && sim_plot_add_run(plot, policy_name(ids[p]), &res, err);
        sim_result_free(&res);
        if (bad)
            goto done;
    }
    if (a->json) {
        json_t *arr = json_array();
        for (int p = 0; arr && p < POLICY_COUNT; p++)
            json_array_append_new(arr, sim_summary_json(&rows[p], policy_name(ids[p]), est));
        rc = emit_json(arr, err);
    } else {
        char *shown = str_escape_controls(tr.path); /* a file name may hold escapes */
        printf("trace %s (%zu tasks) on %dx%s\n", shown ? shown : "?", tr.n, setup->ngpus,
               setup->gpu->name);
        free(shown);
        print_table(rows, ids, POLICY_COUNT, est);
        rc = 0;
    }
    if (rc == 0 && plot)
        rc = sim_plot_render(plot, true, stderr, err);
done:
    sim_plot_free(plot);
    free(jobs);
    catalog_free(&cat);
    trace_free(&tr);
    return rc;
}

int cmd_simulate(int argc, char **argv)
{
    sim_cli a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    carma_err err = {{0}};
    char path[4096], source[4200];
    if (a.validate && !a.cargs.path) {
        if (carma_data_path("aegis.conf", path, sizeof path, &err))
            return cli_fail("simulate", &err);
        a.cargs.path = path;
    }
    /* the table says what it was run with: the testbed's settings, or what the user gave */
    snprintf(source, sizeof source, "%s%s", a.cargs.path ? a.cargs.path : "",
             a.cargs.nsets ? " with --set" : "");
    carma_config cfg;
    if ((rc = load_config(&a, &cfg, &err)) != 0)
        return cli_config_fail("simulate", rc, &err);
    if (a.validate)
        return simulate_validate(&cfg, source, a.json, &err) ? cli_fail("simulate", &err)
                                                      : cli_stdout_done("simulate");
    sim_setup setup;
    /* it fails only on a GPU spec it cannot read: --gpus's (a usage error) or the config's */
    if (build_setup(&a, &setup, &cfg, &err))
        return a.gpus ? cli_usage_error("simulate", "%s", err.msg) : cli_fail("simulate", &err);
    return simulate(&a, &setup, &err) ? cli_fail("simulate", &err) : cli_stdout_done("simulate");
}
