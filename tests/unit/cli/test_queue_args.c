/* test_queue_args.c — the values of the queue-control options (cli/queue_args.h): Slurm's
 * time formats, task id lists and array ranges, and what each refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cli/queue_args.h"

static int64_t secs(const char *s)
{
    int64_t v = -1;
    carma_err err;
    return parse_duration_s(s, 366LL * 86400, &v, &err) ? -1 : v;
}

static void slurm_time_formats(void **state)
{
    (void)state;
    assert_int_equal(secs("30"), 1800);          /* MM */
    assert_int_equal(secs("1:30"), 90);          /* MM:SS */
    assert_int_equal(secs("2:00:05"), 7205);     /* HH:MM:SS */
    assert_int_equal(secs("1-2"), 93600);        /* D-HH */
    assert_int_equal(secs("1-0:30"), 88200);     /* D-HH:MM */
    assert_int_equal(secs("0-0:0:7"), 7);        /* D-HH:MM:SS */
    assert_int_equal(secs("90"), 5400);          /* the leading field may run past 59 */
    assert_int_equal(secs("36:00:00"), 129600);
    const char *bad[] = {"", "0", "0:00", "x", "1:2:3:4", "1-", "-5", "1-2:3:4:5", "5m",
                         "367-0", "1234567890", "10:99", "1:60:00", "1:00:60", "1-24",
                         "1-2:60"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(secs(bad[i]), -1);
}

static void id_lists(void **state)
{
    (void)state;
    uint64_t ids[3];
    size_t n = 0;
    carma_err err;
    assert_int_equal(parse_id_list("4,17", ids, 3, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(ids[1], 17);
    assert_int_equal(parse_id_list("5", ids, 3, &n, &err), 0); /* appends */
    assert_int_equal(n, 3);
    assert_int_equal(parse_id_list("6", ids, 3, &n, &err), -1); /* full */
    n = 0;
    assert_int_equal(parse_id_list("0", ids, 3, &n, &err), -1);
    assert_int_equal(parse_id_list("x", ids, 3, &n, &err), -1);
    assert_int_equal(parse_id_list(",", ids, 3, &n, &err), -1);
    /* past int64: out of range, not "no task id" */
    assert_int_equal(parse_id_list("1,99999999999999999999", ids, 3, &n, &err), -1);
    assert_string_equal(err.msg, "'1,99999999999999999999': task id '99999999999999999999' is "
                                 "out of range (at most 9223372036854775807)");
}

static void task_ids(void **state)
{
    (void)state;
    int64_t id;
    carma_err err;
    assert_int_equal(parse_task_id("9223372036854775807", 1, &id, &err), 0);
    assert_true(id == INT64_MAX);
    assert_int_equal(parse_task_id("0", 0, &id, &err), 0); /* --after 0: from the start */
    assert_int_equal(parse_task_id("0", 1, &id, &err), -1);
    assert_string_equal(err.msg, "expected a task id (a positive integer), got '0'");
    assert_int_equal(parse_task_id("9223372036854775808", 1, &id, &err), -1);
    assert_string_equal(err.msg, "task id '9223372036854775808' is out of range "
                                 "(at most 9223372036854775807)");
    /* a huge negative number is no task id either way: not "out of range" */
    assert_int_equal(parse_task_id("-9223372036854775809", 1, &id, &err), -1);
    assert_string_equal(err.msg, "expected a task id (a positive integer), got "
                                 "'-9223372036854775809'");
}

static void array_ranges(void **state)
{
    (void)state;
    int idx[8];
    size_t n;
    carma_err err;
    assert_int_equal(parse_array_spec("0-3,10", idx, 8, &n, &err), 0);
    assert_int_equal(n, 5);
    assert_int_equal(idx[4], 10);
    assert_int_equal(parse_array_spec("1,2,5", idx, 8, &n, &err), 0);
    assert_int_equal(n, 3);
    /* Slurm's step: 1-7:2 is 1, 3, 5, 7 */
    assert_int_equal(parse_array_spec("1-7:2,10", idx, 8, &n, &err), 0);
    assert_int_equal(n, 5);
    assert_int_equal(idx[0], 1);
    assert_int_equal(idx[3], 7);
    assert_int_equal(idx[4], 10);
    const char *bad[] = {"", "3-1", "1-", "a", "1,,2", "1,1", "0-8", "1000001", "1;2",
                         "1-7:0", "1-7:", "3:2", "1-7:2:2", "1-4%2", "1-3:1,3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(parse_array_spec(bad[i], idx, 8, &n, &err), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slurm_time_formats),
        cmocka_unit_test(id_lists),
        cmocka_unit_test(task_ids),
        cmocka_unit_test(array_ranges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
