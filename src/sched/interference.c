/* interference.c — the interference model: what a co-runner costs the tasks it shares a GPU
 * with. The carma policy predicts with it (sched_config.interference), the simulator runs with
 * it (its sim_interference_* keys); the fitted numbers are written once, in sched.h. */
#include <math.h>

#include "sched/sched.h"

const sched_interference sched_interference_fitted = {
    .smact_k = SCHED_INTERF_SMACT_K,
    .smact_knee = SCHED_INTERF_SMACT_KNEE,
    .drama_k = SCHED_INTERF_DRAMA_K,
};

double sched_pressure(const sched_interference *m, double smact, double drama)
{
    if (isnan(smact) || isnan(drama))
        return NAN;
    return m->smact_k * fmax(0.0, smact - m->smact_knee) + m->drama_k * drama;
}

double sched_speed(double others)
{
    return others > 0 ? 1.0 / (1.0 + others) : 1.0;
}
