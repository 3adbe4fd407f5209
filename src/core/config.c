/* config.c — the option table behind carma's config file and --set overrides. */
#include "core/config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"

typedef enum opt_kind { OPT_POLICY, OPT_ESTIMATOR, OPT_AGG, OPT_FRACTION, OPT_SECONDS,
                        OPT_MIB, OPT_COUNT, OPT_POSITIVE, OPT_NUMBER, OPT_BOOL,
                        OPT_GPU_MODEL, OPT_STRING } opt_kind;

typedef struct config_option {
    const char *key;
    opt_kind kind;
    size_t offset; /* into carma_config */
    const char *help;
} config_option;

#define SCHED_FIELD(f) offsetof(carma_config, sched) + offsetof(sched_config, f)
#define DAEMON_FIELD(f) offsetof(carma_config, daemon) + offsetof(daemon_config, f)
#define SIM_FIELD(f) offsetof(carma_config, sim) + offsetof(sim_params, f)

static const config_option options[] = {
    {"policy", OPT_POLICY, SCHED_FIELD(policy),
     "placement policy: exclusive, or-rr, oracle-ff, oracle-bf, oracle-magm, oracle-lug, "
     "or-magm, or-lug, est-magm, est-lug, horus, lucid"},
    {"estimator", OPT_ESTIMATOR, SCHED_FIELD(estimator),
     "memory figure of the est-* policies: none (the measured figure), horus, faketensor, "
     "gpumemnet, carma"},
    {"smact_threshold", OPT_FRACTION, SCHED_FIELD(thr_smact),
     "utilization gate: reject a GPU when SMACT >= this and (SMOCC or DRAMA over theirs)"},
    {"smocc_threshold", OPT_FRACTION, SCHED_FIELD(thr_smocc), "utilization gate: SMOCC threshold"},
    {"drama_threshold", OPT_FRACTION, SCHED_FIELD(thr_drama), "utilization gate: DRAMA threshold"},
    {"reserve_mib", OPT_MIB, SCHED_FIELD(reserve_mib),
     "MiB held back from every GPU's free memory"},
    {"margin_mib", OPT_MIB, SCHED_FIELD(margin_mib),
     "MiB added to a task's figure by the oracle-* and est-* policies"},
    {"or_min_free_mib", OPT_MIB, SCHED_FIELD(or_min_free_mib),
     "fixed free-memory floor of or-magm and or-lug"},
    {"window", OPT_POSITIVE, SCHED_FIELD(window), "monitoring samples per GPU in the rolling window"},
    {"aggregation", OPT_AGG, SCHED_FIELD(agg), "window aggregation: mean, ewma, risk (CARMA: 0.2 mean + 0.3 median + 0.3 p95 + 0.2 EMA), "
     "risk-equal (AEGIS: 0.25 each)"},
    {"ewma_alpha", OPT_FRACTION, SCHED_FIELD(ewma_alpha), "smoothing factor of the ewma aggregation"},
    {"grace_s", OPT_SECONDS, SCHED_FIELD(grace_s),
     "seconds a GPU takes no new task after a launched task's process appears on it"},
    {"retry_cap", OPT_COUNT, SCHED_FIELD(retry_cap),
     "out-of-memory relaunches of a task before it fails for good"},
    {"horus_util_budget", OPT_NUMBER, SCHED_FIELD(horus_util_budget),
     "horus: a GPU takes a task while the summed profiled utilization of its tasks stays at "
     "or below this (1 = 100 %)"},
    {"lucid_max_jobs", OPT_POSITIVE, SCHED_FIELD(lucid_max_jobs),
     "lucid: at most this many tasks per GPU"},
    {"lucid_class_capacity", OPT_COUNT, SCHED_FIELD(lucid_class_capacity),
     "lucid: the sharing classes (Tiny 0, Medium 1, Jumbo 2) of a GPU's tasks sum to at most this"},
    {"socket", OPT_STRING, DAEMON_FIELD(socket),
     "daemon socket path (empty: /run/carma/carma.sock as root, else /tmp/carma-UID.sock); "
     "$CARMA_SOCKET overrides it for clients"},
    {"state_dir", OPT_STRING, DAEMON_FIELD(state_dir),
     "daemon state directory: database and task logs (empty: /var/lib/carma as root, else "
     "~/.local/state/carma)"},
    {"gpu_backend", OPT_STRING, DAEMON_FIELD(gpu_backend), "daemon GPU backend: sim or nvml"},
    {"sim_gpus", OPT_STRING, DAEMON_FIELD(sim_gpus),
     "GPUs of the sim backend, e.g. 2xA100-40GB or 1xA100-40GB,1xV100-16GB"},
    {"sample_interval_s", OPT_SECONDS, DAEMON_FIELD(sample_interval_s),
     "daemon monitoring tick in seconds"},
    {"kill_grace_s", OPT_SECONDS, DAEMON_FIELD(kill_grace_s),
     "seconds between SIGTERM and SIGKILL when a task is cancelled"},
    {"mps", OPT_BOOL, DAEMON_FIELD(mps),
     "daemon: run tasks as CUDA MPS clients (on/off); a collocated task is capped at its memory "
     "figure plus margin_mib, so an estimate that is too low fails that task alone"},
    {"mps_pipe_dir", OPT_STRING, DAEMON_FIELD(mps_pipe_dir),
     "daemon: MPS pipe directory (empty: STATE/mps/pipe)"},
    {"mps_log_dir", OPT_STRING, DAEMON_FIELD(mps_log_dir),
     "daemon: MPS log directory (empty: STATE/mps/log)"},
    {"mps_active_thread_percentage", OPT_COUNT, DAEMON_FIELD(mps_thread_pct),
     "daemon: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE given to each collocated task (0: not set)"},
    {"sim_server", OPT_STRING, SIM_FIELD(server),
     "simulator: the server carma simulate runs on without --gpus, COUNTxMODEL"},
    {"sim_startup_s", OPT_SECONDS, SIM_FIELD(startup_s),
     "simulator: CPU start-up seconds of a task whose catalog row has none measured "
     "(the measured ones: AEGIS solo end-to-end minus training-loop time)"},
    {"sim_interference", OPT_BOOL, SIM_FIELD(interference),
     "simulator: slow collocated tasks down (on/off)"},
    {"sim_interference_smact_k", OPT_NUMBER, SIM_FIELD(interf_smact_k),
     "simulator: a task runs at 1 / (1 + sum of its co-runners' pressure), pressure = "
     "smact_k * max(0, SMACT - smact_knee) + drama_k * DRAMA of the co-runner's solo profile "
     "(fitted to the 219 A100 pairs of data/aegis/pairwise_a100.csv, tools/fit_sim_models.py)"},
    {"sim_interference_smact_knee", OPT_FRACTION, SIM_FIELD(interf_smact_knee),
     "simulator: SMACT above which a co-runner slows the others (same fit)"},
    {"sim_interference_drama_k", OPT_NUMBER, SIM_FIELD(interf_drama_k),
     "simulator: slow-down per unit of a co-runner's DRAM activity (same fit)"},
    {"sim_mem_ramp_s", OPT_SECONDS, SIM_FIELD(mem_ramp_s),
     "simulator: seconds after its allocation a task grows from its early (first 200 s) peak "
     "to its full-run peak, crashing out of memory if its GPU cannot hold that"},
    {"sim_power_busy_frac", OPT_NUMBER, SIM_FIELD(power_busy_frac),
     "simulator: a GPU holding tasks draws max_w * (busy_frac + util_frac * utilization) "
     "(fitted to the DCGM energy of the real philly and saturn runs, tools/fit_sim_models.py)"},
    {"sim_power_util_frac", OPT_NUMBER, SIM_FIELD(power_util_frac),
     "simulator: power per unit of GPU utilization, as a fraction of max_w (same fit)"},
    {"sim_gpu_model", OPT_GPU_MODEL, SIM_FIELD(gpu_models),
     "simulator: an extra GPU model NAME:MEMORY:IDLE_W:MAX_W (repeat the key for more)"},
};

#define NOPTIONS (sizeof options / sizeof options[0])

_Static_assert(SIM_SERVER_MAX == CONFIG_STR_MAX, "sim_server is set as an OPT_STRING");

void config_defaults(carma_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    sched_config_defaults(&cfg->sched);
    strcpy(cfg->daemon.gpu_backend, "nvml");
    strcpy(cfg->daemon.sim_gpus, "2xA100-40GB");
    cfg->daemon.sample_interval_s = 1.0;
    cfg->daemon.kill_grace_s = 10.0;
    sim_params_defaults(&cfg->sim);
}

static const config_option *find_option(const char *key)
{
    for (size_t i = 0; i < NOPTIONS; i++)
        if (!strcmp(options[i].key, key))
            return &options[i];
    return NULL;
}

static int set_option(carma_config *cfg, const config_option *o, const char *value, carma_err *err)
{
    char *field = (char *)cfg + o->offset;
    double d;
    int64_t i;
    uint64_t u;
    switch (o->kind) {
    case OPT_POLICY:
        if (policy_from_name(value, (policy_id *)field))
            return carma_err_set(err, "%s: unknown policy '%s' (see `carma config --list`)", o->key,
                                 value);
        return 0;
    case OPT_ESTIMATOR:
        if (mem_source_from_estimator(value, (mem_source *)field))
            return carma_err_set(err,
                                 "%s: unknown estimator '%s' (expected none, horus, faketensor, "
                                 "gpumemnet or carma)",
                                 o->key, value);
        return 0;
    case OPT_AGG:
        if (agg_mode_from_name(value, (agg_mode *)field))
            return carma_err_set(err, "%s: unknown aggregation '%s' (expected mean, ewma, risk or "
                                 "risk-equal)",
                                 o->key, value);
        return 0;
    case OPT_FRACTION:
        if (parse_double(value, &d) || d < 0 || d > 1)
            return carma_err_set(err, "%s: expected a fraction between 0 and 1, got '%s'", o->key,
                                 value);
        *(double *)field = d;
        return 0;
    case OPT_SECONDS:
        if (parse_double(value, &d) || d < 0)
            return carma_err_set(err, "%s: expected seconds >= 0, got '%s'", o->key, value);
        *(double *)field = d;
        return 0;
    case OPT_MIB:
        if (parse_size_mib(value, &u))
            return carma_err_set(err, "%s: expected a size in MiB (e.g. 2048, 2G), got '%s'",
                                 o->key, value);
        *(uint64_t *)field = u;
        return 0;
    case OPT_STRING:
        if (strlen(value) >= CONFIG_STR_MAX)
            return carma_err_set(err, "%s: value longer than %d characters", o->key,
                                 CONFIG_STR_MAX - 1);
        strcpy(field, value);
        return 0;
    case OPT_NUMBER:
        if (parse_double(value, &d) || d < 0)
            return carma_err_set(err, "%s: expected a number >= 0, got '%s'", o->key, value);
        *(double *)field = d;
        return 0;
    case OPT_BOOL:
        if (parse_bool(value, (bool *)field))
            return carma_err_set(err, "%s: expected on or off, got '%s'", o->key, value);
        return 0;
    case OPT_GPU_MODEL: {
        gpu_model m;
        if (gpu_model_parse(value, &m, err) ||
            gpu_model_list_add((gpu_model_list *)field, &m, err))
            return carma_err_prefix(err, "%s", o->key);
        return 0;
    }
    case OPT_COUNT:
    case OPT_POSITIVE: {
        int64_t lo = o->kind == OPT_POSITIVE ? 1 : 0;
        if (parse_i64(value, &i) || i < lo || i > 1000000)
            return carma_err_set(err, "%s: expected an integer >= %lld, got '%s'", o->key,
                                 (long long)lo, value);
        *(int *)field = (int)i;
        return 0;
    }
    }
    return carma_err_set(err, "%s: unhandled option kind", o->key);
}

int config_set(carma_config *cfg, const char *key, const char *value, carma_err *err)
{
    const config_option *o = find_option(key);
    if (!o)
        return carma_err_set(err, "unknown config key '%s' (see `carma config --list`)", key);
    return set_option(cfg, o, value, err);
}

int config_set_pair(carma_config *cfg, const char *pair, carma_err *err)
{
    const char *eq = strchr(pair, '=');
    if (!eq)
        return carma_err_set(err, "expected KEY=VALUE, got '%s'", pair);
    char key[128];
    size_t n = (size_t)(eq - pair);
    if (n == 0 || n >= sizeof key)
        return carma_err_set(err, "expected KEY=VALUE, got '%s'", pair);
    memcpy(key, pair, n);
    key[n] = '\0';
    str_trim(key);
    return config_set(cfg, key, eq + 1, err);
}

int config_load_file(carma_config *cfg, const char *path, carma_err *err)
{
    char *text = read_file(path, NULL);
    if (!text)
        return carma_err_set(err, "config %s: %s", path, strerror(errno));
    carma_config work = *cfg; /* nothing changes unless the whole file is good */
    int rc = 0;
    size_t lineno = 0;
    for (char *line = text, *next; line; line = next) {
        lineno++;
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        str_trim(line);
        if (!*line)
            continue;
        char *eq = strchr(line, '=');
        if (!eq) {
            rc = carma_err_set(err, "%s:%zu: expected `key = value`", path, lineno);
            break;
        }
        *eq = '\0';
        char *key = str_trim(line), *value = str_trim(eq + 1);
        const config_option *o = find_option(key);
        if (!*value && !(o && o->kind == OPT_STRING)) { /* "" = a string's built-in default */
            rc = carma_err_set(err, "%s:%zu: %s: missing value", path, lineno, key);
            break;
        }
        if (config_set(&work, key, value, err)) {
            rc = carma_err_prefix(err, "%s:%zu", path, lineno);
            break;
        }
    }
    free(text);
    if (rc == 0 && (rc = config_validate(&work, err)) != 0)
        carma_err_prefix(err, "%s", path);
    if (rc == 0)
        *cfg = work;
    return rc;
}

int config_validate(const carma_config *cfg, carma_err *err)
{
    if (cfg->daemon.sample_interval_s < 0.01 || cfg->daemon.sample_interval_s > 3600)
        return carma_err_set(err, "sample_interval_s: expected 0.01..3600 seconds");
    if (cfg->daemon.mps_thread_pct < 0 || cfg->daemon.mps_thread_pct > 100)
        return carma_err_set(err, "mps_active_thread_percentage: expected 0..100, got %d",
                             cfg->daemon.mps_thread_pct);
    if (sched_config_validate(&cfg->sched, err))
        return -1;
    return sim_params_validate(&cfg->sim, err);
}

static void write_value(const carma_config *cfg, const config_option *o, FILE *out)
{
    const char *field = (const char *)cfg + o->offset;
    switch (o->kind) {
    case OPT_POLICY:
        fputs(policy_name(*(const policy_id *)field), out);
        break;
    case OPT_ESTIMATOR:
        fputs(mem_source_estimator_name(*(const mem_source *)field), out);
        break;
    case OPT_AGG:
        fputs(agg_mode_name(*(const agg_mode *)field), out);
        break;
    case OPT_FRACTION:
    case OPT_SECONDS:
    case OPT_NUMBER:
        fprintf(out, "%g", *(const double *)field);
        break;
    case OPT_MIB:
        fprintf(out, "%llu", (unsigned long long)*(const uint64_t *)field);
        break;
    case OPT_COUNT:
    case OPT_POSITIVE:
        fprintf(out, "%d", *(const int *)field);
        break;
    case OPT_STRING:
        fputs(field, out);
        break;
    case OPT_BOOL:
        fputs(*(const bool *)field ? "on" : "off", out);
        break;
    case OPT_GPU_MODEL:
        break; /* written by config_write, one line per model */
    }
}

void config_write(const carma_config *cfg, FILE *out)
{
    for (size_t i = 0; i < NOPTIONS; i++) {
        if (options[i].kind == OPT_GPU_MODEL) {
            const gpu_model_list *l = (const void *)((const char *)cfg + options[i].offset);
            fprintf(out, "# %s\n", options[i].help);
            if (l->n == 0)
                fprintf(out, "# %s = A30-24GB:24G:30:165\n", options[i].key);
            for (int j = 0; j < l->n; j++)
                fprintf(out, "%s = %s:%llu:%g:%g\n", options[i].key, l->items[j].name,
                        (unsigned long long)l->items[j].memory_mib, l->items[j].idle_w,
                        l->items[j].max_w);
            fputs("\n", out);
            continue;
        }
        fprintf(out, "# %s\n%s = ", options[i].help, options[i].key);
        write_value(cfg, &options[i], out);
        fputs("\n\n", out);
    }
}
