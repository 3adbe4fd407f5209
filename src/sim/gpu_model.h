/* gpu_model.h — the simulated server: GPU models (memory, idle and max power) and the
 * `--gpus COUNTxMODEL` specification. A small built-in table; more models come from the
 * config (`sim_gpu_model = NAME:MEMORY:IDLE_W:MAX_W`). */
#ifndef CARMA_SIM_GPU_MODEL_H
#define CARMA_SIM_GPU_MODEL_H

#include <stdint.h>

#include "util/err.h"

#define GPU_MODEL_NAME_MAX 32
#define SIM_EXTRA_GPU_MODELS 8

typedef struct gpu_model {
    char name[GPU_MODEL_NAME_MAX]; /* "A100-40GB" */
    uint64_t memory_mib;
    double idle_w;
    double max_w;
} gpu_model;

/* Extra models defined in the config, searched before the built-in table. */
typedef struct gpu_model_list {
    gpu_model items[SIM_EXTRA_GPU_MODELS];
    int n;
} gpu_model_list;

/* Looks a model up by name (case-insensitive): `extra` first (may be NULL), then the built-ins.
 * Returns NULL when unknown. */
const gpu_model *gpu_model_find(const gpu_model_list *extra, const char *name);
/* Writes the known names, comma-separated, for error messages. */
void gpu_model_names(const gpu_model_list *extra, char *buf, int size);

/* Parses "NAME:MEMORY:IDLE_W:MAX_W" (MEMORY as parse_size_mib takes it, e.g. 40G or 40960). */
int gpu_model_parse(const char *text, gpu_model *out, carma_err *err);
/* Adds (or replaces, by name) a model in the list. */
int gpu_model_list_add(gpu_model_list *list, const gpu_model *m, carma_err *err);

/* Parses "4xA100-40GB" (COUNT x MODEL; "A100-40GB" alone means one). Errors start
 * "--gpus 'SPEC'". */
int gpu_spec_parse(const char *spec, const gpu_model_list *extra, int *count,
                   const gpu_model **model, carma_err *err);
/* The same, errors starting "WHAT 'SPEC'": the spec came from WHAT (e.g. the config key
 * sim_server), which is what the user must fix. */
int gpu_spec_parse_as(const char *what, const char *spec, const gpu_model_list *extra,
                      int *count, const gpu_model **model, carma_err *err);

#endif
