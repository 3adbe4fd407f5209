/* sim_params.h — the simulator's model parameters (config keys sim_*): CPU start-up time,
 * the interference hinge fitted to Lucid's pairs (tools/derive_sim_models.py), extra GPU models.
 * Also the two small models built on them: per-task speed on a shared GPU, and GPU power. */
#ifndef CARMA_SIM_SIM_PARAMS_H
#define CARMA_SIM_SIM_PARAMS_H

#include <stdbool.h>

#include "sim/gpu_model.h"
#include "util/err.h"

typedef struct sim_params {
    double startup_s;          /* CPU start-up before a task touches its GPUs (30) */
    bool interference;         /* false: tasks always run at solo speed */
    double interf_a;           /* speed = a - k * max(0, U - knee), U = summed solo SMACT */
    double interf_k;
    double interf_knee;
    double interf_floor;       /* speed never drops below this */
    gpu_model_list gpu_models; /* models defined in the config */
} sim_params;

void sim_params_defaults(sim_params *p);
int sim_params_validate(const sim_params *p, carma_err *err);

/* Speed (0..1] of each task on a GPU whose tasks' solo SMACT sum to `smact_sum`; `ntasks` tasks
 * share it. A task alone runs at solo speed (1). */
double sim_speed(const sim_params *p, double smact_sum, int ntasks);

/* Power in W of a GPU of model m at SM activity `smact` (0..1): linear from idle to max. */
double sim_power_w(const gpu_model *m, double smact);

#endif
