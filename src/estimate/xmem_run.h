/* xmem_run.h — runs a training command under carma's tracer (data/python/carma_trace, with
 * /usr/bin/python3) and estimates its peak GPU memory from the trace. The script runs as the
 * submitting user, never as root: under root with a known submitting user (SUDO_UID/SUDO_GID)
 * it drops to that user first, with HOME, USER and LOGNAME from their passwd entry, and with
 * none (or a SUDO_UID no passwd entry names) it refuses. */
#ifndef CARMA_ESTIMATE_XMEM_RUN_H
#define CARMA_ESTIMATE_XMEM_RUN_H

#include "estimate/xmem.h"
#include "util/err.h"

#define XMEM_PYTHON "/usr/bin/python3"
#define XMEM_DEFAULT_ITERATIONS 3
/* A script that has not made its steps by then (stuck loading data, say) is stopped;
 * $CARMA_TRACE_TIMEOUT sets another limit: seconds over 0 (fractions allowed) and at most
 * XMEM_TIMEOUT_MAX_S. Set to anything else it is an error, not the default. */
#define XMEM_TIMEOUT_S 600
#define XMEM_TIMEOUT_MAX_S 86400

/* Traces argv[0..argc) for `iterations` optimizer steps into a temporary file, replays it with
 * coefficients c and fills *e. The script's own output goes to stderr (stdout stays carma's).
 * On failure err says why in one line: the tracer's reason (an operation it cannot follow
 * is named), or the script's failure. */
int xmem_run(char *const argv[], int argc, int iterations, const xmem_coeffs *c,
             xmem_estimate *e, carma_err *err);
/* The same, and *files (when files is not NULL): the files the script read besides Python's
 * own, one "SIZE MTIME_NS PATH" a line (malloc'd), or NULL when the tracer could not list them
 * (the estimate is then not to be cached). */
int xmem_run_files(char *const argv[], int argc, int iterations, const xmem_coeffs *c,
                   xmem_estimate *e, char **files, carma_err *err);

#endif
