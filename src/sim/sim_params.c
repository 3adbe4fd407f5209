/* sim_params.c — defaults of the simulator's models and the speed and power functions. */
#include "sim/sim_params.h"

#include <math.h>
#include <string.h>

void sim_params_defaults(sim_params *p)
{
    memset(p, 0, sizeof *p);
    p->startup_s = 30.0;
    p->interference = true;
    /* tools/derive_sim_models.py on data/interference/lucid_pairs.csv (2,776 job-observations,
     * R^2 = 0.405); the floor is the slowest job Lucid observed. */
    p->interf_a = 0.9953;
    p->interf_k = 0.2777;
    p->interf_knee = 0.65;
    p->interf_floor = 0.44;
}

int sim_params_validate(const sim_params *p, carma_err *err)
{
    if (!isfinite(p->startup_s) || p->startup_s < 0)
        return carma_err_set(err, "sim_startup_s: must be >= 0");
    if (!(p->interf_a > 0 && p->interf_a <= 1.5))
        return carma_err_set(err, "sim_interference_a: must be in (0, 1.5]");
    if (!isfinite(p->interf_k) || p->interf_k < 0)
        return carma_err_set(err, "sim_interference_k: must be >= 0");
    if (!isfinite(p->interf_knee) || p->interf_knee < 0)
        return carma_err_set(err, "sim_interference_knee: must be >= 0");
    if (!(p->interf_floor > 0 && p->interf_floor <= 1))
        return carma_err_set(err, "sim_interference_floor: must be in (0, 1]");
    return 0;
}

double sim_speed(const sim_params *p, double smact_sum, int ntasks)
{
    if (ntasks <= 1 || !p->interference)
        return 1.0;
    double s = p->interf_a - p->interf_k * fmax(0.0, smact_sum - p->interf_knee);
    return fmin(1.0, fmax(p->interf_floor, s));
}

double sim_power_w(const gpu_model *m, double smact)
{
    double u = fmin(1.0, fmax(0.0, smact));
    return m->idle_w + (m->max_w - m->idle_w) * u;
}
