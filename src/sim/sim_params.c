/* sim_params.c — defaults of the simulator's models (with their sources) and the pressure,
 * speed and power functions. */
#include "sim/sim_params.h"

#include <math.h>
#include <string.h>

void sim_params_defaults(sim_params *p)
{
    memset(p, 0, sizeof *p);
    strcpy(p->server, "4xA100-40GB");
    p->startup_s = 30.0;
    p->interference = true;
    /* tools/fit_sim_models.py on data/aegis/pairwise_a100.csv: R^2 of the slowdown 0.869 on
     * the fitted four fifths, 0.710 on the held-back fifth. */
    p->interf_smact_k = 16.7848;
    p->interf_smact_knee = 0.7673;
    p->interf_drama_k = 0.6107;
    /* The profiles' early peak covers the first 200 s of GPU activity. */
    p->mem_ramp_s = 200.0;
    /* tools/fit_sim_models.py on the 12 philly and saturn runs of
     * data/aegis/dcgmi_energy_summary.csv: 48.0 W + 226.9 W x util of a 400 W A100, R^2 0.978. */
    p->power_busy_frac = 0.1201;
    p->power_util_frac = 0.5672;
}

int sim_params_validate(const sim_params *p, carma_err *err)
{
    int count;
    const gpu_model *m;
    if (gpu_spec_parse(p->server, &p->gpu_models, &count, &m, err))
        return carma_err_prefix(err, "sim_server");
    if (!isfinite(p->startup_s) || p->startup_s < 0)
        return carma_err_set(err, "sim_startup_s: must be >= 0");
    if (!isfinite(p->interf_smact_k) || p->interf_smact_k < 0 || !isfinite(p->interf_drama_k) ||
        p->interf_drama_k < 0)
        return carma_err_set(err, "sim_interference_smact_k, sim_interference_drama_k: must be >= 0");
    if (!(p->interf_smact_knee >= 0 && p->interf_smact_knee <= 1))
        return carma_err_set(err, "sim_interference_smact_knee: must be in 0..1");
    if (!isfinite(p->mem_ramp_s) || p->mem_ramp_s < 0)
        return carma_err_set(err, "sim_mem_ramp_s: must be >= 0");
    if (!(p->power_busy_frac >= 0 && p->power_util_frac >= 0 &&
          p->power_busy_frac + p->power_util_frac <= 2))
        return carma_err_set(err, "sim_power_busy_frac, sim_power_util_frac: must be >= 0 and "
                             "sum to at most 2");
    return 0;
}

double sim_pressure(const sim_params *p, double smact, double drama)
{
    if (!p->interference)
        return 0.0;
    return p->interf_smact_k * fmax(0.0, smact - p->interf_smact_knee) + p->interf_drama_k * drama;
}

double sim_speed(const sim_params *p, double others)
{
    if (!p->interference || !(others > 0))
        return 1.0;
    return 1.0 / (1.0 + others);
}

double sim_power_w(const sim_params *p, const gpu_model *m, bool busy, double util)
{
    if (!busy)
        return m->idle_w;
    double u = fmin(1.0, fmax(0.0, util));
    return m->max_w * (p->power_busy_frac + p->power_util_frac * u);
}
