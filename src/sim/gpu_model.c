/* gpu_model.c — built-in GPU models and the `COUNTxMODEL` server specification. */
#include "sim/gpu_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/strutil.h"

/* Idle power: typical idle draw with a CUDA context; max: board power limit (TDP). */
static const gpu_model builtin_models[] = {
    {"A100-40GB", 40960, 60.0, 400.0},  /* SXM4, as in the DGX Station A100; idle as DCGM
                                           measured there */
    {"A100-80GB", 81920, 60.0, 400.0},
    {"H100-80GB", 81920, 70.0, 700.0},  /* SXM5 */
    {"V100-32GB", 32768, 40.0, 300.0},
    {"V100-16GB", 16384, 40.0, 300.0},
    {"RTX3090-24GB", 24576, 30.0, 350.0}, /* Lucid's profiling GPU */
};
#define NBUILTIN (int)(sizeof builtin_models / sizeof builtin_models[0])

const gpu_model *gpu_model_find(const gpu_model_list *extra, const char *name)
{
    if (extra)
        for (int i = 0; i < extra->n; i++)
            if (!strcasecmp(extra->items[i].name, name))
                return &extra->items[i];
    for (int i = 0; i < NBUILTIN; i++)
        if (!strcasecmp(builtin_models[i].name, name))
            return &builtin_models[i];
    return NULL;
}

void gpu_model_names(const gpu_model_list *extra, char *buf, int size)
{
    int used = 0;
    buf[0] = '\0';
    for (int i = 0; extra && i < extra->n && used < size; i++)
        used += snprintf(buf + used, (size_t)(size - used), "%s%s", used ? ", " : "",
                         extra->items[i].name);
    for (int i = 0; i < NBUILTIN && used < size; i++)
        used += snprintf(buf + used, (size_t)(size - used), "%s%s", used ? ", " : "",
                         builtin_models[i].name);
}

int gpu_model_parse(const char *text, gpu_model *out, carma_err *err)
{
    char buf[128];
    if (strlen(text) >= sizeof buf)
        return carma_err_set(err, "GPU model '%s': too long", text);
    strcpy(buf, text);
    char *parts[4];
    int n = 0;
    for (char *p = buf, *c; n < 4; p = c + 1) {
        parts[n++] = p;
        c = strchr(p, ':');
        if (!c)
            break;
        *c = '\0';
    }
    gpu_model m = {0};
    uint64_t mib;
    double idle, max;
    if (n != 4 || strchr(parts[3], ':'))
        return carma_err_set(err, "GPU model '%s': expected NAME:MEMORY:IDLE_W:MAX_W", text);
    str_trim(parts[0]);
    if (!*parts[0] || strlen(parts[0]) >= GPU_MODEL_NAME_MAX || strpbrk(parts[0], "x ,"))
        return carma_err_set(err, "GPU model '%s': name must be 1-%d characters without 'x', "
                             "spaces or commas", text, GPU_MODEL_NAME_MAX - 1);
    if (parse_size_mib(parts[1], &mib) || mib == 0)
        return carma_err_set(err, "GPU model '%s': bad memory size '%s'", text, parts[1]);
    if (parse_double(parts[2], &idle) || parse_double(parts[3], &max) || idle < 0 || max < idle)
        return carma_err_set(err, "GPU model '%s': need 0 <= IDLE_W <= MAX_W", text);
    snprintf(m.name, sizeof m.name, "%s", parts[0]);
    m.memory_mib = mib;
    m.idle_w = idle;
    m.max_w = max;
    *out = m;
    return 0;
}

int gpu_model_list_add(gpu_model_list *list, const gpu_model *m, carma_err *err)
{
    for (int i = 0; i < list->n; i++) {
        if (!strcasecmp(list->items[i].name, m->name)) {
            list->items[i] = *m;
            return 0;
        }
    }
    if (list->n >= SIM_EXTRA_GPU_MODELS)
        return carma_err_set(err, "too many GPU models in the config (at most %d)",
                             SIM_EXTRA_GPU_MODELS);
    list->items[list->n++] = *m;
    return 0;
}

int gpu_spec_parse_as(const char *what, const char *spec, const gpu_model_list *extra,
                      int *count, const gpu_model **model, carma_err *err)
{
    const char *x = strchr(spec, 'x');
    const char *name = spec;
    int64_t n = 1;
    if (x && x != spec) {
        char num[32];
        size_t len = (size_t)(x - spec);
        if (len >= sizeof num)
            return carma_err_set(err, "%s '%s': expected COUNTxMODEL, e.g. 4xA100-40GB", what,
                                 spec);
        memcpy(num, spec, len);
        num[len] = '\0';
        if (parse_i64(num, &n) || n < 1 || n > 100000)
            return carma_err_set(err, "%s '%s': GPU count must be 1..100000", what, spec);
        name = x + 1;
    }
    const gpu_model *m = gpu_model_find(extra, name);
    if (!m) {
        char names[512];
        gpu_model_names(extra, names, sizeof names);
        return carma_err_set(err, "%s '%s': unknown GPU model '%s' (known: %s)", what, spec,
                             name, names);
    }
    *count = (int)n;
    *model = m;
    return 0;
}

int gpu_spec_parse(const char *spec, const gpu_model_list *extra, int *count,
                   const gpu_model **model, carma_err *err)
{
    return gpu_spec_parse_as("--gpus", spec, extra, count, model, err);
}
