/* queue.c — see queue.h. */
#include "sched/queue.h"

void queue_push_back(task_queue *q, sched_task *t)
{
    t->qnext = NULL;
    t->qprev = q->tail;
    if (q->tail)
        q->tail->qnext = t;
    else
        q->head = t;
    q->tail = t;
    q->len++;
}

void queue_remove(task_queue *q, sched_task *t)
{
    if (t->qprev)
        t->qprev->qnext = t->qnext;
    else
        q->head = t->qnext;
    if (t->qnext)
        t->qnext->qprev = t->qprev;
    else
        q->tail = t->qprev;
    t->qnext = t->qprev = NULL;
    q->len--;
}
