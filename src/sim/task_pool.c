/* task_pool.c — the simulator's reusable core tasks (task_pool.h). A 100,000-job trace at a
 * light load keeps a few dozen jobs in the system, while a sched_task is over 600 bytes: one
 * per trace job was most of `carma simulate`'s memory. */
#include "sim/task_pool.h"

#include <stdlib.h>

#include "util/array.h"

#define TASK_POOL_SLAB 256

void task_pool_init(task_pool *p) { *p = (task_pool){0}; }

sched_task *task_pool_get(task_pool *p)
{
    if (p->nfree == 0) {
        /* room on the free list for every task of every slab, the new one included, made
         * first: then nothing fails half-way, and task_pool_put never has to grow it */
        sched_task **f = array_grow(p->free, &p->free_cap, (p->nslabs + 1) * TASK_POOL_SLAB,
                                    sizeof *f, TASK_POOL_SLAB);
        if (!f)
            return NULL;
        p->free = f;
        sched_task **sl = array_grow(p->slabs, &p->slabs_cap, p->nslabs + 1, sizeof *sl, 16);
        if (!sl)
            return NULL;
        p->slabs = sl;
        sched_task *slab = malloc(TASK_POOL_SLAB * sizeof *slab);
        if (!slab)
            return NULL;
        p->slabs[p->nslabs++] = slab;
        for (size_t k = TASK_POOL_SLAB; k > 0; k--) /* handed out in address order */
            p->free[p->nfree++] = &slab[k - 1];
    }
    return p->free[--p->nfree];
}

void task_pool_put(task_pool *p, sched_task *t)
{
    /* never fails: the free list has room for every task of every slab */
    p->free[p->nfree++] = t;
}

void task_pool_free(task_pool *p)
{
    for (size_t k = 0; k < p->nslabs; k++)
        free(p->slabs[k]);
    free(p->slabs);
    free(p->free);
    *p = (task_pool){0};
}
