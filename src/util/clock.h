/* clock.h — the monotonic clock in seconds: for intervals, deadlines and rates (not dates). */
#ifndef CARMA_UTIL_CLOCK_H
#define CARMA_UTIL_CLOCK_H

#include <time.h>

/* CLOCK_MONOTONIC in seconds (nanosecond resolution); unaffected by changes to the wall clock. */
double clock_mono_s(void);

/* An interval of s seconds (0 <= s, finite) as a timespec, for nanosleep and ppoll. */
struct timespec clock_interval(double s);

#endif
