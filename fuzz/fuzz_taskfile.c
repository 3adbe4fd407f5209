/* fuzz_taskfile.c — YAML task files (taskfile_parse, through libyaml). */
#include "fuzz_common.h"

#include "task/taskfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    task_spec t;
    carma_err err;
    if (taskfile_parse("fuzz.yaml", (const char *)data, size, &t, &err) == 0) {
        if (task_spec_validate(&t, "fuzz.yaml", &err))
            abort(); /* accepted, yet not a valid task */
        task_spec_free(&t);
    }
    return 0;
}
