/* trace_replay.c — see trace_replay.h. */
#include "estimate/trace_replay.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estimate/caching_alloc.h"
#include "util/array.h"
#include "util/strutil.h"

static int push(mtrace_events *t, trace_ev e, carma_err *err)
{
    trace_ev *ne = array_grow(t->ev, &t->cap, t->n + 1, sizeof *ne, 1024);
    if (!ne)
        return carma_err_set(err, "out of memory reading the trace");
    t->ev = ne;
    t->ev[t->n++] = e;
    return 0;
}

/* No GPU holds a petabyte: larger figures are corrupt, and would overflow the model. */
#define TRACE_MAX_BYTES (1ull << 50)
#define TRACE_MAX_ID 100000000u
/* The tracer's lines are short; a longer one is not a trace. */
#define TRACE_MAX_LINE 4096

/* Splits line in place at spaces and tabs into at most max fields; returns how many there
 * are (max + 1 when there are more). */
static size_t split(char *line, char *f[], size_t max)
{
    size_t n = 0;
    for (char *p = line;;) {
        p += strspn(p, " \t");
        if (!*p)
            return n;
        if (n == max)
            return max + 1;
        f[n++] = p;
        p += strcspn(p, " \t");
        if (*p)
            *p++ = '\0';
    }
}

/* A field that must be a decimal whole number from lo to hi, digits only (no sign, no
 * exponent): 0; -1 when it is not such a number; -2 when it is one outside [lo, hi]. */
static int field_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (!*s || s[strspn(s, "0123456789")])
        return -1;
    uint64_t v;
    if (parse_u64(s, &v) || v < lo || v > hi) /* digits only: parse_u64 fails on overflow */
        return -2;
    *out = v;
    return 0;
}

/* Fields from..to of f as byte sizes into v[0..]: 0, or field_u64's -1 / -2. */
static int sizes(char *const f[], size_t from, size_t to, uint64_t *v)
{
    int r = 0;
    for (size_t i = from; !r && i <= to; i++)
        r = field_u64(f[i], 0, TRACE_MAX_BYTES, &v[i - from]);
    return r;
}

/* The line as an error message shows it: at most 40 bytes, control characters as '?'. */
static void shown(char *buf, size_t cap, const char *line)
{
    snprintf(buf, cap, "%.40s", line);
    for (char *p = buf; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
}

/* Each event's form: its kind, its fields in all (the kind included). */
typedef struct ev_form {
    const char *kind, *form;
    size_t fields;
} ev_form;

static const ev_form forms[] = {
    {"a", "a ID BYTES", 3}, {"f", "f ID", 2}, {"g", "g fwd|bwd", 2}, {"l", "l", 1},
    {"c", "c IN OUT WEIGHT", 4}, {"s", "s N", 2}, {"end", "end N", 2},
};

static int parse_line(mtrace_events *t, char *line, bool *ended, carma_err *err)
{
    char show[48];
    shown(show, sizeof show, line);
    char *f[4];
    size_t nf = split(line, f, 4);
    if (!nf)
        return carma_err_set(err, "empty line");
    const ev_form *form = NULL;
    for (size_t k = 0; k < sizeof forms / sizeof forms[0] && !form; k++)
        if (!strcmp(f[0], forms[k].kind))
            form = &forms[k];
    if (!form)
        return carma_err_set(err, "unknown event '%s'", show);
    if (nf != form->fields)
        return carma_err_set(err, "malformed event '%s' (expected '%s')", show, form->form);
    trace_ev e = {0};
    uint64_t v[3] = {0}, id = 0;
    int r = 0;
    switch (*form->kind) {
    case 'a':
    case 'f':
        if ((r = field_u64(f[1], 1, TRACE_MAX_ID, &id)) == -2)
            return carma_err_set(err, "bad storage id in '%s' (1 to %u)", show, TRACE_MAX_ID);
        if (!r && *form->kind == 'a')
            r = sizes(f, 2, 2, v);
        e = (trace_ev){.kind = *form->kind == 'a' ? TEV_ALLOC : TEV_FREE, .id = (uint32_t)id,
                       .a = v[0]};
        break;
    case 'g':
        r = strcmp(f[1], "fwd") && strcmp(f[1], "bwd") ? -1 : 0;
        e.kind = TEV_GEMM_THREAD;
        break;
    case 'l': e.kind = TEV_LT; break;
    case 'c':
        r = sizes(f, 1, 3, v);
        e = (trace_ev){.kind = TEV_CONV, .a = v[0], .b = v[1], .c = v[2]};
        break;
    default: /* s N, end N: step counts as --run --iterations takes them, from 1 */
        if ((r = field_u64(f[1], 0, INT_MAX, &id)) == -2)
            return carma_err_set(err, "step count out of range in '%s' (1 to %d)", show,
                                 INT_MAX);
        if (!r && !id && *form->kind == 'e')
            return carma_err_set(err, "'%s': the trace holds no optimizer step (nothing to "
                                      "estimate)", show);
        if (!r && !id)
            return carma_err_set(err, "step 0 in '%s': steps count from 1", show);
        e.kind = TEV_STEP;
        break;
    }
    if (r == -2)
        return carma_err_set(err, "size out of range (over 2^50 bytes) in '%s'", show);
    if (r)
        return carma_err_set(err, "malformed event '%s' (expected '%s'%s)", show, form->form,
                             *form->kind == 'g' ? "" : ", whole numbers");
    if (*form->kind == 'e') {
        t->steps = (int)id;
        *ended = true;
        return 0;
    }
    if (e.kind == TEV_GEMM_THREAD)
        t->gemm_threads++;
    else if (e.kind == TEV_CONV)
        t->convs++;
    else if (e.kind == TEV_ALLOC && e.id > t->max_id)
        t->max_id = e.id;
    return push(t, e, err);
}

/* One line of f into buf (its newline dropped, NULs kept, *n its length): 1, 0 at the end of
 * the file, -1 when it does not fit in cap - 1 bytes. Bounded, so that a trace with no newline
 * is never read whole into memory (under sudo, root reads what the user's script wrote). */
static int read_line(FILE *f, char *buf, size_t cap, size_t *n)
{
    size_t k = 0;
    int c;
    while ((c = getc_unlocked(f)) != EOF) {
        if (c == '\n')
            break;
        if (k + 1 >= cap)
            return -1;
        buf[k++] = (char)c;
    }
    if (c == EOF && k == 0)
        return 0;
    buf[k] = '\0';
    *n = k;
    return 1;
}

int mtrace_load(const char *path, mtrace_events *t, carma_err *err)
{
    memset(t, 0, sizeof *t);
    carma_err why;
    FILE *f = fopen_regular(path, &why);
    if (!f)
        return carma_err_set(err, "cannot open trace %s", why.msg);
    int rc = mtrace_loadf(f, path, t, err);
    fclose(f);
    return rc;
}

int mtrace_loadf(FILE *f, const char *path, mtrace_events *t, carma_err *err)
{
    memset(t, 0, sizeof *t);
    char line[TRACE_MAX_LINE + 2]; /* a CR more */
    size_t lineno = 0, n;
    int got;
    bool ended = false;
    int rc = 0;
    while (!rc && (got = read_line(f, line, sizeof line, &n)) != 0) {
        lineno++;
        if (got < 0) {
            rc = carma_err_set(err, "%s:%zu: line too long (over %d bytes)", path, lineno,
                               TRACE_MAX_LINE);
            break;
        }
        if (n && line[n - 1] == '\r') /* CRLF line endings (a trace copied through Windows) */
            line[--n] = '\0';
        if (lineno == 1) {
            if (strlen(line) != n || strcmp(line, "carma-trace 1"))
                rc = carma_err_set(err, "%s is not a carma trace (version 1)", path);
            continue;
        }
        if (strlen(line) != n)
            rc = carma_err_set(err, "contains a NUL byte");
        else if (n > TRACE_MAX_LINE)
            rc = carma_err_set(err, "line too long (over %d bytes)", TRACE_MAX_LINE);
        else if (ended)
            rc = carma_err_set(err, "event after the end");
        else
            rc = parse_line(t, line, &ended, err);
        if (rc)
            carma_err_prefix(err, "%s:%zu", path, lineno);
    }
    /* a read error (EISDIR: fopen opens a directory) is not a short trace */
    if (!rc && ferror(f))
        rc = carma_err_set(err, "%s: %s", path, strerror(errno ? errno : EIO));
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
