/* sched_config.c — CARMA's default thresholds, margins, window and grace, their bounds, and the
 * checks; the one place these numbers are written (sched_config.h). */
#include "sched/sched_config.h"

#include <math.h>
#include <stdio.h>
#include <strings.h>

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

const sched_config sched_config_default = {
    .policy = POLICY_CARMA, /* ours: it beats every other policy in the calibrated simulator */
    .estimator = MEM_ORACLE,
    .thr_smact = 0.80,
    .thr_smocc = 0.45,
    .thr_drama = 0.40,
    .reserve_mib = 512,
    .margin_mib = 2048,
    .or_min_free_mib = 5120,
    .window = 30,
    .agg = AGG_RISK,
    .ewma_alpha = 0.5,
    .grace_s = 30.0,
    .retry_cap = 3,
    .horus_util_budget = 1.0,
    .lucid_max_jobs = 2,
    .lucid_class_capacity = 2,
    .max_tasks_per_gpu = 0,
    .carma_ledger = true,
    .carma_backfill = true,
    .backfill_max_skips = 8,
    .backfill_depth = 64,
    .carma_interference = true,
    .carma_oom_learning = true,
    .carma_measured_first = true,
    .carma_longest_first = true,
    /* Slurm's PriorityMaxAge is 7 days; a shared server's queue turns over in hours. */
    .carma_max_wait_s = 86400,
    .carma_min_gain = 0.0,
    /* The mean pressure of the 53 profiled AEGIS workloads (data/workloads.csv; their median
     * is 0.13): a task never profiled is taken for an average one. */
    .carma_unknown_pressure = 0.37,
    .interference = {SCHED_INTERF_SMACT_K, SCHED_INTERF_SMACT_KNEE, SCHED_INTERF_DRAMA_K},
};

#define FRACTION {SCHED_UNIT_FRACTION, 0.0, 1.0, false}
#define AT_LEAST(unit, lo) {unit, lo, INFINITY, false}

const sched_config_bounds sched_config_limits = {
    .thr_smact = FRACTION,
    .thr_smocc = FRACTION,
    .thr_drama = FRACTION,
    .window = AT_LEAST(SCHED_UNIT_INTEGER, 1),
    .ewma_alpha = {SCHED_UNIT_FRACTION, 0.0, 1.0, true},
    .grace_s = {SCHED_UNIT_SECONDS, 0, 86400, false}, /* a day: a GPU is not held for good */
    .retry_cap = AT_LEAST(SCHED_UNIT_INTEGER, 0),
    .horus_util_budget = {SCHED_UNIT_NUMBER, 0.0, INFINITY, true},
    .lucid_max_jobs = AT_LEAST(SCHED_UNIT_INTEGER, 1),
    .lucid_class_capacity = AT_LEAST(SCHED_UNIT_INTEGER, 0),
    .max_tasks_per_gpu = AT_LEAST(SCHED_UNIT_INTEGER, 0),
    .backfill_max_skips = AT_LEAST(SCHED_UNIT_INTEGER, 0),
    .backfill_depth = AT_LEAST(SCHED_UNIT_INTEGER, 0),
    .carma_min_gain = {SCHED_UNIT_NUMBER, -1.0, 1.0, false},
    .carma_max_wait_s = {SCHED_UNIT_SECONDS, 0, INFINITY, false},
    .carma_unknown_pressure = AT_LEAST(SCHED_UNIT_NUMBER, 0),
    .interference = {AT_LEAST(SCHED_UNIT_NUMBER, 0), FRACTION, AT_LEAST(SCHED_UNIT_NUMBER, 0)},
};

void sched_config_defaults(sched_config *cfg)
{
    *cfg = sched_config_default;
}

bool sched_bounds_hold(const sched_bounds *b, double x)
{
    return isfinite(x) && (b->min_open ? x > b->min : x >= b->min) && x <= b->max;
}

void sched_bounds_describe(const sched_bounds *b, char *buf, size_t size)
{
    static const char *const nouns[] = {[SCHED_UNIT_NUMBER] = "a number",
                                        [SCHED_UNIT_FRACTION] = "a fraction",
                                        [SCHED_UNIT_SECONDS] = "seconds",
                                        [SCHED_UNIT_INTEGER] = "an integer"};
    const char *noun = (unsigned)b->unit < sizeof nouns / sizeof *nouns ? nouns[b->unit]
                                                                         : "a number";
    if (isinf(b->max))
        snprintf(buf, size, "%s %s %.15g", noun, b->min_open ? ">" : ">=", b->min);
    else if (b->min_open)
        snprintf(buf, size, "%s in (%.15g, %.15g]", noun, b->min, b->max);
    else if (b->unit == SCHED_UNIT_FRACTION)
        snprintf(buf, size, "a fraction between %.15g and %.15g", b->min, b->max);
    else
        snprintf(buf, size, "%.15g..%.15g%s", b->min, b->max,
                 b->unit == SCHED_UNIT_SECONDS ? " seconds" : "");
}

int sched_bounds_check(const sched_bounds *b, double x, const char *key, carma_err *err)
{
    if (sched_bounds_hold(b, x))
        return 0;
    char what[96];
    sched_bounds_describe(b, what, sizeof what);
    return carma_err_set(err, "%s: expected %s, got %.15g", key, what, x);
}

int sched_config_validate(const sched_config *cfg, carma_err *err)
{
    const sched_config_bounds *b = &sched_config_limits;
    if ((unsigned)cfg->policy >= POLICY_COUNT)
        return carma_err_set(err, "policy: out of range");
    if ((unsigned)cfg->estimator >= MEM_SOURCE_COUNT)
        return carma_err_set(err, "estimator: out of range");
    if ((unsigned)cfg->agg >= AGG_COUNT)
        return carma_err_set(err, "aggregation: out of range");
    if (sched_bounds_check(&b->thr_smact, cfg->thr_smact, "smact_threshold", err) ||
        sched_bounds_check(&b->thr_smocc, cfg->thr_smocc, "smocc_threshold", err) ||
        sched_bounds_check(&b->thr_drama, cfg->thr_drama, "drama_threshold", err) ||
        sched_bounds_check(&b->window, cfg->window, "window", err) ||
        sched_bounds_check(&b->ewma_alpha, cfg->ewma_alpha, "ewma_alpha", err) ||
        sched_bounds_check(&b->grace_s, cfg->grace_s, "grace_s", err) ||
        sched_bounds_check(&b->retry_cap, cfg->retry_cap, "retry_cap", err) ||
        sched_bounds_check(&b->horus_util_budget, cfg->horus_util_budget, "horus_util_budget",
                           err) ||
        sched_bounds_check(&b->lucid_max_jobs, cfg->lucid_max_jobs, "lucid_max_jobs", err) ||
        sched_bounds_check(&b->lucid_class_capacity, cfg->lucid_class_capacity,
                           "lucid_class_capacity", err) ||
        sched_bounds_check(&b->max_tasks_per_gpu, cfg->max_tasks_per_gpu, "max_tasks_per_gpu",
                           err) ||
        sched_bounds_check(&b->backfill_max_skips, cfg->backfill_max_skips,
                           "backfill_max_skips", err) ||
        sched_bounds_check(&b->backfill_depth, cfg->backfill_depth, "backfill_depth", err) ||
        sched_bounds_check(&b->carma_min_gain, cfg->carma_min_gain, "carma_min_gain", err) ||
        sched_bounds_check(&b->carma_max_wait_s, cfg->carma_max_wait_s, "carma_max_wait_s",
                           err) ||
        sched_bounds_check(&b->carma_unknown_pressure, cfg->carma_unknown_pressure,
                           "carma_unknown_pressure", err) ||
        sched_bounds_check(&b->interference.smact_k, cfg->interference.smact_k,
                           "carma_interference_smact_k", err) ||
        sched_bounds_check(&b->interference.smact_knee, cfg->interference.smact_knee,
                           "carma_interference_smact_knee", err) ||
        sched_bounds_check(&b->interference.drama_k, cfg->interference.drama_k,
                           "carma_interference_drama_k", err))
        return -1;
    return 0;
}
