/* task_pool.h — the simulator's store of core tasks (sched_task): one is held only from a job's
 * arrival to its end, and ended ones are reused, so the memory follows the jobs in the system
 * (queued or running), not every job of the trace. */
#ifndef CARMA_SIM_TASK_POOL_H
#define CARMA_SIM_TASK_POOL_H

#include <stddef.h>

#include "sched/sched.h"

typedef struct task_pool {
    sched_task **slabs;  /* blocks of TASK_POOL_SLAB tasks */
    size_t nslabs, slabs_cap;
    sched_task **free;   /* tasks ready for reuse */
    size_t nfree, free_cap;
} task_pool;

void task_pool_init(task_pool *p);
/* A task for a job that arrives, its contents undefined (sched_task_init it); NULL when out of
 * memory. */
sched_task *task_pool_get(task_pool *p);
/* Gives back a task the core no longer holds (its job ended). */
void task_pool_put(task_pool *p, sched_task *t);
void task_pool_free(task_pool *p);

#endif
