/* fuzz_trace.c — job traces (CSV `seq,submit_offset_s,task_file`, trace_load over csv_load). */
#include "fuzz_common.h"

#include "task/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    trace t;
    carma_err err;
    if (trace_load(fuzz_file(data, size, path), &t, &err) == 0)
        trace_free(&t);
    return 0;
}
