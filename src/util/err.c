/* err.c — formatting of carma_err messages. */
#include "util/err.h"

#include <stdio.h>
#include <string.h>

int carma_err_vset(carma_err *err, const char *fmt, va_list ap)
{
    if (err)
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    return -1;
}

int carma_err_set(carma_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    carma_err_vset(err, fmt, ap);
    va_end(ap);
    return -1;
}

int carma_err_prefix(carma_err *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    char prefix[CARMA_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    char old[CARMA_ERR_MAX];
    memcpy(old, err->msg, sizeof old);
    /* prefix + ": " + old, cut to fit */
    size_t cap = sizeof err->msg - 1, n = 0;
    for (const char *parts[] = {prefix, ": ", old}, **p = parts; p < parts + 3; p++)
        for (const char *c = *p; *c && n < cap; c++)
            err->msg[n++] = *c;
    err->msg[n] = '\0';
    return -1;
}
