/* fuzz_rad.c — CARMA's .rad task files (rad_parse), as `carma submit` and the simulator read
 * them. */
#include "fuzz_common.h"

#include "task/rad.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    task_spec t;
    carma_err err;
    if (rad_parse("fuzz.rad", (const char *)data, size, &t, &err) == 0) {
        if (task_spec_validate(&t, "fuzz.rad", &err))
            abort(); /* accepted, yet not a valid task */
        task_spec_free(&t);
    }
    return 0;
}
