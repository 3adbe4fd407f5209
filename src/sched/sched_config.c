/* sched_config.c — CARMA's default thresholds, margins, window and grace, and their checks. */
#include <math.h>
#include <strings.h>

#include "sched/sched.h"

static const char *const agg_names[] = {[AGG_MEAN] = "mean", [AGG_EWMA] = "ewma",
                                        [AGG_RISK] = "risk", [AGG_RISK_EQUAL] = "risk-equal"};

int agg_mode_from_name(const char *name, agg_mode *out)
{
    for (int i = 0; i < AGG_COUNT; i++) {
        if (name && !strcasecmp(name, agg_names[i])) {
            *out = (agg_mode)i;
            return 0;
        }
    }
    return -1;
}

const char *agg_mode_name(agg_mode m)
{
    return (unsigned)m < AGG_COUNT ? agg_names[m] : "?";
}

void sched_config_defaults(sched_config *cfg)
{
    cfg->policy = POLICY_EXCLUSIVE;
    cfg->estimator = MEM_ORACLE;
    cfg->thr_smact = 0.80;
    cfg->thr_smocc = 0.45;
    cfg->thr_drama = 0.40;
    cfg->reserve_mib = 512;
    cfg->margin_mib = 2048;
    cfg->or_min_free_mib = 5120;
    cfg->window = 30;
    cfg->agg = AGG_RISK;
    cfg->ewma_alpha = 0.5;
    cfg->grace_s = 30.0;
    cfg->retry_cap = 3;
    cfg->horus_util_budget = 1.0;
    cfg->lucid_max_jobs = 2;
    cfg->lucid_class_capacity = 2;
}

static bool is_fraction(double x)
{
    return isfinite(x) && x >= 0.0 && x <= 1.0;
}

int sched_config_validate(const sched_config *cfg, carma_err *err)
{
    if ((unsigned)cfg->policy >= POLICY_COUNT)
        return carma_err_set(err, "policy: out of range");
    if ((unsigned)cfg->estimator >= MEM_SOURCE_COUNT)
        return carma_err_set(err, "estimator: out of range");
    if (!is_fraction(cfg->thr_smact) || !is_fraction(cfg->thr_smocc) ||
        !is_fraction(cfg->thr_drama))
        return carma_err_set(err, "utilization thresholds must be fractions between 0 and 1");
    if (cfg->window < 1)
        return carma_err_set(err, "window: must be at least 1 sample");
    if ((unsigned)cfg->agg >= AGG_COUNT)
        return carma_err_set(err, "aggregation: out of range");
    if (!(cfg->ewma_alpha > 0.0 && cfg->ewma_alpha <= 1.0))
        return carma_err_set(err, "ewma_alpha: must be in (0, 1]");
    if (!isfinite(cfg->grace_s) || cfg->grace_s < 0)
        return carma_err_set(err, "grace_s: must be >= 0");
    if (cfg->retry_cap < 0)
        return carma_err_set(err, "retry_cap: must be >= 0");
    if (!isfinite(cfg->horus_util_budget) || cfg->horus_util_budget <= 0)
        return carma_err_set(err, "horus_util_budget: must be a finite fraction > 0");
    if (cfg->lucid_max_jobs < 1)
        return carma_err_set(err, "lucid_max_jobs: must be at least 1");
    if (cfg->lucid_class_capacity < 0)
        return carma_err_set(err, "lucid_class_capacity: must be >= 0");
    return 0;
}
