/* config.h — carma's configuration: one `key = value` file (CARMA's defaults shipped in
 * data/carma.conf), every key also settable from the command line with --set KEY=VALUE.
 *
 * One table (config_table.c, in the manner of Redis's static_configs[]) has a row per option:
 * its name, type, where it applies, its field, default, bounds, help and an optional check
 * across keys. Parsing, --set, validation, `carma config` (and so data/carma.conf) and
 * `carma config --list` all walk it. The defaults and bounds of the scheduling core's and the
 * simulator's keys are the core's and the simulator's own (sched/sched_config.h,
 * sim/sim_config.h): the rows point at them, so each number is written once. */
#ifndef CARMA_CORE_CONFIG_H
#define CARMA_CORE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sched/sched.h"
#include "sched/sched_config.h"
#include "sim/sim_config.h" /* the simulator's settings: types and data, not its models */
#include "util/err.h"

#define CONFIG_STR_MAX 256

/* The live daemon's settings (`carma daemon` and the clients' default socket). */
typedef struct daemon_config {
    char socket[CONFIG_STR_MAX];      /* Unix socket path; "" = the built-in default */
    char state_dir[CONFIG_STR_MAX];   /* SQLite database, attempt logs; "" = built-in default */
    char gpu_backend[CONFIG_STR_MAX]; /* "sim" or "nvml" */
    char sim_gpus[CONFIG_STR_MAX];    /* sim backend's GPUs, e.g. "2xA100-40GB" */
    double sample_interval_s; /* monitoring tick */
    double kill_grace_s;      /* SIGTERM -> SIGKILL delay when a task is cancelled */
    bool mps;                 /* run tasks as CUDA MPS clients with a memory cap each */
    char mps_pipe_dir[CONFIG_STR_MAX]; /* "" = STATE/mps/pipe (root: STATE-mps) */
    char mps_log_dir[CONFIG_STR_MAX];  /* "" = STATE/mps/log */
    int mps_thread_pct;       /* CUDA_MPS_ACTIVE_THREAD_PERCENTAGE per task; 0 = not set */
    int max_conns_per_uid;    /* open connections per user (root, the daemon's own: no cap) */
    double conn_idle_timeout_s; /* a connection silent this long, or whose replies wait unread
                                   this long, is dropped (sooner as the table fills) */
    int max_tasks_per_user;   /* a user's tasks not ended (queued, running); 0 = no cap; root:
                                 no cap */
    char on_finish[CONFIG_STR_MAX]; /* run when a task ends for good; "" = nothing */
    double on_finish_timeout_s;     /* then killed */
    int keep_attempt_logs_days; /* ended tasks' attempt directories removed after; 0 = never */
    int max_output_mib;       /* stdout + stderr logged per attempt; past it dropped and the
                                 task cancelled (outpump.h); 0 = no limit */
    int state_min_free_mib;   /* under this free in the state directory's filesystem: no new
                                 tasks, task output dropped (statedir.c); 0 = no floor */
    char metrics_listen[CONFIG_STR_MAX]; /* Prometheus endpoint, "HOST:PORT"; "" = none */
} daemon_config;

typedef struct carma_config {
    sched_config sched;
    daemon_config daemon;
    sim_params sim; /* the simulator's models (carma simulate) */
} carma_config;

/* ---- the option table ------------------------------------------------------------------- */

typedef enum config_type {
    CONFIG_POLICY,     /* policy_id, by name (the policy table) */
    CONFIG_ESTIMATOR,  /* mem_source, by estimator name */
    CONFIG_AGG,        /* agg_mode, by name */
    CONFIG_DOUBLE,     /* double within the row's bounds */
    CONFIG_INT,        /* int within the row's bounds (and 0..CONFIG_INT_MAX) */
    CONFIG_MIB,        /* uint64_t MiB: 2048, 2G, 1.5GiB ... */
    CONFIG_BOOL,       /* bool: on/off, yes/no, true/false, 1/0 */
    CONFIG_STRING,     /* char[CONFIG_STR_MAX]; "" sets the row's default */
    CONFIG_GPU_MODELS  /* gpu_model_list: each `key = NAME:MEMORY:IDLE_W:MAX_W` adds one */
} config_type;

#define CONFIG_INT_MAX 1000000

/* Where an option applies: the struct of carma_config that holds it. */
typedef enum config_scope {
    CONFIG_SCHED,  /* the scheduling core: carma daemon and carma simulate */
    CONFIG_DAEMON, /* carma daemon (and the clients' socket) */
    CONFIG_SIM     /* carma simulate */
} config_scope;

/* The default, typed by the row's type (a pointer into the scope's defaults object). */
typedef union config_default {
    const policy_id *policy;
    const mem_source *estimator;
    const agg_mode *agg;
    const double *d;
    const int *i;
    const uint64_t *mib;
    const bool *b;
    const char *s;
    const gpu_model_list *models;
} config_default;

typedef struct config_row {
    const char *name;
    config_type type;
    config_scope scope;
    size_t offset;               /* of the field in carma_config */
    config_default def;
    const sched_bounds *bounds;  /* CONFIG_DOUBLE and CONFIG_INT; NULL for the others */
    /* One line of help; "{}" in it stands for the names a CONFIG_POLICY, CONFIG_ESTIMATOR or
     * CONFIG_AGG row takes, written from their own tables. */
    const char *help;
    /* A check across keys, run by config_validate (after the whole file and every --set, since
     * a later key may make it pass); NULL when none. */
    int (*check)(const carma_config *cfg, carma_err *err);
    /* The other key that check reads, when it reads two: a file's error names its line when
     * the file did not set this row's key. NULL when none. */
    const char *check_reads;
} config_row;

/* The rows in the order `carma config` writes them. */
extern const config_row config_rows[];
extern const size_t config_nrows;

const config_row *config_find(const char *name);
const char *config_scope_name(config_scope scope);
/* The names a CONFIG_POLICY, CONFIG_ESTIMATOR or CONFIG_AGG row takes, from their own tables,
 * joined by `sep` (the last by `last`, when not NULL): "exclusive, or-rr, ...". Returns the
 * length the whole list needs, as snprintf does. */
int config_names(config_type type, const char *sep, const char *last, char *buf, size_t size);

/* ---- loading, checking, writing ------------------------------------------------------------ */

/* Every option at its row's default. */
void config_defaults(carma_config *cfg);

/* Sets one option by name from its text value; errors name the key and what was expected. A
 * value holding a control character (newline, tab ...) is refused: a value is one line. */
int config_set(carma_config *cfg, const char *key, const char *value, carma_err *err);
/* Parses "KEY=VALUE" (as given to --set): key and value trimmed, a value in double quotes read
 * as in a file; a '#' is part of the value. */
int config_set_pair(carma_config *cfg, const char *pair, carma_err *err);

/* Loads a config file over cfg. Lines: `key = value`, blank, or `# comment`; a '#' after a
 * value starts a comment, and a value in double quotes is exactly what lies between them
 * (\" and \\ inside stand for " and \), so it may hold '#' or spaces at its ends. A key
 * appears once (sim_gpu_model once per model). Errors name the file and line. Nothing in cfg
 * changes when the file has an error. */
int config_load_file(carma_config *cfg, const char *path, carma_err *err);

/* Checks the whole configuration: every row's bounds, every row's check, then the core's and
 * the simulator's own checks (sched_config_validate, sim_params_validate). */
int config_validate(const carma_config *cfg, carma_err *err);
/* The same, and *culprit (when not NULL) the row whose bounds or check failed: NULL when the
 * core's or the simulator's own check did, or nothing failed. */
int config_check(const carma_config *cfg, const config_row **culprit, carma_err *err);

/* Writes every option as `# help` and `key = value` (a valid config file that loads back as
 * cfg, every number exact and a value that needs it in quotes; data/carma.conf is this with
 * the defaults). */
void config_write(const carma_config *cfg, FILE *out);
/* The same with a second comment line per option: where it applies, what it takes, its
 * default (`carma config --list`). Also a valid config file. */
void config_write_list(const carma_config *cfg, FILE *out);

#endif
