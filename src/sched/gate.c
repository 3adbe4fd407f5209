/* gate.c — the per-GPU preconditions: the utilization gate and the memory a policy may use.
 *
 * The gate uses three-valued logic. CARMA rejects a GPU when
 *     smact >= T1 and (smocc >= T2 or drama >= T3);
 * in the reference a NaN compared false and so passed silently. Here each comparison is
 * true, false or unknown (NaN), combined with Kleene's and/or, and a GPU passes only when the
 * reject condition is known to be false. So a missing SMOCC still passes when SMACT is known
 * to be low (it cannot change the answer), but never when it could decide it. */
#include <math.h>

#include "sched/sched.h"

typedef enum tri { TRI_FALSE = 0, TRI_TRUE, TRI_UNKNOWN } tri;

static tri at_least(double value, double threshold)
{
    if (isnan(value))
        return TRI_UNKNOWN;
    return value >= threshold ? TRI_TRUE : TRI_FALSE;
}

static tri tri_or(tri a, tri b)
{
    if (a == TRI_TRUE || b == TRI_TRUE)
        return TRI_TRUE;
    if (a == TRI_FALSE && b == TRI_FALSE)
        return TRI_FALSE;
    return TRI_UNKNOWN;
}

static tri tri_and(tri a, tri b)
{
    if (a == TRI_FALSE || b == TRI_FALSE)
        return TRI_FALSE;
    if (a == TRI_TRUE && b == TRI_TRUE)
        return TRI_TRUE;
    return TRI_UNKNOWN;
}

bool sched_gate_passes(const sched_config *cfg, const gpu_view *v)
{
    tri reject = tri_and(at_least(v->smact, cfg->thr_smact),
                         tri_or(at_least(v->smocc, cfg->thr_smocc),
                                at_least(v->drama, cfg->thr_drama)));
    return reject == TRI_FALSE;
}

bool sched_available_mib(const sched_config *cfg, const gpu_view *v, uint64_t *mib)
{
    if (!v->free_known)
        return false;
    *mib = v->free_mib > cfg->reserve_mib ? v->free_mib - cfg->reserve_mib : 0;
    return true;
}
