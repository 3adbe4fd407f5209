/* oomclass.c — out-of-memory classification of an ended attempt. */
#include "daemon/oomclass.h"

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

task_outcome oom_classify(exit_status st, bool cancelled, const char *stderr_tail, size_t len)
{
    if (st.exited && st.exit_code == 0)
        return TASK_DONE;
    if (cancelled)
        return TASK_CANCELLED;
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
