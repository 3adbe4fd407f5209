/* reorder.c — moving a task within the main queue. The core's queue is FIFO; a driver that
 * orders its queue otherwise (the daemon's priorities) submits a task, then moves it to its
 * place. Pure, as the rest of the core. */
#include <assert.h>

#include "sched/sched_int.h"

bool sched_move_before(sched *s, sched_task *t, sched_task *before)
{
    if (t->where != SCHED_IN_MAIN || t == before || (before && before->where != SCHED_IN_MAIN))
        return false;
    task_queue *q = &s->main_q;
    queue_remove(q, t);
    if (!before) {
        queue_push_back(q, t);
    } else {
        t->qnext = before;
        t->qprev = before->qprev;
        if (before->qprev)
            before->qprev->qnext = t;
        else
            q->head = t;
        before->qprev = t;
        q->len++;
    }
    assert(sched_check(s));
    return true;
}
