/* fmt.h — reply fields as people read them, shared by show, history, gpus and top: a Unix
 * time as local time, seconds as a duration, an exit status, MiB; a JSON null (unknown) as
 * TIME_UNKNOWN ("-"). */
#ifndef CARMA_CLI_FMT_H
#define CARMA_CLI_FMT_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "util/timefmt.h"

/* Each writes into buf and returns it. */
const char *fmt_time(const json_t *t, char *buf, size_t cap);
const char *fmt_duration(const json_t *s, char *buf, size_t cap);
/* "0", "1", "signal 9", or "-" (both null). */
const char *fmt_exit(const json_t *code, const json_t *signal, char *buf, size_t cap);
/* Hours to three decimals, "0.250" ("-": null, unknown rather than none). */
const char *fmt_hours(const json_t *h, char *buf, size_t cap);
/* "7800 MiB" ("-": null). */
const char *fmt_mib(const json_t *mib, char *buf, size_t cap);
/* Where a task's memory figure came from, as people read it: the protocol's "oracle" (a
 * figure the submitter gave, --mem or the task file) is "given"; NULL stays NULL. */
const char *fmt_mem_source(const char *source);
/* A JSON array of integers as "0,1" ("-": empty). */
const char *fmt_ints(const json_t *a, char *buf, size_t cap);
/* Text another user chose (a task name, a user name) for a column `width` terminal cells
 * wide: controls escaped (str_escape_controls), cut between UTF-8 characters and padded, each
 * character counted as the cells it takes (a CJK one 2, a combining accent 0), so that the
 * columns after it line up. A new heap string; NULL for NULL or out of memory. */
char *column_text(const char *s, size_t width);
/* Writes s to f with its controls escaped (str_escape_controls): a file name or path quoted
 * in a message ("?" when out of memory; nothing for NULL). */
void fput_escaped(FILE *f, const char *s);

#endif
