/* timefmt.h — times for people: a Unix time as local "2026-11-23 20:31:05", a duration as
 * "1h 02m 03s", and the --since argument of `carma history` (a date, a date and time, or an
 * age such as "2d" or "12h") back to a Unix time. */
#ifndef CARMA_UTIL_TIMEFMT_H
#define CARMA_UTIL_TIMEFMT_H

#include <stddef.h>

/* The unknown-value mark of text output (a dash: "—" would need a UTF-8 terminal). */
#define TIME_UNKNOWN "-"

/* Local time "YYYY-MM-DD HH:MM:SS"; TIME_UNKNOWN when t is not a positive finite time. */
void time_local_text(double t, char *buf, size_t cap);
/* "45s", "3m 07s", "1h 02m 03s", "2d 03h 04m"; TIME_UNKNOWN when s is negative or NaN. */
void time_duration_text(double s, char *buf, size_t cap);
/* "2d", "12h", "30m", "90s" (an age before now), "YYYY-MM-DD" (local midnight), or
 * "YYYY-MM-DD HH:MM[:SS]" / "YYYY-MM-DDTHH:MM[:SS]" (local): the Unix time in *out. -1 when
 * it is none of them. */
int time_parse_since(const char *s, double now, double *out);

#endif
