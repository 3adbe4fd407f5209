/* queue.h — intrusive FIFO of sched_task (links live in the task), O(1) at both ends and for
 * removal. Internal to the core. */
#ifndef CARMA_SCHED_QUEUE_H
#define CARMA_SCHED_QUEUE_H

#include "sched/sched.h"

typedef struct task_queue {
    sched_task *head, *tail;
    size_t len;
} task_queue;

void queue_push_back(task_queue *q, sched_task *t);
void queue_remove(task_queue *q, sched_task *t);

#endif
