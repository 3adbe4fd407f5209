/* trace_replay.c — see trace_replay.h. */
#include "estimate/trace_replay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estimate/caching_alloc.h"
#include "util/array.h"

static int push(mtrace_events *t, trace_ev e, carma_err *err)
{
    trace_ev *ne = array_grow(t->ev, &t->cap, t->n + 1, sizeof *ne, 1024);
    if (!ne)
        return carma_err_set(err, "out of memory reading the trace");
    t->ev = ne;
    t->ev[t->n++] = e;
    return 0;
}

#define TRACE_MAX_BYTES (1ull << 50)

static int parse_line(mtrace_events *t, const char *line, bool *ended, carma_err *err)
{
    unsigned long long a, b, c;
    unsigned id;
    char phase[8];
    int steps;
    trace_ev e = {0};
    if (sscanf(line, "a %u %llu", &id, &a) == 2) {
        e = (trace_ev){.kind = TEV_ALLOC, .id = id, .a = a};
    } else if (sscanf(line, "f %u", &id) == 1) {
        e = (trace_ev){.kind = TEV_FREE, .id = id};
    } else if (sscanf(line, "g %7s", phase) == 1) {
        e.kind = TEV_GEMM_THREAD;
        t->gemm_threads++;
    } else if (!strcmp(line, "l")) {
        e.kind = TEV_LT;
    } else if (sscanf(line, "c %llu %llu %llu", &a, &b, &c) == 3) {
        e = (trace_ev){.kind = TEV_CONV, .a = a, .b = b, .c = c};
        t->convs++;
    } else if (sscanf(line, "s %d", &steps) == 1) {
        e.kind = TEV_STEP;
    } else if (sscanf(line, "end %d", &steps) == 1) {
        t->steps = steps;
        *ended = true;
        return 0;
    } else {
        return carma_err_set(err, "unknown event '%.40s'", line);
    }
    if ((e.kind == TEV_ALLOC || e.kind == TEV_FREE) && (id == 0 || id > 100000000u))
        return carma_err_set(err, "bad storage id %u", id);
    /* No GPU holds a petabyte: larger figures are corrupt, and would overflow the model. */
    if (e.a > TRACE_MAX_BYTES || e.b > TRACE_MAX_BYTES || e.c > TRACE_MAX_BYTES)
        return carma_err_set(err, "size out of range (over 2^50 bytes) in '%.40s'", line);
    if (e.kind == TEV_ALLOC && id > t->max_id)
        t->max_id = id;
    return push(t, e, err);
}

int mtrace_load(const char *path, mtrace_events *t, carma_err *err)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "r");
    if (!f)
        return carma_err_set(err, "cannot open trace %s: %s", path, strerror(errno));
    char line[256];
    size_t lineno = 0;
    bool ended = false;
    int rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\n")] = '\0';
        if (lineno == 1) {
            if (strcmp(line, "carma-trace 1"))
                rc = carma_err_set(err, "%s is not a carma trace (version 1)", path);
            continue;
        }
        if (ended)
            rc = carma_err_set(err, "event after the end");
        else
            rc = parse_line(t, line, &ended, err);
        if (rc)
            carma_err_prefix(err, "%s:%zu", path, lineno);
    }
    /* a read error (EISDIR: fopen opens a directory) is not a short trace */
    if (!rc && ferror(f))
        rc = carma_err_set(err, "%s: %s", path, strerror(errno ? errno : EIO));
    fclose(f);
    if (!rc && !ended)
        rc = carma_err_set(err, "%s: the trace is incomplete (no end line)", path);
    if (rc)
        mtrace_free(t);
    return rc;
}

void mtrace_free(mtrace_events *t)
{
    free(t->ev);
    memset(t, 0, sizeof *t);
}

/* A workspace taken and released at once: it can still grow the reserve. */
static int transient(caching_alloc *ca, uint64_t bytes)
{
    if (!bytes)
        return 0;
    int h = ca_alloc(ca, bytes);
    if (h < 0)
        return -1;
    ca_release(ca, h);
    return 0;
}

int mtrace_replay(const mtrace_events *t, const replay_rules *rules, replay_result *r,
                 carma_err *err)
{
    memset(r, 0, sizeof *r);
    int *handle = malloc(((size_t)t->max_id + 1) * sizeof *handle);
    if (!handle)
        return carma_err_set(err, "out of memory replaying the trace");
    for (size_t i = 0; i <= t->max_id; i++)
        handle[i] = -1;
    caching_alloc ca;
    ca_init(&ca);
    int rc = 0;
    for (size_t i = 0; i < t->n && !rc; i++) {
        const trace_ev *e = &t->ev[i];
        switch (e->kind) {
        case TEV_ALLOC:
            /* PyTorch hands out no block for an empty storage. */
            if (e->a && (handle[e->id] = ca_alloc(&ca, e->a)) < 0)
                rc = -1;
            break;
        case TEV_FREE:
            if (e->id <= t->max_id && handle[e->id] >= 0) {
                ca_release(&ca, handle[e->id]);
                handle[e->id] = -1;
            }
            break;
        case TEV_GEMM_THREAD: /* kept for the process's life: never released */
            if (rules->workspaces && ca_alloc(&ca, XMEM_CUBLAS_WORKSPACE) < 0)
                rc = -1;
            break;
        case TEV_LT:
            if (rules->workspaces)
                rc = transient(&ca, XMEM_CUBLASLT_WORKSPACE);
            break;
        case TEV_CONV:
            /* GEMM-based algorithms unfold the input (im2col: k*k times it for a k x k
             * kernel), so the workspace is taken in proportion to the input; cuDNN's
             * heuristics pass over algorithms whose workspace is too large, hence a cap */
            if (rules->workspaces) {
                double ws = rules->conv_ws_ratio * (double)e->a;
                if (rules->conv_ws_cap_mib > 0 && ws > rules->conv_ws_cap_mib * 1048576.0)
                    ws = rules->conv_ws_cap_mib * 1048576.0;
                rc = transient(&ca, (uint64_t)ws);
            }
            break;
        case TEV_STEP: break;
        }
    }
    if (rc)
        carma_err_set(err, "out of memory replaying the trace");
    r->peak_reserved = ca.peak_reserved;
    r->peak_allocated = ca.peak_allocated;
    r->segments = ca.segments;
    ca_free_all(&ca);
    free(handle);
    return rc;
}
