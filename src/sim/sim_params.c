/* sim_params.c — defaults and bounds of the simulator's models (with their sources), their
 * checks, and the pressure, speed and power functions. */
#include "sim/sim_params.h"

#include <math.h>

/* The defaults and bounds of the sim_* config keys (config/config_table.c points its rows at
 * them). */
const sim_params sim_params_default = {
    .server = "4xA100-40GB",
    .startup_s = 30.0,
    .interference = true,
    /* The fitted model (sched.h gives its source). */
    .interf_smact_k = SCHED_INTERF_SMACT_K,
    .interf_smact_knee = SCHED_INTERF_SMACT_KNEE,
    .interf_drama_k = SCHED_INTERF_DRAMA_K,
    /* The profiles' early peak covers the first 200 s of GPU activity. */
    .mem_ramp_s = 200.0,
    .mps_caps = false,
    .history = false,
    /* tools/fit_sim_models.py on the 12 philly and saturn runs of
     * data/aegis/dcgmi_energy_summary.csv: 48.0 W + 226.9 W x util of a 400 W A100, R^2 0.978. */
    .power_busy_frac = 0.1201,
    .power_util_frac = 0.5672,
    .gpu_models = {.n = 0},
};

#define AT_LEAST_0(unit) {unit, 0.0, INFINITY, false}

const sim_params_bounds sim_params_limits = {
    .startup_s = AT_LEAST_0(SCHED_UNIT_SECONDS),
    .interf_smact_k = AT_LEAST_0(SCHED_UNIT_NUMBER),
    .interf_smact_knee = {SCHED_UNIT_FRACTION, 0.0, 1.0, false},
    .interf_drama_k = AT_LEAST_0(SCHED_UNIT_NUMBER),
    .mem_ramp_s = AT_LEAST_0(SCHED_UNIT_SECONDS),
    .power_busy_frac = AT_LEAST_0(SCHED_UNIT_NUMBER),
    .power_util_frac = AT_LEAST_0(SCHED_UNIT_NUMBER),
};

void sim_params_defaults(sim_params *p)
{
    *p = sim_params_default;
}

int sim_params_check_server(const sim_params *p, carma_err *err)
{
    int count;
    const gpu_model *m;
    return gpu_spec_parse_as("sim_server", p->server, &p->gpu_models, &count, &m, err);
}

int sim_params_check_power(const sim_params *p, carma_err *err)
{
    if (!(p->power_busy_frac + p->power_util_frac <= SIM_POWER_FRAC_SUM_MAX))
        return carma_err_set(err, "sim_power_busy_frac, sim_power_util_frac: must sum to at most "
                             "%g, got %g + %g", SIM_POWER_FRAC_SUM_MAX, p->power_busy_frac,
                             p->power_util_frac);
    return 0;
}

int sim_params_validate(const sim_params *p, carma_err *err)
{
    const sim_params_bounds *b = &sim_params_limits;
    if (sim_params_check_server(p, err))
        return -1;
    if (sched_bounds_check(&b->startup_s, p->startup_s, "sim_startup_s", err) ||
        sched_bounds_check(&b->interf_smact_k, p->interf_smact_k, "sim_interference_smact_k",
                           err) ||
        sched_bounds_check(&b->interf_smact_knee, p->interf_smact_knee,
                           "sim_interference_smact_knee", err) ||
        sched_bounds_check(&b->interf_drama_k, p->interf_drama_k, "sim_interference_drama_k",
                           err) ||
        sched_bounds_check(&b->mem_ramp_s, p->mem_ramp_s, "sim_mem_ramp_s", err) ||
        sched_bounds_check(&b->power_busy_frac, p->power_busy_frac, "sim_power_busy_frac", err) ||
        sched_bounds_check(&b->power_util_frac, p->power_util_frac, "sim_power_util_frac", err))
        return -1;
    return sim_params_check_power(p, err);
}

double sim_pressure(const sim_params *p, double smact, double drama)
{
    if (!p->interference)
        return 0.0;
    sched_interference m = {p->interf_smact_k, p->interf_smact_knee, p->interf_drama_k};
    return sched_pressure(&m, smact, drama);
}

double sim_speed(const sim_params *p, double others)
{
    return p->interference ? sched_speed(others) : 1.0;
}

double sim_power_w(const sim_params *p, const gpu_model *m, bool busy, double util)
{
    if (!busy)
        return m->idle_w;
    double u = fmin(1.0, fmax(0.0, util));
    return m->max_w * (p->power_busy_frac + p->power_util_frac * u);
}
