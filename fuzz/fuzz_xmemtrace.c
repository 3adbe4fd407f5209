/* fuzz_xmemtrace.c — carma_trace traces (mtrace_load), replayed through the caching-allocator
 * model with the shipped coefficients (xmem_estimate_trace): the file a user's tracer run
 * writes and the C side reads back. */
#include "fuzz_common.h"

#include "estimate/xmem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    mtrace_events t;
    carma_err err;
    if (mtrace_load(fuzz_file(data, size, path), &t, &err) == 0) {
        xmem_estimate e;
        xmem_estimate_trace(&t, xmem_default_coeffs(), &e, &err);
        mtrace_free(&t);
    }
    return 0;
}
