/* print.h — GPU readings for people (one block per GPU, "unknown" where a metric could not be
 * read, and where each metric came from) or as JSON (null for unknown). */
#ifndef CARMA_GPU_PRINT_H
#define CARMA_GPU_PRINT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "gpu/backend.h"

/* A GPU's text (UUID, name) as JSON: null when it is unknown (empty) or not UTF-8 (jansson
 * refuses it, and json_object_set_new would drop the key). */
json_t *gpu_text_json(const char *s);

/* Returns 0, or -1 when the output could not be written. */
int gpu_print_readings(FILE *out, const gpu_reading *r, int n, bool json);

#endif
