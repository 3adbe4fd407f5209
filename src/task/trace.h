/* trace.h — job traces: CSV rows `seq, submit_offset_s, task_file` (CARMA's evaluation traces). */
#ifndef CARMA_CORE_TRACE_H
#define CARMA_CORE_TRACE_H

#include <stddef.h>
#include <stdio.h>

#include "util/err.h"

/* The latest submit_offset_s a trace may hold: about 31 years, far past any real trace, and
 * where a double still counts seconds to better than a microsecond (at 1e17 s it loses whole
 * seconds; 1e300 s made the simulated makespan 0). */
#define TRACE_MAX_OFFSET_S 1e9

/* seq is the submission's number, 1.. this, each its own. */
#define TRACE_MAX_SEQ 1000000000

typedef struct trace_entry {
    int seq;
    double submit_offset_s; /* seconds after the first submission, non-decreasing */
    char *task_file;        /* a .rad name (looked up in the catalog) or a task file path */
} trace_entry;

typedef struct trace {
    char *path;
    trace_entry *entries;
    size_t n;
} trace;

/* Loads and validates a trace: header `seq,submit_offset_s,task_file`; seq 1..TRACE_MAX_SEQ,
 * no two alike; offsets numeric, 0 to TRACE_MAX_OFFSET_S and non-decreasing; task_file
 * non-empty. Errors name the file and line. */
int trace_load(const char *path, trace *out, carma_err *err);
void trace_free(trace *t);
/* Writes a trace as CSV text to f (named `name` in errors), exactly what trace_write puts in
 * its file: every offset reads back as the same double. Refuses an invalid trace before
 * writing anything. */
int trace_fprint(FILE *f, const char *name, const trace *t, carma_err *err);
/* Writes a trace atomically (temporary file, then rename): no partial file on failure. */
int trace_write(const char *path, const trace *t, carma_err *err);

#endif
