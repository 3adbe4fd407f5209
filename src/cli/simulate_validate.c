/* simulate_validate.c — `carma simulate --validate`: replays the AEGIS traces with the AEGIS
 * testbed's settings (data/aegis.conf) under the six policies AEGIS ran, and prints the
 * simulated figures next to the real runs' (data/aegis/headline_normalized.csv,
 * data/aegis/dcgmi_energy_summary.csv, data/aegis/run_summaries.csv). philly and saturn were
 * the fit; venus has no real results here (held out), so only its simulated figures are
 * printed. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/simulate_validate.h"
#include "task/catalog.h"
#include "task/trace.h"
#include "sim/sim_workload.h"
#include "util/csv.h"
#include "util/datadir.h"
#include "util/strutil.h"

#define TOLERANCE 0.05       /* the goal: normalized makespan and mean JCT within +-0.05 */
#define EXCL_TOLERANCE 0.03  /* and the exclusive makespan within 3 % */

static const char *const traces[] = {"philly", "saturn", "venus"};
#define NTRACES 3

/* The policies of the real runs, with their labels in the AEGIS files. */
static const struct {
    const char *policy, *label, *energy_label;
} runs[] = {
    {"exclusive", "exclusive", "exclusive"},
    {"oracle-magm", "oracle_upper_bound", "oracle-MAGM"},
    {"or-magm", "aegis_estimator_free", "OR-MAGM"},
    {"est-magm", "aegis_horus", "EST-MAGM__horus"},
    {"horus", "horus_baseline", "HORUS__horus"},
    {"lucid", "lucid_baseline", "LUCID"},
};
#define NRUNS (int)(sizeof runs / sizeof runs[0])

typedef struct real_run {
    bool known, counts_known; /* counts: run_summaries.csv has the run */
    double makespan_s, jct_mean_s, energy_j;
    int oom, completed, failed;
} real_run;

typedef struct validate_row {
    const char *trace, *policy;
    sim_summary sim;
    real_run real;
} validate_row;

/* The (trace, run) a row of the real results is about, by its label; false for other rows. */
static bool match_run(const char *trace_name, const char *label, bool energy_label, int *k, int *p)
{
    for (*k = 0; *k < NTRACES; (*k)++)
        for (*p = 0; *p < NRUNS; (*p)++)
            if (!strcmp(trace_name, traces[*k]) &&
                !strcmp(label, energy_label ? runs[*p].energy_label : runs[*p].label))
                return true;
    return false;
}

/* A number of the real results, or an error naming the file, line and column. */
static int real_num(const csv_table *t, size_t row, int col, double *out, carma_err *err)
{
    const csv_row *r = &t->rows[row];
    if (parse_double(r->fields[col], out) || !(*out >= 0))
        return carma_err_set(err, "%s:%zu: %s: expected a number >= 0, got '%s'", t->path,
                             r->line, t->header.fields[col], r->fields[col]);
    return 0;
}

/* Opens data/aegis/REL and finds its trace and label columns. */
static int open_real(const char *rel, const char *trace_col, const char *label, csv_table *t,
                     int *ct, int *cl, carma_err *err)
{
    char path[4096];
    if (carma_data_path(rel, path, sizeof path, err) || csv_load(path, t, err))
        return -1;
    if ((*ct = csv_require_column(t, trace_col, err)) < 0 ||
        (*cl = csv_require_column(t, label, err)) < 0) {
        csv_free(t);
        return -1;
    }
    return 0;
}

/* The jobs each real run completed, and those it gave up on (recovery stopped): the run's
 * counts are unknown (not 0) without its row. */
static int load_real_counts(real_run real[NTRACES][NRUNS], carma_err *err)
{
    csv_table t;
    int ct, cl, cc = -1, cf = -1, k, p;
    if (open_real("aegis/run_summaries.csv", "trace_name", "configuration_label", &t, &ct, &cl,
                  err))
        return -1;
    int rc = (cc = csv_require_column(&t, "completed_job_count", err)) < 0 ||
             (cf = csv_require_column(&t, "recovery_stopped_job_count", err)) < 0;
    for (size_t i = 0; !rc && i < t.nrows; i++) {
        double completed, failed;
        if (!match_run(t.rows[i].fields[ct], t.rows[i].fields[cl], false, &k, &p))
            continue;
        rc = real_num(&t, i, cc, &completed, err) || real_num(&t, i, cf, &failed, err);
        if (rc)
            break;
        real[k][p].counts_known = true;
        real[k][p].completed = (int)completed;
        real[k][p].failed = (int)failed;
    }
    csv_free(&t);
    return rc ? -1 : 0;
}

static int load_real(real_run real[NTRACES][NRUNS], carma_err *err)
{
    csv_table t;
    int ct, cl, cm = -1, cj = -1, co = -1, ce = -1, k, p;
    memset(real, 0, sizeof(real_run) * NTRACES * NRUNS);
    if (open_real("aegis/headline_normalized.csv", "trace", "configuration_label", &t, &ct, &cl,
                  err))
        return -1;
    int rc = (cm = csv_require_column(&t, "makespan_s", err)) < 0 ||
             (cj = csv_require_column(&t, "jct_mean_s", err)) < 0 ||
             (co = csv_require_column(&t, "failed_attempts", err)) < 0;
    for (size_t i = 0; !rc && i < t.nrows; i++) {
        double oom;
        if (!match_run(t.rows[i].fields[ct], t.rows[i].fields[cl], false, &k, &p))
            continue;
        real_run *r = &real[k][p];
        rc = real_num(&t, i, cm, &r->makespan_s, err) || real_num(&t, i, cj, &r->jct_mean_s, err) ||
             real_num(&t, i, co, &oom, err);
        if (rc)
            break;
        r->known = true;
        r->oom = (int)oom;
        r->energy_j = NAN;
    }
    csv_free(&t);
    if (rc || open_real("aegis/dcgmi_energy_summary.csv", "trace", "raw_label", &t, &ct, &cl,
                        err))
        return -1;
    rc = (ce = csv_require_column(&t, "total_gpu_energy_j", err)) < 0;
    for (size_t i = 0; !rc && i < t.nrows; i++) {
        if (!match_run(t.rows[i].fields[ct], t.rows[i].fields[cl], true, &k, &p))
            continue;
        rc = real_num(&t, i, ce, &real[k][p].energy_j, err);
    }
    csv_free(&t);
    return rc ? -1 : load_real_counts(real, err);
}

/* One trace under every policy. */
static int run_trace(const carma_config *cfg, const char *name, validate_row *rows,
                     carma_err *err)
{
    char trace_path[4096], catalog_path[4096], rel[64];
    snprintf(rel, sizeof rel, "traces/aegis_%s_60.csv", name);
    trace tr = {0};
    workload_catalog cat = {0};
    sim_job_spec *jobs = NULL;
    sim_setup setup = {.sched = cfg->sched, .params = cfg->sim};
    int rc = carma_data_path(rel, trace_path, sizeof trace_path, err) ||
             carma_data_path("workloads.csv", catalog_path, sizeof catalog_path, err) ||
             gpu_spec_parse(cfg->sim.server, &setup.params.gpu_models, &setup.ngpus, &setup.gpu,
                            err) ||
             trace_load(trace_path, &tr, err) || catalog_load(catalog_path, &cat, err) ||
             sim_jobs_from_trace(&tr, &cat, cfg->sched.estimator, &jobs, err);
    setup.source = trace_path;
    for (int p = 0; !rc && p < NRUNS; p++) {
        sim_result res;
        policy_from_name(runs[p].policy, &setup.sched.policy);
        if ((rc = sim_run(&setup, jobs, tr.n, &res, err)) != 0)
            break;
        rows[p].trace = name;
        rows[p].policy = runs[p].policy;
        rows[p].sim = res.summary;
        sim_result_free(&res);
    }
    free(jobs);
    catalog_free(&cat);
    trace_free(&tr);
    return rc ? -1 : 0;
}

static double ratio(double x, double base)
{
    return isfinite(x) && base > 0 ? x / base : NAN;
}

static json_t *num_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

/* A row's JSON: the same keys in every row, null where a figure is unknown (venus's real ones). */
static int emit_json(const validate_row *rows, int n)
{
    json_t *arr = json_array();
    for (int i = 0; arr && i < n; i++) {
        const validate_row *r = &rows[i], *ex = &rows[i - i % NRUNS];
        const real_run *re = &r->real;
        bool known = re->known, counts = re->counts_known;
        json_t *o = json_pack(
            "{s:s, s:s, s:o, s:o, s:o, s:o, s:i, s:o, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, "
            "s:o, s:o}",
            "trace", r->trace, "policy", r->policy,
            "sim_makespan_s", num_or_null(r->sim.makespan_s),
            "sim_norm_makespan", num_or_null(ratio(r->sim.makespan_s, ex->sim.makespan_s)),
            "sim_mean_jct_s", num_or_null(r->sim.mean_jct_s),
            "sim_norm_mean_jct", num_or_null(ratio(r->sim.mean_jct_s, ex->sim.mean_jct_s)),
            "sim_oom", r->sim.oom_crashes, "sim_energy_j", num_or_null(r->sim.energy_j),
            "sim_completed", (json_int_t)r->sim.completed, "sim_failed",
            (json_int_t)r->sim.failed,
            "real_makespan_s", num_or_null(known ? re->makespan_s : NAN),
            "real_mean_jct_s", num_or_null(known ? re->jct_mean_s : NAN),
            "real_norm_makespan",
            num_or_null(known ? ratio(re->makespan_s, ex->real.makespan_s) : NAN),
            "real_norm_mean_jct",
            num_or_null(known ? ratio(re->jct_mean_s, ex->real.jct_mean_s) : NAN),
            "real_oom", known ? json_integer(re->oom) : json_null(),
            "real_energy_j", num_or_null(known ? re->energy_j : NAN),
            "real_completed", counts ? json_integer(re->completed) : json_null(),
            "real_failed", counts ? json_integer(re->failed) : json_null());
        if (!o || json_array_append_new(arr, o)) {
            json_decref(arr);
            return -1;
        }
    }
    if (!arr)
        return -1;
    int rc = json_dumpf(arr, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    fputc('\n', stdout);
    json_decref(arr);
    return rc;
}

/* x with fmt, or "-" when unknown: a run that completed no job has no makespan (it printed
 * "nan"). */
static const char *fig(char *buf, size_t cap, const char *fmt, double x)
{
    if (!isfinite(x))
        return "-";
    snprintf(buf, cap, fmt, x);
    return buf;
}

/* One figure: simulated, real and their difference, "!" where it misses the goal (an unknown
 * simulated figure misses it too). */
static void print_cell(char *buf, size_t cap, double sim, double real, bool known, bool absolute,
                       int *checked, int *within)
{
    char s[32], r[32], dd[32];
    if (absolute) { /* exclusive: seconds, the difference in % */
        double d = sim / real - 1;
        if (known)
            snprintf(buf, cap, "%8s %8s %6s%s", fig(s, sizeof s, "%.0fs", sim),
                     fig(r, sizeof r, "%.0fs", real), fig(dd, sizeof dd, "%+.1f%%", 100 * d),
                     fabs(d) <= EXCL_TOLERANCE ? "" : "!");
        else
            snprintf(buf, cap, "%8s %8s", fig(s, sizeof s, "%.0fs", sim), "-");
        return;
    }
    if (!known) {
        snprintf(buf, cap, "%7s %7s", fig(s, sizeof s, "%.3f", sim), "-");
        return;
    }
    double d = sim - real;
    *checked += 1;
    *within += fabs(d) <= TOLERANCE;
    snprintf(buf, cap, "%7s %7s %6s%s", fig(s, sizeof s, "%.3f", sim),
             fig(r, sizeof r, "%.3f", real), fig(dd, sizeof dd, "%+.3f", d),
             fabs(d) <= TOLERANCE ? "" : "!");
}

static void print_table(const validate_row *rows, int n, const char *source)
{
    int checked = 0, within = 0, excl_ok = 0, excl_n = 0, unused = 0;
    /* paths the user named (--config, $CARMA_DATA_DIR) */
    char *shown = str_escape_controls(source), *data = str_escape_controls(carma_data_dir());
    printf("carma simulate --validate: %s on %s/traces/aegis_*_60.csv; figures "
           "normalized\nto exclusive on the same trace (its own row: seconds), simulated vs real "
           "(AEGIS, 3 x A100\n40 GB); ! = off by more than %.2f (exclusive makespan: %.0f %%). "
           "venus is held out: no real\nresults.\n\n", shown ? shown : "?", data ? data : "?",
           TOLERANCE, 100 * EXCL_TOLERANCE);
    free(shown);
    free(data);
    printf("%-7s %-12s  %-26s  %-26s  %-9s  %-15s  %s\n", "trace", "policy",
           "makespan: sim real diff", "mean JCT: sim real diff", "OOM s/r", "done/failed s r",
           "energy MJ s/r");
    for (int i = 0; i < n; i++) {
        const validate_row *r = &rows[i], *ex = &rows[i - i % NRUNS];
        bool base = r == ex, known = r->real.known;
        char mk[128], jct[128], oom[32], energy[80], done[64];
        if (base) {
            print_cell(mk, sizeof mk, r->sim.makespan_s, r->real.makespan_s, known, true, &unused,
                       &unused);
            print_cell(jct, sizeof jct, r->sim.mean_jct_s, r->real.jct_mean_s, known, true,
                       &unused, &unused);
            if (known) {
                excl_n++;
                excl_ok += fabs(r->sim.makespan_s / r->real.makespan_s - 1) <= EXCL_TOLERANCE;
            }
        } else {
            print_cell(mk, sizeof mk, ratio(r->sim.makespan_s, ex->sim.makespan_s),
                       known ? r->real.makespan_s / ex->real.makespan_s : NAN, known, false,
                       &checked, &within);
            print_cell(jct, sizeof jct, ratio(r->sim.mean_jct_s, ex->sim.mean_jct_s),
                       known ? r->real.jct_mean_s / ex->real.jct_mean_s : NAN, known, false,
                       &checked, &within);
        }
        char es[32], er[32];
        if (known)
            snprintf(oom, sizeof oom, "%d/%d", r->sim.oom_crashes, r->real.oom);
        else
            snprintf(oom, sizeof oom, "%d/-", r->sim.oom_crashes);
        snprintf(energy, sizeof energy, "%s/%s",
                 fig(es, sizeof es, "%.1f", sim_display_mj(r->sim.energy_j)),
                 fig(er, sizeof er, "%.1f", known ? sim_display_mj(r->real.energy_j) : NAN));
        /* completed and failed jobs: a run that lost some has figures over fewer jobs */
        int used = snprintf(done, sizeof done, "%zu/%zu ", r->sim.completed, r->sim.failed);
        if (r->real.counts_known)
            snprintf(done + used, sizeof done - (size_t)used, "%d/%d", r->real.completed,
                     r->real.failed);
        else
            snprintf(done + used, sizeof done - (size_t)used, "-");
        printf("%-7s %-12s  %-26s  %-26s  %-9s  %-15s  %s\n", r->trace, r->policy, mk, jct, oom,
               done, energy);
    }
    printf("\nwithin +-%.2f: %d of %d normalized figures; exclusive makespan within %.0f %%: "
           "%d of %d traces\n", TOLERANCE, within, checked, 100 * EXCL_TOLERANCE, excl_ok, excl_n);
}

int simulate_validate(const carma_config *cfg, const char *source, bool json, carma_err *err)
{
    real_run real[NTRACES][NRUNS];
    validate_row rows[NTRACES * NRUNS];
    if (load_real(real, err))
        return -1;
    for (int k = 0; k < NTRACES; k++) {
        if (run_trace(cfg, traces[k], &rows[k * NRUNS], err))
            return -1;
        for (int p = 0; p < NRUNS; p++)
            rows[k * NRUNS + p].real = real[k][p];
    }
    if (json)
        return emit_json(rows, NTRACES * NRUNS) ? carma_err_set(err, "cannot write JSON") : 0;
    print_table(rows, NTRACES * NRUNS, source);
    return 0;
}
