/* nvml_procs.c — NVML process lists into gpu_proc records (see nvml_procs.h). */
#include "gpu/nvml_procs.h"

#include <stdlib.h>
#include <string.h>

#define RECORD_MAX NVML_PROCESS_INFO_CC_SIZE

size_t nvml_proc_stride(nvml_proc_layout layout, const unsigned char *buf, unsigned count)
{
    if (layout == NVML_PROCS_V1)
        return sizeof(nvmlProcessInfo_v1_t);
    if (layout == NVML_PROCS_V2 || count == 0)
        return sizeof(nvmlProcessInfo_v2_t);
    for (size_t i = sizeof(nvmlProcessInfo_v2_t) * count; i < (size_t)RECORD_MAX * count; i++)
        if (buf[i] != NVML_PROC_SENTINEL)
            return RECORD_MAX;
    return sizeof(nvmlProcessInfo_v2_t);
}

/* Rounded up without adding first: b + 1 MiB - 1 wraps for a count within 1 MiB of 2^64
 * (beside NVML_VALUE_NOT_AVAILABLE), and the process would show 0 MiB. */
static uint64_t bytes_to_mib_ceil(unsigned long long b)
{
    return (uint64_t)((b >> 20) + ((b & ((1ULL << 20) - 1)) != 0));
}

/* false when a process was left out for want of room in out */
static bool append_records(const unsigned char *buf, unsigned count, size_t stride,
                           gpu_proc *out, int *n, int max)
{
    for (unsigned i = 0; i < count; i++) {
        /* pid and usedGpuMemory sit at the same offsets in every record version */
        nvmlProcessInfo_v1_t rec;
        memcpy(&rec, buf + (size_t)i * stride, sizeof rec);
        bool seen = false;
        for (int j = 0; j < *n; j++)
            seen |= out[j].pid == (pid_t)rec.pid;
        if (seen)
            continue;
        if (*n >= max)
            return false;
        gpu_proc *p = &out[(*n)++];
        p->pid = (pid_t)rec.pid;
        p->used_known = rec.usedGpuMemory != NVML_VALUE_NOT_AVAILABLE_ULL;
        p->used_mib = p->used_known ? bytes_to_mib_ceil(rec.usedGpuMemory) : 0;
    }
    return true;
}

nvmlReturn_t nvml_read_proc_list(nvml_procs_fn fn, nvml_proc_layout layout, nvmlDevice_t dev,
                                 gpu_proc *out, int *n, int max)
{
    if (!fn)
        return NVML_ERROR_FUNCTION_NOT_FOUND;
    unsigned count = 0;
    nvmlReturn_t rc = fn(dev, &count, NULL);
    if (rc == NVML_SUCCESS)
        return rc; /* no processes */
    if (rc != NVML_ERROR_INSUFFICIENT_SIZE)
        return rc;
    /* The list can grow between the two calls: leave room and retry a few times. */
    for (int attempt = 0; attempt < 4; attempt++) {
        unsigned cap = count + 8;
        unsigned char *buf = malloc((size_t)cap * RECORD_MAX);
        if (!buf)
            return NVML_ERROR_UNKNOWN;
        memset(buf, NVML_PROC_SENTINEL, (size_t)cap * RECORD_MAX);
        count = cap;
        rc = fn(dev, &count, buf);
        if (rc == NVML_SUCCESS) {
            if (count > cap)
                count = cap;
            /* a list cut short is not known: a process left out could be anyone's */
            if (!append_records(buf, count, nvml_proc_stride(layout, buf, count), out, n, max))
                rc = NVML_ERROR_INSUFFICIENT_SIZE;
        }
        free(buf);
        if (rc != NVML_ERROR_INSUFFICIENT_SIZE || *n >= max)
            return rc;
    }
    return rc;
}
