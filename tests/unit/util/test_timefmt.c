/* test_timefmt.c — local times, durations and --since arguments (util/timefmt.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <cmocka.h>
#include <math.h>

#include "util/timefmt.h"

static void durations(void **state)
{
    (void)state;
    char b[32];
    time_duration_text(0, b, sizeof b);
    assert_string_equal(b, "0s");
    time_duration_text(187, b, sizeof b);
    assert_string_equal(b, "3m 07s");
    time_duration_text(3723, b, sizeof b);
    assert_string_equal(b, "1h 02m 03s");
    time_duration_text(2 * 86400 + 3 * 3600 + 4 * 60 + 5, b, sizeof b);
    assert_string_equal(b, "2d 03h 04m");
    time_duration_text(-1, b, sizeof b);
    assert_string_equal(b, TIME_UNKNOWN);
    time_duration_text(NAN, b, sizeof b);
    assert_string_equal(b, TIME_UNKNOWN);
    time_duration_text(1e300, b, sizeof b);
    assert_string_equal(b, TIME_UNKNOWN);
}

static void local_times(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    tzset();
    char b[32];
    time_local_text(1795465865, b, sizeof b); /* 2026-11-23 20:31:05 UTC */
    assert_string_equal(b, "2026-11-23 20:31:05");
    time_local_text(-1, b, sizeof b);
    assert_string_equal(b, TIME_UNKNOWN);
    time_local_text(0, b, sizeof b);
    assert_string_equal(b, TIME_UNKNOWN);
    time_local_text(1e300, b, sizeof b);
    assert_string_equal(b, TIME_UNKNOWN);
    time_local_text(INFINITY, b, sizeof b);
    assert_string_equal(b, TIME_UNKNOWN);
}

static void since(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    tzset();
    double t;
    assert_int_equal(time_parse_since("2d", 1000000, &t), 0);
    assert_float_equal(t, 1000000 - 2 * 86400, 1e-9);
    assert_int_equal(time_parse_since("12h", 100000, &t), 0);
    assert_float_equal(t, 100000 - 12 * 3600, 1e-9);
    assert_int_equal(time_parse_since("90s", 100, &t), 0);
    assert_float_equal(t, 10, 1e-9);
    assert_int_equal(time_parse_since("2026-11-23", 0, &t), 0);
    assert_float_equal(t, 1795392000, 1e-9);
    assert_int_equal(time_parse_since("2026-11-23 20:31:05", 0, &t), 0);
    assert_float_equal(t, 1795465865, 1e-9);
    assert_int_equal(time_parse_since("2026-11-23T20:31", 0, &t), 0);
    assert_float_equal(t, 1795465860, 1e-9);
    assert_int_equal(time_parse_since("2024-02-29", 0, &t), 0); /* a leap day is a day */
    const char *bad[] = {"", "2x", "d", "-2d", "2026-13-01", "2026-11-23 25:00", "yesterday",
                         "2026-11-23 20:31:05z", "2d3", "2026-02-30", "2026-11-31", "2025-02-29"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(time_parse_since(bad[i], 0, &t), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(durations),
        cmocka_unit_test(local_times),
        cmocka_unit_test(since),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
