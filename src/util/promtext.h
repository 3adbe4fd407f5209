/* promtext.h — writing Prometheus's text exposition format (version 0.0.4) into a growing
 * buffer: a family's # HELP and # TYPE lines, its samples with escaped label values, and a
 * histogram's cumulative buckets. Nothing here knows what is measured (daemon/metrics.c). */
#ifndef CARMA_UTIL_PROMTEXT_H
#define CARMA_UTIL_PROMTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct promtext {
    char *buf;
    size_t len, cap;
    bool failed; /* out of memory: everything after is dropped, promtext_take gives NULL */
} promtext;

typedef struct prom_label {
    const char *name;  /* a valid label name: the caller's constant */
    const char *value; /* any text: escaped here */
} prom_label;

/* "# HELP NAME HELP" (backslashes and newlines escaped) and "# TYPE NAME TYPE". */
void promtext_family(promtext *p, const char *name, const char *type, const char *help);
/* "NAME{L="V",...} VALUE". An unknown value (NaN) writes nothing: unknown is never exported
 * as a number. Infinities are +Inf and -Inf. */
void promtext_sample(promtext *p, const char *name, const prom_label *labels, int nlabels,
                     double value);
/* The same for a counter that a double could not hold exactly. */
void promtext_sample_u64(promtext *p, const char *name, const prom_label *labels, int nlabels,
                         uint64_t value);
/* A histogram's samples: NAME_bucket{le=...} for each of the n bounds (ascending) and +Inf,
 * cumulative, from counts[0..n] (counts[i]: observations in (bounds[i-1], bounds[i]];
 * counts[n]: above the last bound), then NAME_sum and NAME_count. */
void promtext_histogram(promtext *p, const char *name, const double *bounds, int n,
                        const uint64_t *counts, double sum);
/* A label value as the format escapes it (\\, \", \n) into out (cap bytes, NUL-terminated,
 * cut short when it does not fit); bytes outside printable ASCII become '?', so that the
 * result is valid UTF-8 whatever a GPU driver reports. Returns the length written. */
size_t promtext_escape_label(const char *in, char *out, size_t cap);
/* The text (the caller frees it) and its length; NULL when out of memory. The promtext is
 * empty again after. */
char *promtext_take(promtext *p, size_t *len);
void promtext_free(promtext *p);

#endif
