/* config.h — carma's configuration: one `key = value` file (CARMA's defaults shipped in
 * data/carma.conf), every key also settable from the command line with --set KEY=VALUE.
 * A table of options drives parsing, defaults, validation and `carma config --list`. */
#ifndef CARMA_CORE_CONFIG_H
#define CARMA_CORE_CONFIG_H

#include <stdio.h>

#include "sched/sched.h"
#include "sim/sim_params.h"
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
    char mps_pipe_dir[CONFIG_STR_MAX]; /* "" = STATE/mps/pipe */
    char mps_log_dir[CONFIG_STR_MAX];  /* "" = STATE/mps/log */
    int mps_thread_pct;       /* CUDA_MPS_ACTIVE_THREAD_PERCENTAGE per task; 0 = not set */
} daemon_config;

typedef struct carma_config {
    sched_config sched;
    daemon_config daemon;
    sim_params sim; /* the simulator's models (carma simulate) */
} carma_config;

void config_defaults(carma_config *cfg);

/* Sets one option by name from its text value; errors name the key and what was expected. */
int config_set(carma_config *cfg, const char *key, const char *value, carma_err *err);
/* Parses "KEY=VALUE" (as given to --set). */
int config_set_pair(carma_config *cfg, const char *pair, carma_err *err);

/* Loads a config file over cfg. Lines: `key = value`, blank, or `# comment`. Errors name the
 * file and line. Nothing in cfg changes when the file has an error. */
int config_load_file(carma_config *cfg, const char *path, carma_err *err);

/* Checks the whole configuration (ranges, combinations). */
int config_validate(const carma_config *cfg, carma_err *err);

/* Writes every option as `key = value  # description` (a valid config file). */
void config_write(const carma_config *cfg, FILE *out);

#endif
