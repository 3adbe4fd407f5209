/* sched_fixture.h — helpers shared by the scheduling-core tests: GPU views and tasks built by
 * hand, and a core with a given policy. */
#ifndef CARMA_TEST_SCHED_FIXTURE_H
#define CARMA_TEST_SCHED_FIXTURE_H

#include <math.h>
#include <string.h>

#include "sched/sched.h"

#define GB 1024ull

/* A GPU with `free_mib` free of 40 GB and the given aggregated activity. */
static inline gpu_view busy_gpu(uint64_t free_mib, double smact, double smocc, double drama)
{
    gpu_view v = {40 * GB, free_mib, true, smact, smocc, drama, false};
    return v;
}

static inline gpu_view idle_gpu(void)
{
    gpu_view v = {40 * GB, 40 * GB, true, 0.0, 0.0, 0.0, true};
    return v;
}

static inline sched_task make_task(uint64_t id, int ngpus, uint64_t oracle_mib)
{
    sched_task t;
    memset(&t, 0, sizeof t);
    t.id = id;
    t.ngpus = ngpus;
    t.max_retries = -1;
    mem_figures_set(&t.mem, MEM_ORACLE, oracle_mib);
    return t;
}

static inline sched *make_sched(policy_id policy, int ngpus)
{
    sched_config cfg;
    sched_config_defaults(&cfg);
    cfg.policy = policy;
    return sched_create(&cfg, ngpus, NULL);
}

#endif
