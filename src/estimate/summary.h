/* summary.h — model summaries turned into a layer table.
 *
 * Three printout formats are read: torchsummary (`Conv2d-1  [-1, 64, 224, 224]  1,792`),
 * torchinfo (`│    └─Conv2d: 2-1  ...  [8, 64, 256, 256]  9,408`) and a Hugging Face style
 * module repr with per-module parameter counts (`(query): Linear(in_features=768,
 * out_features=768, bias=True), 590,592 params`). Parsing stops after the footer, so notes
 * appended to a summary file are ignored; a line inside the table that fits no row pattern is
 * an error naming file:line. */
#ifndef CARMA_ESTIMATE_SUMMARY_H
#define CARMA_ESTIMATE_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

typedef enum summary_format {
    SUMMARY_TORCHSUMMARY = 0,
    SUMMARY_TORCHINFO,
    SUMMARY_MODULE_REPR
} summary_format;

#define SUMMARY_MAX_DIMS 6
/* The largest size a summary may print for a dimension, a layer's elements per sample, a
 * parameter count or a feature count (2^50, about 1.1e15: a thousand times today's largest
 * models). Larger or negative sizes are rejected by the parsers, so the estimators' arithmetic
 * stays far from overflow and never turns a negative size into a huge unsigned figure. */
#define SUMMARY_MAX_SIZE (UINT64_C(1) << 50)
#define SUMMARY_TYPE_MAX 48

typedef struct summary_layer {
    char type[SUMMARY_TYPE_MAX]; /* module class: "Conv2d", "Linear", "LayerNorm", ... */
    int ndims;                   /* output shape dims as printed; 0 = none printed */
    int64_t shape[SUMMARY_MAX_DIMS]; /* shape[0] is the batch (-1 when printed so) */
    uint64_t params;
    int depth;                   /* nesting depth (0 for torchsummary rows) */
    bool leaf;                   /* no child rows follow it */
    /* module repr only: Linear in/out features, Embedding(num, dim); -1 when absent */
    int64_t in_features, out_features;
    bool plain_args;             /* the argument list was just integers, e.g. Embedding(512, 768) */
    size_t line;                 /* 1-based line in the file */
} summary_layer;

typedef struct model_summary {
    summary_format format;
    summary_layer *layers;
    size_t n, cap;
    uint64_t total_params; /* the footer's "Total params" */
    bool has_total;
} model_summary;

/* Parses a summary held in memory (`name` is used in messages). Detects the format. Errors:
 * unknown format, malformed row (name:line), no layers. */
int summary_parse(const char *name, const char *text, model_summary *out, carma_err *err);
int summary_load(const char *path, model_summary *out, carma_err *err);
void summary_free(model_summary *s);
const char *summary_format_name(summary_format f);

/* Output elements per sample of one layer: product of the printed dims after the batch one
 * (0 when no shape was printed). A layer the parsers accepted always fits; anything else
 * saturates at UINT64_MAX instead of wrapping. */
uint64_t summary_layer_elems(const summary_layer *l);

/* ---- used by the per-format parsers (summary_*.c) ---- */

/* One line of the text, NUL-terminated in a private copy. */
typedef struct summary_line {
    char *text;
    size_t no;
} summary_line;

int summary_push(model_summary *s, const summary_layer *l, carma_err *err);
/* "1,234,567" -> 1234567; the whole string must be digits and commas. */
int summary_parse_count(const char *s, uint64_t *out);
/* "[-1, 64, 112, 112]" -> dims; returns 0, or -1 when it is not a flat list of integers. */
int summary_parse_shape(const char *s, int64_t *dims, int *ndims);
/* Reads footer lines ("Total params: N" and friends) from lines[i..]; stops at the first line
 * that is not a footer line. */
void summary_read_footer(model_summary *s, summary_line *lines, size_t n, size_t i);

int summary_parse_torchsummary(const char *name, summary_line *lines, size_t n, size_t start,
                               model_summary *out, carma_err *err);
int summary_parse_torchinfo(const char *name, summary_line *lines, size_t n, size_t start,
                            model_summary *out, carma_err *err);
int summary_parse_repr(const char *name, summary_line *lines, size_t n, size_t start,
                       model_summary *out, carma_err *err);

#endif
