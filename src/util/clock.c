/* clock.c — see clock.h. */
#include "util/clock.h"

#include <time.h>

double clock_mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct timespec clock_interval(double s)
{
    time_t whole = (time_t)s;
    long ns = (long)((s - (double)whole) * 1e9);
    return (struct timespec){whole, ns < 1000000000L ? ns : 999999999L};
}
