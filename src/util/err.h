/* err.h — the error value library code fills in; only the CLI prints it and exits. */
#ifndef CARMA_UTIL_ERR_H
#define CARMA_UTIL_ERR_H

#include <stdarg.h>

#define CARMA_ERR_MAX 512

typedef struct carma_err {
    char msg[CARMA_ERR_MAX];
} carma_err;

/* Sets err->msg (when err is non-NULL) and returns -1, so callers can
 * `return carma_err_set(...)`. */
int carma_err_set(carma_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int carma_err_vset(carma_err *err, const char *fmt, va_list ap);

/* Prefixes the existing message with "prefix: " (e.g. a file name) and returns -1. */
int carma_err_prefix(carma_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
