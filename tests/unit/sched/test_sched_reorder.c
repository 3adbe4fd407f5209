/* test_sched_reorder.c — sched_move_before: a task moved within the main queue is placed in
 * its new order; tasks of the recovery queue, running ones and unknown targets are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched_fixture.h"

/* The main queue's ids, head first, as a number (1, 2, 3 -> 123). */
static uint64_t order(const sched *s)
{
    uint64_t n = 0;
    for (const sched_task *t = sched_main_head(s); t; t = t->qnext)
        n = n * 10 + t->id;
    return n;
}

static void moves_within_the_main_queue(void **state)
{
    (void)state;
    sched *s = make_sched(POLICY_EXCLUSIVE, 1);
    sched_task a = make_task(1, 1, 1000), b = make_task(2, 1, 1000), c = make_task(3, 1, 1000);
    sched_submit(s, &a, NULL);
    sched_submit(s, &b, NULL);
    sched_submit(s, &c, NULL);
    assert_true(sched_move_before(s, &c, &a)); /* to the head */
    assert_int_equal(order(s), 312);
    assert_true(sched_move_before(s, &c, NULL)); /* to the tail */
    assert_int_equal(order(s), 123);
    assert_true(sched_move_before(s, &c, &b)); /* into the middle */
    assert_int_equal(order(s), 132);
    assert_int_equal(sched_main_len(s), 3);
    assert_false(sched_move_before(s, &c, &c));
    /* the head is placed first */
    gpu_view v = idle_gpu();
    sched_decision d;
    assert_true(sched_move_before(s, &b, &a));
    assert_true(sched_next(s, 0, &v, &d));
    assert_ptr_equal(d.task, &b);
    /* b runs now: it cannot be moved, nor anything before it */
    assert_false(sched_move_before(s, &b, NULL));
    assert_false(sched_move_before(s, &a, &b));
    assert_int_equal(order(s), 13);
    assert_true(sched_check(s));
    sched_destroy(s);
}

static void refuses_tasks_outside_the_main_queue(void **state)
{
    (void)state;
    sched *s = make_sched(POLICY_EXCLUSIVE, 1);
    sched_task a = make_task(1, 1, 1000), r = make_task(2, 1, 1000), n = make_task(3, 1, 1000);
    sched_submit(s, &a, NULL);
    sched_submit_recovery(s, &r, NULL);
    assert_false(sched_move_before(s, &r, &a));
    assert_false(sched_move_before(s, &a, &r));
    assert_false(sched_move_before(s, &n, NULL)); /* never submitted */
    assert_int_equal(sched_main_len(s), 1);
    assert_int_equal(sched_recovery_len(s), 1);
    sched_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(moves_within_the_main_queue),
        cmocka_unit_test(refuses_tasks_outside_the_main_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
