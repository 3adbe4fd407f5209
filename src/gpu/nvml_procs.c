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

/* nvml.h: a record's gpuInstanceId and computeInstanceId with MIG off */
#define NO_INSTANCE 0xFFFFFFFFu

typedef struct proc_record {
    unsigned pid;
    unsigned long long used; /* bytes, or NVML_VALUE_NOT_AVAILABLE */
    unsigned gi, ci;         /* NO_INSTANCE with MIG off, or in a record without them (v1) */
} proc_record;

static proc_record record_at(const unsigned char *buf, unsigned i, size_t stride)
{
    /* pid and usedGpuMemory sit at the same offsets in every record version, the instance
     * ids in every one but v1's */
    nvmlProcessInfo_v2_t r = {.gpuInstanceId = NO_INSTANCE, .computeInstanceId = NO_INSTANCE};
    memcpy(&r, buf + (size_t)i * stride, stride < sizeof r ? stride : sizeof r);
    return (proc_record){r.pid, r.usedGpuMemory, r.gpuInstanceId, r.computeInstanceId};
}

/* Whether record i is its pid's entry for a MIG instance that no earlier record of the list
 * gave: on a GPU in MIG mode the parent device lists a process once per instance it runs on,
 * each entry with that instance's memory (nvml.h: aggregate information across instances).
 * Without MIG a pid listed again repeats its entry, which holds all of its memory. */
static bool another_instance(const unsigned char *buf, unsigned i, size_t stride)
{
    proc_record r = record_at(buf, i, stride);
    if (r.gi == NO_INSTANCE)
        return false;
    for (unsigned k = 0; k < i; k++) {
        proc_record o = record_at(buf, k, stride);
        if (o.pid == r.pid && o.gi == r.gi && o.ci == r.ci)
            return false;
    }
    return true;
}

/* Appends the records to out; a pid already there from an earlier list (the compute list,
 * before the MPS clients') keeps its entry, one listed for several MIG instances gets their
 * sum. false when a process was left out for want of room in out. */
static bool append_records(const unsigned char *buf, unsigned count, size_t stride,
                           gpu_proc *out, int *n, int max)
{
    int earlier = *n;
    for (unsigned i = 0; i < count; i++) {
        proc_record rec = record_at(buf, i, stride);
        bool known = rec.used != NVML_VALUE_NOT_AVAILABLE_ULL;
        uint64_t mib = known ? bytes_to_mib_ceil(rec.used) : 0;
        int j = 0;
        while (j < *n && out[j].pid != (pid_t)rec.pid)
            j++;
        if (j < earlier)
            continue;
        if (j < *n) {
            if (!another_instance(buf, i, stride))
                continue;
            gpu_proc *p = &out[j];
            p->used_known = p->used_known && known; /* a part unknown: the sum is unknown */
            p->used_mib = p->used_known ? p->used_mib + mib : 0;
            continue;
        }
        if (*n >= max)
            return false;
        out[(*n)++] = (gpu_proc){.pid = (pid_t)rec.pid, .used_mib = mib, .used_known = known};
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
