/* config_table.c — carma's options, one row each (config.h says what a row holds). A row's
 * default and bounds are its scope's defaults and bounds objects, field for field: the
 * scheduling core's and the simulator's own (sched/sched_config.c, sim/sim_params.c), the
 * daemon's below. To add an option: its field, its default (and bounds), and a row here. */
#include <math.h>

#include "config/config.h"
#include "gpu/backend.h"
#include "gpu/fakegpu_state.h"
#include "util/hostport.h"

/* ---- the daemon's defaults and bounds (the daemon has no checks of its own) ------------------ */

static const daemon_config daemon_default = {
    .socket = "",
    .state_dir = "",
    .gpu_backend = "nvml",
    .sim_gpus = "2xA100-40GB",
    .sample_interval_s = 1.0,
    .kill_grace_s = 10.0,
    .mps = false,
    .mps_pipe_dir = "",
    .mps_log_dir = "",
    .mps_thread_pct = 0,
    .max_conns_per_uid = 64,
    .conn_idle_timeout_s = 600.0,
    .max_tasks_per_user = 10000, /* Slurm's MaxJobCount */
    .on_finish = "",
    .on_finish_timeout_s = 60.0,
    .keep_attempt_logs_days = 30,
    .max_output_mib = 10240,
    .state_min_free_mib = 1024,
    .metrics_listen = "",
};

static const struct daemon_bounds {
    sched_bounds sample_interval_s, kill_grace_s, mps_thread_pct, max_conns_per_uid,
        conn_idle_timeout_s, max_tasks_per_user, on_finish_timeout_s, keep_attempt_logs_days,
        max_output_mib, state_min_free_mib;
} daemon_limits = {
    .sample_interval_s = {SCHED_UNIT_SECONDS, 0.01, 3600, false},
    .kill_grace_s = {SCHED_UNIT_SECONDS, 0, 86400, false}, /* a day: the timer stays finite */
    .mps_thread_pct = {SCHED_UNIT_INTEGER, 0, 100, false},
    .max_conns_per_uid = {SCHED_UNIT_INTEGER, 1, 1000000, false},
    .conn_idle_timeout_s = {SCHED_UNIT_SECONDS, 1, 86400, false},
    .max_tasks_per_user = {SCHED_UNIT_INTEGER, 0, 1000000, false},
    .on_finish_timeout_s = {SCHED_UNIT_SECONDS, 0.1, 86400, false},
    .keep_attempt_logs_days = {SCHED_UNIT_INTEGER, 0, 36500, false},
    .max_output_mib = {SCHED_UNIT_INTEGER, 0, 1 << 30, false},
    .state_min_free_mib = {SCHED_UNIT_INTEGER, 0, 1 << 30, false},
};

_Static_assert(SIM_SERVER_MAX == CONFIG_STR_MAX, "sim_server is set as a CONFIG_STRING");
_Static_assert((int)SIM_POWER_FRAC_SUM_MAX == 2, "the sim_power_* help says the sum's bound");

/* ---- checks across keys ------------------------------------------------------------------- */

static int check_sim_server(const carma_config *cfg, carma_err *err)
{
    return sim_params_check_server(&cfg->sim, err); /* the sim_gpu_model keys define models */
}

static int check_sim_power(const carma_config *cfg, carma_err *err)
{
    return sim_params_check_power(&cfg->sim, err);
}

/* A hook is run by its path, never looked up in a PATH. */
static int check_on_finish(const carma_config *cfg, carma_err *err)
{
    const char *p = cfg->daemon.on_finish;
    if (p[0] && p[0] != '/')
        return carma_err_set(err, "on_finish: '%s' is not an absolute path", p);
    return 0;
}

/* Each task is handed the pipe directory and resolves it from its own working directory: a
 * relative one would name another directory there, and the task would run outside MPS. */
static int check_mps_dir(const char *key, const char *p, carma_err *err)
{
    if (p[0] && p[0] != '/')
        return carma_err_set(err, "%s: '%s' is not an absolute path", key, p);
    return 0;
}

static int check_mps_pipe_dir(const carma_config *cfg, carma_err *err)
{
    return check_mps_dir("mps_pipe_dir", cfg->daemon.mps_pipe_dir, err);
}

static int check_mps_log_dir(const carma_config *cfg, carma_err *err)
{
    return check_mps_dir("mps_log_dir", cfg->daemon.mps_log_dir, err);
}

/* A backend carma does not have would stop the daemon only once it started: refused here, with
 * the rest of the file. */
static int check_gpu_backend(const carma_config *cfg, carma_err *err)
{
    if (gpu_backend_check(cfg->daemon.gpu_backend, err))
        return carma_err_prefix(err, "gpu_backend");
    return 0;
}

/* The sim backend's GPUs too, whichever backend is chosen: a config is not half right. */
static int check_sim_gpus(const carma_config *cfg, carma_err *err)
{
    if (fakegpu_check_spec(cfg->daemon.sim_gpus, err))
        return carma_err_prefix(err, "sim_gpus");
    return 0;
}

/* The metrics endpoint's address is checked with the rest of the file, so that a bad one
 * stops the daemon before it starts (a port in use is found when it listens). */
static int check_metrics_listen(const carma_config *cfg, carma_err *err)
{
    hostport hp;
    if (cfg->daemon.metrics_listen[0] && hostport_parse(cfg->daemon.metrics_listen, &hp, err))
        return carma_err_prefix(err, "metrics_listen");
    return 0;
}

/* ---- the rows ------------------------------------------------------------------------------ */

/* SCOPE (SCHED, DAEMON or SIM) names the member of carma_config, its defaults and its bounds. */
#define MEMBER_SCHED sched
#define MEMBER_DAEMON daemon
#define MEMBER_SIM sim
#define DEFAULTS_SCHED sched_config_default
#define DEFAULTS_DAEMON daemon_default
#define DEFAULTS_SIM sim_params_default
#define LIMITS_SCHED sched_config_limits
#define LIMITS_DAEMON daemon_limits
#define LIMITS_SIM sim_params_limits

#define ROW(name_, type_, scope_, field_, def_, bounds_, help_)                                  \
    .name = name_, .type = type_, .scope = CONFIG_##scope_,                                      \
    .offset = offsetof(carma_config, MEMBER_##scope_.field_), .def = {def_}, .bounds = bounds_,  \
    .help = help_

/* One maker per type, as Redis's createBoolConfig() & co.: NAME, SCOPE, FIELD, HELP. The
 * default's pointer is typed, so a row whose type does not match its field draws an
 * incompatible-pointer diagnostic (an error under CARMA_WERROR, as CI builds). */
#define OPT_POLICY(name, scope, field, help) \
    ROW(name, CONFIG_POLICY, scope, field, .policy = &DEFAULTS_##scope.field, NULL, help)
#define OPT_ESTIMATOR(name, scope, field, help) \
    ROW(name, CONFIG_ESTIMATOR, scope, field, .estimator = &DEFAULTS_##scope.field, NULL, help)
#define OPT_AGG(name, scope, field, help) \
    ROW(name, CONFIG_AGG, scope, field, .agg = &DEFAULTS_##scope.field, NULL, help)
#define OPT_DOUBLE(name, scope, field, help)                                                     \
    ROW(name, CONFIG_DOUBLE, scope, field, .d = &DEFAULTS_##scope.field, &LIMITS_##scope.field,  \
        help)
#define OPT_INT(name, scope, field, help) \
    ROW(name, CONFIG_INT, scope, field, .i = &DEFAULTS_##scope.field, &LIMITS_##scope.field, help)
#define OPT_MIB(name, scope, field, help) \
    ROW(name, CONFIG_MIB, scope, field, .mib = &DEFAULTS_##scope.field, NULL, help)
#define OPT_BOOL(name, scope, field, help) \
    ROW(name, CONFIG_BOOL, scope, field, .b = &DEFAULTS_##scope.field, NULL, help)
#define OPT_STRING(name, scope, field, help) \
    ROW(name, CONFIG_STRING, scope, field, .s = DEFAULTS_##scope.field, NULL, help)
#define OPT_GPU_MODELS(name, scope, field, help) \
    ROW(name, CONFIG_GPU_MODELS, scope, field, .models = &DEFAULTS_##scope.field, NULL, help)

const config_row config_rows[] = {
    /* ---- the scheduling core ---- */
    {OPT_POLICY("policy", SCHED, policy, "placement policy: {}")},
    {OPT_ESTIMATOR("estimator", SCHED, estimator,
                   "memory figure of the est-* policies: {} (none: the measured figure)")},
    {OPT_DOUBLE("smact_threshold", SCHED, thr_smact,
                "utilization gate: reject a GPU when SMACT >= this and (SMOCC or DRAMA over "
                "theirs)")},
    {OPT_DOUBLE("smocc_threshold", SCHED, thr_smocc, "utilization gate: SMOCC threshold")},
    {OPT_DOUBLE("drama_threshold", SCHED, thr_drama, "utilization gate: DRAMA threshold")},
    {OPT_MIB("reserve_mib", SCHED, reserve_mib, "MiB held back from every GPU's free memory")},
    {OPT_MIB("margin_mib", SCHED, margin_mib,
             "MiB added to a task's figure by the oracle-* and est-* policies")},
    {OPT_MIB("or_min_free_mib", SCHED, or_min_free_mib,
             "fixed free-memory floor of or-magm and or-lug")},
    {OPT_INT("window", SCHED, window, "monitoring samples per GPU in the rolling window")},
    {OPT_AGG("aggregation", SCHED, agg,
             "window aggregation: mean, ewma, risk (CARMA: 0.2 mean + 0.3 median + 0.3 p95 + "
             "0.2 EMA), risk-equal (AEGIS: 0.25 each)")},
    {OPT_DOUBLE("ewma_alpha", SCHED, ewma_alpha, "smoothing factor of the ewma aggregation")},
    {OPT_DOUBLE("grace_s", SCHED, grace_s,
                "seconds a GPU takes no new task after a launched task's process appears on "
                "it")},
    {OPT_INT("retry_cap", SCHED, retry_cap,
             "out-of-memory relaunches of a task before it fails for good")},
    {OPT_DOUBLE("horus_util_budget", SCHED, horus_util_budget,
                "horus: a GPU takes a task while the summed profiled utilization of its tasks "
                "stays at or below this (1 = 100 %)")},
    {OPT_INT("lucid_max_jobs", SCHED, lucid_max_jobs, "lucid: at most this many tasks per GPU")},
    {OPT_INT("max_tasks_per_gpu", SCHED, max_tasks_per_gpu,
             "every policy: a GPU running this many tasks takes no more until one ends (0: no "
             "cap)")},
    {OPT_INT("lucid_class_capacity", SCHED, lucid_class_capacity,
             "lucid: the sharing classes (Tiny 0, Medium 1, Jumbo 2) of a GPU's tasks sum to at "
             "most this")},
    {OPT_BOOL("carma_ledger", SCHED, carma_ledger,
              "carma: place by the memory ledger (each GPU's committed figures + margins, "
              "reconciled with measured free memory), with no grace wait (on/off)")},
    {OPT_BOOL("carma_backfill", SCHED, carma_backfill,
              "carma: a later task may start while the head waits if, by the runtime estimates, "
              "it does not delay the head's reserved start (on/off)")},
    {OPT_INT("backfill_max_skips", SCHED, backfill_max_skips,
             "carma: tasks that may pass a waiting head with no runtime estimate to vouch for "
             "them")},
    {OPT_INT("backfill_depth", SCHED, backfill_depth,
             "carma: queued tasks looked at behind a waiting head")},
    {OPT_BOOL("carma_interference", SCHED, carma_interference,
              "carma: place where the predicted total progress rises most, and wait when it "
              "would not rise (on); off: the utilization gate and most available memory")},
    {OPT_BOOL("carma_oom_learning", SCHED, carma_oom_learning,
              "carma: an out-of-memory crash raises the task's figure to what it needed, or "
              "fails it when no GPU can hold that (on); off: blind retries on idle GPUs")},
    {OPT_BOOL("carma_measured_first", SCHED, carma_measured_first,
              "carma: place with a measured figure (given, or history) when there is one, else "
              "the estimator's (on); off: the estimator's")},
    {OPT_BOOL("carma_longest_first", SCHED, carma_longest_first,
              "carma: the head is the queued task with the most expected work (runtime x GPUs) "
              "among the first backfill_depth, unless one has waited longer than "
              "carma_max_wait_s (on); off: first come, first served")},
    {OPT_DOUBLE("carma_max_wait_s", SCHED, carma_max_wait_s,
                "carma: a task queued this long goes first, whatever its length")},
    {OPT_DOUBLE("carma_min_gain", SCHED, carma_min_gain,
                "carma: collocate only when a GPU's predicted total progress rises by more than "
                "this (tasks' solo speeds)")},
    {OPT_DOUBLE("carma_unknown_pressure", SCHED, carma_unknown_pressure,
                "carma: interference pressure assumed for a task with no solo profile")},
    {OPT_DOUBLE("carma_interference_smact_k", SCHED, interference.smact_k,
                "carma: the predictor's sim_interference_smact_k (default: the fitted model)")},
    {OPT_DOUBLE("carma_interference_smact_knee", SCHED, interference.smact_knee,
                "carma: the predictor's SMACT knee (default: the fitted model)")},
    {OPT_DOUBLE("carma_interference_drama_k", SCHED, interference.drama_k,
                "carma: the predictor's DRAM-activity slope (default: the fitted model)")},

    /* ---- the daemon ---- */
    {OPT_STRING("socket", DAEMON, socket,
                "daemon socket path (empty: a daemon serves /run/carma/carma.sock as root, else "
                "$XDG_RUNTIME_DIR/carma.sock when that directory is the user's and private "
                "(no access for group or others, as /run/user/UID; else "
                "/run/user/UID when it is so), else /tmp/carma-UID.sock; a client tries "
                "/run/carma/carma.sock, then those two); $CARMA_SOCKET overrides it for clients "
                "and daemon")},
    {OPT_STRING("state_dir", DAEMON, state_dir,
                "daemon state directory: database and task logs (empty: /var/lib/carma as root, "
                "else $XDG_STATE_HOME/carma if absolute, else ~/.local/state/carma, or "
                "/tmp/carma-state-UID without $HOME)")},
    {OPT_STRING("gpu_backend", DAEMON, gpu_backend, "daemon GPU backend: sim or nvml"),
     .check = check_gpu_backend},
    {OPT_STRING("sim_gpus", DAEMON, sim_gpus,
                "GPUs of the sim backend, e.g. 2xA100-40GB or 1xA100-40GB,1xV100-16GB"),
     .check = check_sim_gpus},
    {OPT_DOUBLE("sample_interval_s", DAEMON, sample_interval_s,
                "daemon monitoring tick in seconds")},
    {OPT_DOUBLE("kill_grace_s", DAEMON, kill_grace_s,
                "seconds between SIGTERM and SIGKILL when a task is cancelled")},
    {OPT_INT("max_conns_per_uid", DAEMON, max_conns_per_uid,
             "daemon: connections one user may hold open at once (root and the daemon's own "
             "user are not limited, and some connections are kept for them alone)")},
    {OPT_DOUBLE("conn_idle_timeout_s", DAEMON, conn_idle_timeout_s,
                "daemon: seconds a connection may send nothing, or leave its replies unread "
                "(none of them taken), before it is dropped (at most 60, 15 or 5 s once half, "
                "three quarters or 90 % of the connections are open)")},
    {OPT_INT("max_tasks_per_user", DAEMON, max_tasks_per_user,
             "daemon: tasks one user may have not ended (queued, held or running; each of an "
             "--array counts): a submission past it is refused, so that no user can fill the "
             "daemon's memory and disk (0: no limit; root is not limited)")},
    {OPT_BOOL("mps", DAEMON, mps,
              "daemon: run tasks as CUDA MPS clients (on/off); a collocated task is capped at "
              "its memory figure plus margin_mib, so an estimate that is too low fails that task "
              "alone")},
    {OPT_STRING("mps_pipe_dir", DAEMON, mps_pipe_dir,
                "daemon: MPS pipe directory, an absolute path (empty: STATE/mps/pipe, or as "
                "root STATE-mps: other users' MPS servers must reach it, so as root it and "
                "every directory above it must be searchable by others)"),
     .check = check_mps_pipe_dir},
    {OPT_STRING("mps_log_dir", DAEMON, mps_log_dir,
                "daemon: MPS log directory, an absolute path (empty: STATE/mps/log; kept "
                "private)"),
     .check = check_mps_log_dir},
    {OPT_INT("mps_active_thread_percentage", DAEMON, mps_thread_pct,
             "daemon: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE given to each collocated task (0: not "
             "set)")},
    {OPT_INT("keep_attempt_logs_days", DAEMON, keep_attempt_logs_days,
             "daemon: days an ended task's attempt logs (STATE/attempts) and its stored "
             "environment are kept after its end; checked at start and hourly (0: forever)")},
    {OPT_INT("max_output_mib", DAEMON, max_output_mib,
             "daemon: the most MiB of a task's stdout and stderr together written to its logs "
             "(STATE/attempts) per attempt; past it the rest is dropped and the task "
             "cancelled, saying why, so that no task's output fills the state directory's "
             "filesystem (0: no limit)")},
    {OPT_INT("state_min_free_mib", DAEMON, state_min_free_mib,
             "daemon: while the state directory's filesystem has less than this many MiB free "
             "(to unprivileged users), new tasks are refused, queued ones wait and running "
             "ones' output is dropped (the tasks go on), so that the daemon's database and the "
             "system keep room (0: no floor)")},

    {OPT_STRING("on_finish", DAEMON, on_finish,
                "daemon: a program (absolute path) run when a task has ended for good, as the "
                "task's owner, with CARMA_TASK_ID, _NAME, _USER, _STATE, _OUTCOME, _EXIT and "
                "_SIGNAL in its environment; its output goes to the daemon's log (empty: none)"),
     .check = check_on_finish},
    {OPT_DOUBLE("on_finish_timeout_s", DAEMON, on_finish_timeout_s,
                "daemon: seconds the on_finish program may run before it is killed")},
    {OPT_STRING("metrics_listen", DAEMON, metrics_listen,
                "daemon: serve Prometheus metrics (GET /metrics, read-only HTTP) on HOST:PORT, "
                "[IPV6]:PORT or :PORT (every address); port 0 takes a free one, named in the "
                "log; docs/metrics.md (empty: off)"),
     .check = check_metrics_listen},

    /* ---- the simulator ---- */
    {OPT_STRING("sim_server", SIM, server,
                "simulator: the server carma simulate runs on without --gpus, COUNTxMODEL (a "
                "MODEL alone is one GPU)"),
     .check = check_sim_server, .check_reads = "sim_gpu_model"},
    {OPT_DOUBLE("sim_startup_s", SIM, startup_s,
                "simulator: CPU start-up seconds of a task whose catalog row has none measured "
                "(the measured ones: AEGIS solo end-to-end minus training-loop time)")},
    {OPT_BOOL("sim_interference", SIM, interference,
              "simulator: slow collocated tasks down (on/off)")},
    {OPT_DOUBLE("sim_interference_smact_k", SIM, interf_smact_k,
                "simulator: a task runs at 1 / (1 + sum of its co-runners' pressure), pressure = "
                "smact_k * max(0, SMACT - smact_knee) + drama_k * DRAMA of the co-runner's solo "
                "profile (fitted to the 219 A100 pairs of data/aegis/pairwise_a100.csv, "
                "tools/fit_sim_models.py)")},
    {OPT_DOUBLE("sim_interference_smact_knee", SIM, interf_smact_knee,
                "simulator: SMACT above which a co-runner slows the others (same fit)")},
    {OPT_DOUBLE("sim_interference_drama_k", SIM, interf_drama_k,
                "simulator: slow-down per unit of a co-runner's DRAM activity (same fit)")},
    {OPT_DOUBLE("sim_mem_ramp_s", SIM, mem_ramp_s,
                "simulator: seconds after its allocation a task grows from its early (first "
                "200 s) peak to its full-run peak, crashing out of memory if its GPU cannot hold "
                "that")},
    {OPT_BOOL("sim_mps_caps", SIM, mps_caps,
              "simulator: cap each collocated task at its placement figure plus margin_mib, as "
              "the daemon's mps does; a task that outgrows its cap crashes alone (on/off)")},
    {OPT_BOOL("sim_history", SIM, history,
              "simulator: give the policies a task's run time and solo profile only as the "
              "daemon's run history would, from an earlier run of the same task file that "
              "ended done with its GPUs to itself (none before), and no Lucid class; off: the "
              "catalog's (on/off)")},
    {OPT_DOUBLE("sim_power_busy_frac", SIM, power_busy_frac,
                "simulator: a GPU holding tasks draws max_w * (busy_frac + util_frac * "
                "utilization) (fitted to the DCGM energy of the real philly and saturn runs, "
                "tools/fit_sim_models.py); busy_frac + util_frac is at most 2")},
    {OPT_DOUBLE("sim_power_util_frac", SIM, power_util_frac,
                "simulator: power per unit of GPU utilization, as a fraction of max_w (same "
                "fit); with sim_power_busy_frac at most 2"),
     .check = check_sim_power, .check_reads = "sim_power_busy_frac"},
    {OPT_GPU_MODELS("sim_gpu_model", SIM, gpu_models,
                    "simulator: an extra GPU model NAME:MEMORY:IDLE_W:MAX_W (repeat the key for "
                    "more)")},
};

const size_t config_nrows = sizeof config_rows / sizeof config_rows[0];
