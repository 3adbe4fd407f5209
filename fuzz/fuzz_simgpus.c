/* fuzz_simgpus.c — the sim backend's inputs: a --sim-gpus spec (fakegpu_parse_spec) and the
 * shared state file its fake jobs register in (fakegpu_state_read). */
#include "fuzz_common.h"

#include "gpu/fakegpu_state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static fakegpu_state st; /* large: kept off the stack */
    carma_err err;
    char *text = fuzz_text(data, size);
    fakegpu_parse_spec(text, &st, &err);
    free(text);
    char path[64];
    fakegpu_state_read(fuzz_file(data, size, path), &st, &err);
    return 0;
}
