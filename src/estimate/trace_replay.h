/* trace_replay.h — replays a carma_trace trace (python/carma_trace/tracer.py writes it) through
 * the caching-allocator model, adding the workspaces the CPU run cannot show: cuBLAS's per
 * thread, cuBLASLt's per biased GEMM and cuDNN's per convolution (a fitted rule). */
#ifndef CARMA_ESTIMATE_TRACE_REPLAY_H
#define CARMA_ESTIMATE_TRACE_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/err.h"

/* cuBLAS keeps one workspace per thread that runs GEMMs, never freed (PyTorch 2.x default
 * CUBLAS_WORKSPACE_CONFIG :4096:2:16:8 plus alignment). */
#define XMEM_CUBLAS_WORKSPACE 8519680u
/* cuBLASLt's workspace for a GEMM with bias, taken and given back around the call. */
#define XMEM_CUBLASLT_WORKSPACE (1u << 20)

typedef enum trace_ev_kind {
    TEV_ALLOC, TEV_FREE, TEV_GEMM_THREAD, TEV_LT, TEV_CONV, TEV_STEP
} trace_ev_kind;

typedef struct trace_ev {
    trace_ev_kind kind;
    uint32_t id;          /* storage id (alloc, free) */
    uint64_t a, b, c;     /* alloc: bytes; conv: input, output, weight bytes */
} trace_ev;

typedef struct mtrace_events {
    trace_ev *ev;
    size_t n, cap;
    uint32_t max_id;
    int steps;            /* optimizer steps in the trace */
    size_t convs, gemm_threads;
} mtrace_events;

/* Reads a complete trace (it must end with "end N"). */
int mtrace_load(const char *path, mtrace_events *t, carma_err *err);
/* The same from an open file, named `path` in the messages. */
int mtrace_loadf(FILE *f, const char *path, mtrace_events *t, carma_err *err);
void mtrace_free(mtrace_events *t);

typedef struct replay_rules {
    bool workspaces;          /* false: tensors only */
    double conv_ws_ratio;     /* cuDNN workspace = ratio x the convolution's input bytes, */
    double conv_ws_cap_mib;   /* and at most this many MiB (0: no cap) */
} replay_rules;

typedef struct replay_result {
    uint64_t peak_reserved, peak_allocated;
    size_t segments;
} replay_result;

int mtrace_replay(const mtrace_events *t, const replay_rules *rules, replay_result *r,
                 carma_err *err);

#endif
