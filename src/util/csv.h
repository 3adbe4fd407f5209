/* csv.h — a small RFC 4180 reader: quoted fields, doubled quotes, CRLF; header lookup by name;
 * and the one field writer the CSV files carma writes use. */
#ifndef CARMA_UTIL_CSV_H
#define CARMA_UTIL_CSV_H

#include <stddef.h>
#include <stdio.h>

#include "util/err.h"

typedef struct csv_row {
    char **fields;
    size_t nfields;
    size_t line; /* 1-based line number where the row starts */
} csv_row;

typedef struct csv_table {
    char *path;       /* for error messages */
    csv_row header;
    csv_row *rows;
    size_t nrows;
} csv_table;

/* Loads a whole CSV file whose first row is a header: its names are trimmed and must differ
 * from each other. Every row must have as many fields as the header; a mismatch, a repeated
 * name or a NUL byte is an error naming the file and line. */
int csv_load(const char *path, csv_table *out, carma_err *err);
/* Same, from a buffer already in memory (name is used in messages). */
int csv_parse(const char *name, const char *text, csv_table *out, carma_err *err);
void csv_free(csv_table *t);

/* Index of the named header column, or -1. */
int csv_column(const csv_table *t, const char *name);
/* Like csv_column but an error naming the file and the missing column. */
int csv_require_column(const csv_table *t, const char *name, carma_err *err);

/* Writes one field: quoted, its quotes doubled, when it holds a comma, a quote or a line
 * break, so that a name cannot shift the columns after it. */
void csv_write_field(FILE *f, const char *s);

#endif
