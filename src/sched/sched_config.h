/* sched_config.h — the numbers behind sched_config, as data: CARMA's defaults and the bounds of
 * every numeric field. sched_config_defaults copies the one, sched_config_validate checks the
 * other, and the config table (config/config_table.c) points its rows at both, so each number is
 * written once, in sched_config.c.
 *
 * sched_bounds is also the bounds type of the other settings' tables (the simulator's, the
 * daemon's), so every range in carma is checked and described by the same code. */
#ifndef CARMA_SCHED_SCHED_CONFIG_H
#define CARMA_SCHED_SCHED_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "sched/sched.h"
#include "util/err.h"

/* How a bounded value is named in messages. */
typedef enum sched_unit {
    SCHED_UNIT_NUMBER = 0, /* "a number" */
    SCHED_UNIT_FRACTION,   /* "a fraction" */
    SCHED_UNIT_SECONDS,    /* "seconds" */
    SCHED_UNIT_INTEGER     /* "an integer" */
} sched_unit;

/* A value x is within when it is finite and min <= x <= max (min < x when min_open). max may be
 * INFINITY (no upper bound). */
typedef struct sched_bounds {
    sched_unit unit;
    double min, max;
    bool min_open;
} sched_bounds;

bool sched_bounds_hold(const sched_bounds *b, double x);
/* What the bounds accept, as messages say it: "a fraction between 0 and 1", "an integer >= 1",
 * "a number > 0", "0.01..3600 seconds", "a fraction in (0, 1]". */
void sched_bounds_describe(const sched_bounds *b, char *buf, size_t size);
/* 0 when x is within b, else -1 with "KEY: expected <description>, got X". */
int sched_bounds_check(const sched_bounds *b, double x, const char *key, carma_err *err);

/* CARMA's defaults (sched_config_defaults copies them). */
extern const sched_config sched_config_default;

/* The bounds of sched_config's numeric fields, field for field (the enums are bounded by their
 * *_COUNT, the MiB figures by their type). */
typedef struct sched_config_bounds {
    sched_bounds thr_smact, thr_smocc, thr_drama;
    sched_bounds window;
    sched_bounds ewma_alpha;
    sched_bounds grace_s;
    sched_bounds retry_cap;
    sched_bounds horus_util_budget;
    sched_bounds lucid_max_jobs, lucid_class_capacity, max_tasks_per_gpu;
    sched_bounds backfill_max_skips, backfill_depth;
    sched_bounds carma_min_gain, carma_unknown_pressure, carma_max_wait_s;
    struct {
        sched_bounds smact_k, smact_knee, drama_k;
    } interference;
} sched_config_bounds;

extern const sched_config_bounds sched_config_limits;

#endif
