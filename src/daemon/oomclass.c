/* oomclass.c — out-of-memory classification of an ended attempt. */
#include "daemon/oomclass.h"

#include <math.h>
#include <string.h>

/* Exact substrings, matched case-sensitively: each is how one framework reports a failed
 * GPU allocation. Generic words ("OOM", "memory") are left out on purpose: they occur in
 * paths and harmless warnings (a bug of the reference's recovery scan). */
static const char *const oom_markers[] = {
    "CUDA out of memory",           /* PyTorch */
    "OutOfMemoryError",             /* torch.OutOfMemoryError, torch.cuda.OutOfMemoryError */
    "CUDA error: out of memory",    /* PyTorch / CUDA runtime via c10 */
    "CUBLAS_STATUS_ALLOC_FAILED",   /* cuBLAS */
    "CUDNN_STATUS_ALLOC_FAILED",    /* cuDNN */
    "cudaErrorMemoryAllocation",    /* CUDA runtime */
    "CUDA_ERROR_OUT_OF_MEMORY",     /* CUDA driver API, JAX/XLA */
    "RESOURCE_EXHAUSTED",           /* TensorFlow, JAX */
    "OOM when allocating",          /* TensorFlow */
    "Out of memory while trying to allocate", /* XLA (JAX) */
};

static const char *find_in(const char *text, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    if (n == 0 || len < n)
        return NULL;
    for (size_t i = 0; i + n <= len; i++)
        if (text[i] == needle[0] && memcmp(text + i, needle, n) == 0)
            return text + i;
    return NULL;
}

const char *oom_marker_in(const char *text, size_t len)
{
    if (!text)
        return NULL;
    for (size_t i = 0; i < sizeof oom_markers / sizeof oom_markers[0]; i++)
        if (find_in(text, len, oom_markers[i]))
            return oom_markers[i];
    return NULL;
}

/* A size as c10's format_size prints it ("512 bytes", "20.00 MiB", "1.16 GiB") at p, in MiB;
 * digits are read by hand (strtod follows the locale, and the text is not NUL-terminated). */
static bool size_at(const char *p, const char *end, double *mib)
{
    double v = 0, scale = 1;
    bool digits = false, point = false;
    for (; p < end && ((*p >= '0' && *p <= '9') || (*p == '.' && !point)); p++) {
        if (*p == '.') {
            point = true;
            continue;
        }
        digits = true;
        if (point)
            v += (*p - '0') * (scale /= 10);
        else if (v < 1e12)
            v = v * 10 + (*p - '0');
    }
    static const struct { const char *unit; double per_mib; } units[] = {
        {" bytes", 1048576.0}, {" KiB", 1024.0}, {" MiB", 1.0}, {" GiB", 1.0 / 1024},
    };
    for (size_t i = 0; digits && i < sizeof units / sizeof units[0]; i++) {
        size_t n = strlen(units[i].unit);
        if ((size_t)(end - p) >= n && memcmp(p, units[i].unit, n) == 0) {
            *mib = v / units[i].per_mib;
            return true;
        }
    }
    return false;
}

/* The size just after the first `after` in [p, end); false when there is none. */
static bool size_after(const char *p, const char *end, const char *after, double *mib)
{
    const char *at = find_in(p, (size_t)(end - p), after);
    return at && size_at(at + strlen(after), end, mib);
}

bool oom_demand_mib(const char *text, size_t len, uint64_t *mib)
{
    static const char tried[] = "Tried to allocate ";
    static const char reserved[] = " reserved in total by PyTorch";
    bool found = false;
    double best = 0;
    const char *end = text ? text + len : NULL;
    for (const char *p = text; p && (p = find_in(p, (size_t)(end - p), tried));) {
        double x, held = 0;
        p += sizeof tried - 1;
        if (!size_at(p, end, &x))
            continue;
        /* the rest of this message: up to the next one, at most 1 KiB on */
        const char *next = find_in(p, (size_t)(end - p), tried);
        const char *stop = next ? next : end;
        stop = stop - p > 1024 ? p + 1024 : stop;
        if (!size_after(p, stop, "this process has ", &held)) {
            /* PyTorch before 2.1: "(GPU 0; T total capacity; A already allocated; F free;
             * R reserved in total by PyTorch)" */
            const char *r = find_in(p, (size_t)(stop - p), reserved);
            const char *semi = r;
            while (semi && semi > p && semi[-1] != ';')
                semi--;
            if (!(r && semi > p && *semi == ' ' && size_at(semi + 1, r + sizeof reserved - 1,
                                                          &held)))
                held = 0;
        }
        if (x + held > best || !found)
            best = x + held;
        found = true;
    }
    if (found)
        *mib = best >= 1e12 ? (uint64_t)1e12 : (uint64_t)ceil(best);
    return found;
}

task_outcome oom_classify(exit_status st, bool cancelled, const char *stderr_tail, size_t len)
{
    if (cancelled)
        return TASK_CANCELLED;
    if (st.exited && st.exit_code == 0)
        return TASK_DONE;
    return oom_marker_in(stderr_tail, len) ? TASK_OOM : TASK_FAILED;
}

const char *task_outcome_name(task_outcome o)
{
    switch (o) {
    case TASK_DONE:
        return "done";
    case TASK_OOM:
        return "oom";
    case TASK_FAILED:
        return "failed";
    case TASK_CANCELLED:
        return "cancelled";
    }
    return "unknown";
}
