/* sim_config.h — the simulator's settings as the config sees them (config keys sim_*): the
 * sim_params struct, its defaults and bounds as data, and its checks. Types and data only, so
 * that config/config.h (and through it the daemon) can hold a sim_params without compiling
 * against the simulator's models (sim_params.h) or engine. Every coefficient is fitted to the
 * AEGIS A100 measurements in data/aegis/ (tools/fit_sim_models.py prints the fits; the sources
 * are next to the defaults in sim_params.c). */
#ifndef CARMA_SIM_SIM_CONFIG_H
#define CARMA_SIM_SIM_CONFIG_H

#include <stdbool.h>

#include "sched/sched_config.h" /* sched_bounds */
#include "sim/gpu_model.h"      /* gpu_model_list */
#include "util/err.h"

#define SIM_SERVER_MAX 256 /* = CONFIG_STR_MAX */

/* power_busy_frac + power_util_frac may not exceed this (a GPU at full load draws at most
 * twice its max_w). */
#define SIM_POWER_FRAC_SUM_MAX 2.0

typedef struct sim_params {
    char server[SIM_SERVER_MAX]; /* default simulated server, COUNTxMODEL ("4xA100-40GB") */
    double startup_s;        /* CPU start-up of a task whose catalog row has none measured */
    bool interference;       /* false: tasks always run at solo speed */
    /* A co-runner j presses on every other task of its GPU with
     *     p_j = smact_k * max(0, SMACT_j - smact_knee) + drama_k * DRAMA_j,
     * and a task runs at 1 / (1 + the sum of its co-runners' p). Fitted on the 219 measured
     * pairs of data/aegis/pairwise_a100.csv. */
    double interf_smact_k;
    double interf_smact_knee;
    double interf_drama_k;
    double mem_ramp_s;       /* a task holds its early peak from allocation, its full peak
                              * from this many seconds later (the profiles' early window) */
    bool mps_caps;           /* a collocated task is capped at its figure + margin, as under the
                              * daemon's mps: one that outgrows its cap crashes alone */
    bool history;            /* the policies know a task's run time and solo profile only from
                              * an earlier solo run of its task file (sim_history.h), and no
                              * Lucid class: what the daemon knows; false: the catalog's */
    /* Power of a GPU holding tasks: max_w * (busy_frac + util_frac * U), U its utilization;
     * an idle GPU draws its model's idle_w. Fitted on the DCGM energy of the real runs. */
    double power_busy_frac;
    double power_util_frac;
    gpu_model_list gpu_models; /* models defined in the config */
} sim_params;

/* The defaults (sim_params_defaults copies them). */
extern const sim_params sim_params_default;

/* The bounds of sim_params' numeric fields, field for field. */
typedef struct sim_params_bounds {
    sched_bounds startup_s;
    sched_bounds interf_smact_k, interf_smact_knee, interf_drama_k;
    sched_bounds mem_ramp_s;
    sched_bounds power_busy_frac, power_util_frac;
} sim_params_bounds;

extern const sim_params_bounds sim_params_limits;

void sim_params_defaults(sim_params *p);
/* The bounds, then the checks that span keys: sim_params_check_server, sim_params_check_power. */
int sim_params_validate(const sim_params *p, carma_err *err);
/* server names a known model (built in, or one of gpu_models) and a count. */
int sim_params_check_server(const sim_params *p, carma_err *err);
/* power_busy_frac + power_util_frac <= SIM_POWER_FRAC_SUM_MAX. */
int sim_params_check_power(const sim_params *p, carma_err *err);

#endif
