/* sim_params.h — the simulator's model parameters (config keys sim_*), every coefficient fitted
 * to the AEGIS A100 measurements in data/aegis/ (tools/fit_sim_models.py prints the fits):
 * CPU start-up, interference between co-runners, the memory ramp, power. Also the small model
 * functions built on them. */
#ifndef CARMA_SIM_SIM_PARAMS_H
#define CARMA_SIM_SIM_PARAMS_H

#include <stdbool.h>

#include "sim/gpu_model.h"
#include "util/err.h"

#define SIM_SERVER_MAX 256 /* = CONFIG_STR_MAX */

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
    /* Power of a GPU holding tasks: max_w * (busy_frac + util_frac * U), U its utilization;
     * an idle GPU draws its model's idle_w. Fitted on the DCGM energy of the real runs. */
    double power_busy_frac;
    double power_util_frac;
    gpu_model_list gpu_models; /* models defined in the config */
} sim_params;

void sim_params_defaults(sim_params *p);
int sim_params_validate(const sim_params *p, carma_err *err);

/* How hard a task with solo SMACT `smact` and DRAMA `drama` presses on its co-runners (>= 0). */
double sim_pressure(const sim_params *p, double smact, double drama);

/* Speed (0..1] of a task whose co-runners' pressures sum to `others`. */
double sim_speed(const sim_params *p, double others);

/* Power in W of a GPU of model m: idle_w when it holds no task, else by utilization (0..1). */
double sim_power_w(const sim_params *p, const gpu_model *m, bool busy, double util);

#endif
