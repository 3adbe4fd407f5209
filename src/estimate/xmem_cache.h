/* xmem_cache.h — xmem estimates of training commands, cached per user so that submitting the
 * same job again does not trace it again. The key covers what changes the job's memory: the
 * script's bytes (or the -m module's name), every word of the command, the job's own
 * environment entries and this process's PYTORCH_*, TORCH_*, CUDA_*, CUBLAS_*, CUDNN_* and
 * OMP_* variables, the iterations and the coefficients; an entry holds the size and modification
 * time of each file the script read besides Python's own (carma_trace/files.py), and is not used
 * once one has changed. Files live in $XDG_CACHE_HOME/carma/xmem/ (else ~/.cache/carma/xmem/),
 * one JSON object each (mode 600), and only in a directory of ours not writable by others. */
#ifndef CARMA_ESTIMATE_XMEM_CACHE_H
#define CARMA_ESTIMATE_XMEM_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "estimate/xmem.h"
#include "util/err.h"

/* True when the command runs a Python script or module (SCRIPT.py or -m MODULE, after an
 * optional python* interpreter word): the commands xmem can trace. */
bool xmem_command_is_python(char *const argv[], int argc);

/* The estimate of argv, from the cache or by tracing it (xmem_run) and caching the result;
 * *hit says which. env: the job's KEY=VALUE entries (may be NULL). */
int xmem_cached_estimate(char *const argv[], int argc, char *const env[], size_t nenv,
                         int iterations, xmem_estimate *e, bool *hit, carma_err *err);

#endif
