/* fuzz_config.c — config files (`key = value` lines, config_load_file) and their validation. */
#include "fuzz_common.h"

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    carma_config cfg;
    carma_err err;
    config_defaults(&cfg);
    config_load_file(&cfg, fuzz_file(data, size, path), &err);
    return 0;
}
