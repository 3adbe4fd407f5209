/* queue_args.c — Slurm-style values of the queue-control options (queue_args.h). */
#include "cli/queue_args.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"

/* A run of decimal digits at *p, at most 9 of them (no overflow); -1 when none. */
static int64_t digits(const char **p)
{
    const char *s = *p;
    int64_t v = 0;
    size_t n = 0;
    while (s[n] >= '0' && s[n] <= '9' && n < 9)
        v = v * 10 + (s[n++] - '0');
    *p = s + n;
    return n ? v : -1;
}

int parse_duration_s(const char *s, int64_t max_s, int64_t *out, carma_err *err)
{
    const char *p = s;
    int64_t f[4], days = 0;
    int nf = 0;
    bool has_days = strchr(s, '-') != NULL;
    if (has_days) {
        if ((days = digits(&p)) < 0 || *p++ != '-')
            goto bad;
    }
    while (nf < 3) {
        if ((f[nf++] = digits(&p)) < 0)
            goto bad;
        if (*p != ':')
            break;
        p++;
    }
    if (*p)
        goto bad;
    /* Only the leading field may run past its clock range (90 minutes, 36 hours): 10:99 is a
     * typo, not 11:39. */
    for (int k = 1; k < nf; k++)
        if (f[k] > 59)
            return carma_err_set(err, "'%s': minutes and seconds after the first field are "
                                      "0 to 59", s);
    if (has_days && f[0] > 23)
        return carma_err_set(err, "'%s': hours after a day count are 0 to 23", s);
    int64_t secs;
    if (has_days) /* D-HH, D-HH:MM, D-HH:MM:SS */
        secs = days * 86400 + f[0] * 3600 + (nf > 1 ? f[1] * 60 : 0) + (nf > 2 ? f[2] : 0);
    else if (nf == 1) /* MM */
        secs = f[0] * 60;
    else if (nf == 2) /* MM:SS */
        secs = f[0] * 60 + f[1];
    else /* HH:MM:SS */
        secs = f[0] * 3600 + f[1] * 60 + f[2];
    if (secs < 1 || secs > max_s)
        return carma_err_set(err, "'%s': a time limit is 1 second to %lld days", s,
                             (long long)(max_s / 86400));
    *out = secs;
    return 0;
bad:
    return carma_err_set(err, "'%s': expected a time as MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM "
                         "or D-HH:MM:SS", s);
}

int parse_task_id(const char *s, int64_t min, int64_t *out, carma_err *err)
{
    int64_t v;
    errno = 0; /* a number below min leaves it as it was: not ERANGE from before */
    if (parse_i64(s, &v) == 0 && v >= min) {
        *out = v;
        return 0;
    }
    if (errno == ERANGE && !strchr(s, '-'))
        return carma_err_set(err, "task id '%s' is out of range (at most %" PRId64 ")", s,
                             INT64_MAX);
    return carma_err_set(err, "expected a task id (a positive integer), got '%s'", s);
}

int parse_id_list(const char *s, uint64_t *ids, size_t max, size_t *n, carma_err *err)
{
    char *copy = str_dup(s), *save = NULL;
    if (!copy)
        return carma_err_set(err, "out of memory");
    int rc = 0;
    size_t words = 0;
    for (char *w = strtok_r(copy, ",", &save); w && rc == 0; w = strtok_r(NULL, ",", &save)) {
        int64_t v;
        words++;
        if (parse_task_id(w, 1, &v, err))
            rc = carma_err_prefix(err, "'%s'", s);
        else if (*n >= max)
            rc = carma_err_set(err, "'%s': at most %zu task ids", s, max);
        else
            ids[(*n)++] = (uint64_t)v;
    }
    if (rc == 0 && words == 0)
        rc = carma_err_set(err, "expected task ids, got '%s'", s);
    free(copy);
    return rc;
}

int parse_array_spec(const char *s, int *idx, size_t max, size_t *n, carma_err *err)
{
    const char *p = s;
    *n = 0;
    do {
        int64_t lo = digits(&p), hi = lo, step = 1;
        if (lo >= 0 && *p == '-') {
            p++;
            hi = digits(&p);
            if (hi >= 0 && *p == ':') { /* Slurm's 1-7:2, every second index */
                p++;
                step = digits(&p);
            }
        }
        if (*p == '%') /* Slurm's limit on how many run at once: carma has none per array */
            return carma_err_set(err, "'%s': a %%N limit on the tasks running at once is not "
                                 "supported", s);
        if (lo < 0 || hi < lo || hi > 1000000 || step < 1 || (*p && *p != ','))
            return carma_err_set(err, "'%s': expected indices as 1-8, 1-7:2, 1,2,5 or 0-3,10 "
                                 "(0..1000000)", s);
        for (int64_t i = lo; i <= hi; i += step) {
            for (size_t k = 0; k < *n; k++)
                if (idx[k] == i)
                    return carma_err_set(err, "'%s': index %lld given twice", s, (long long)i);
            if (*n >= max)
                return carma_err_set(err, "'%s': at most %zu tasks in one array", s, max);
            idx[(*n)++] = (int)i;
        }
    } while (*p++ == ',');
    return 0;
}
