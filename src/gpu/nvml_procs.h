/* nvml_procs.h — reading NVML's running-process lists safely: size query, retry on growth, and
 * the record stride of the _v3 symbol probed with a sentinel (drivers 535.43-535.86 wrote 32-byte
 * records where the header says 24). */
#ifndef CARMA_GPU_NVML_PROCS_H
#define CARMA_GPU_NVML_PROCS_H

#include <stddef.h>

#include "gpu/backend.h"
#include "gpu/nvml_lib.h"

#define NVML_PROC_SENTINEL 0xA5

/* The record stride of a filled buffer: `count` records written into a buffer prefilled with
 * NVML_PROC_SENTINEL and large enough for 32-byte records. For V1/V2 the stride is fixed (16,
 * 24); for V3 it is 24 when the bytes a 32-byte writer would have used past 24*count are still
 * the sentinel, else 32. */
size_t nvml_proc_stride(nvml_proc_layout layout, const unsigned char *buf, unsigned count);

/* Appends the processes of one list to out[*n..max), skipping pids an earlier list put there;
 * a pid this list gives once per MIG instance (a GPU in MIG mode) gets the sum of their
 * memory, unknown if any part is. Returns the NVML return code of the query (NVML_SUCCESS
 * when the list was read), and NVML_ERROR_INSUFFICIENT_SIZE when out had no room for all of
 * it (the list is then not known). */
nvmlReturn_t nvml_read_proc_list(nvml_procs_fn fn, nvml_proc_layout layout, nvmlDevice_t dev,
                                 gpu_proc *out, int *n, int max);

#endif
