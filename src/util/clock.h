/* clock.h — the monotonic clock in seconds: for intervals, deadlines and rates (not dates). */
#ifndef CARMA_UTIL_CLOCK_H
#define CARMA_UTIL_CLOCK_H

/* CLOCK_MONOTONIC in seconds (nanosecond resolution); unaffected by changes to the wall clock. */
double clock_mono_s(void);

#endif
