/* fuzz_oomtail.c — an ended attempt's stderr tail (the task's own output, so anyone's): its
 * out-of-memory classification and the demand read from PyTorch's message, on the raw bytes
 * (the tail is not NUL-terminated). */
#include "fuzz_common.h"

#include "daemon/oomclass.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of exactly `size` bytes, so that reading past the end is caught */
    char *tail = malloc(size ? size : 1);
    if (!tail)
        abort();
    memcpy(tail, data, size);
    uint64_t mib;
    (void)oom_demand_mib(tail, size, &mib);
    (void)oom_classify((exit_status){true, 1, 0}, false, tail, size);
    free(tail);
    return 0;
}
