/* sim_params.h — the simulator's models built on its parameters (sim_config.h: the sim_params
 * struct, config keys sim_*, every coefficient fitted to the AEGIS A100 measurements in
 * data/aegis/): interference between co-runners, speed, power. */
#ifndef CARMA_SIM_SIM_PARAMS_H
#define CARMA_SIM_SIM_PARAMS_H

#include <stdbool.h>

#include "sim/gpu_model.h"
#include "sim/sim_config.h" /* the sim_params struct, its defaults, bounds and checks */

/* How hard a task with solo SMACT `smact` and DRAMA `drama` presses on its co-runners (>= 0). */
double sim_pressure(const sim_params *p, double smact, double drama);

/* Speed (0..1] of a task whose co-runners' pressures sum to `others`. */
double sim_speed(const sim_params *p, double others);

/* Power in W of a GPU of model m: idle_w when it holds no task, else by utilization (0..1). */
double sim_power_w(const sim_params *p, const gpu_model *m, bool busy, double util);

#endif
