/* fuzz_config.c — config files (`key = value` lines, config_load_file) and their validation.
 * What loads must be valid, and `carma config`'s output of it must load back as the same
 * configuration (config.h promises both): any difference aborts. */
#include "fuzz_common.h"

#include "config/config.h"

/* config_write's text of cfg (malloc'd), or abort. */
static char *written(const carma_config *cfg, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (!f)
        abort();
    config_write(cfg, f);
    if (fclose(f))
        abort();
    return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    carma_config cfg, again;
    carma_err err;
    config_defaults(&cfg);
    if (config_load_file(&cfg, fuzz_file(data, size, path), &err))
        return 0;
    if (config_validate(&cfg, &err))
        abort(); /* loaded, yet not valid */
    size_t len, len2;
    char *text = written(&cfg, &len);
    config_defaults(&again);
    if (config_load_file(&again, fuzz_file((const uint8_t *)text, len, path), &err)) {
        fprintf(stderr, "written config does not load back: %s\n", err.msg);
        abort();
    }
    char *text2 = written(&again, &len2);
    if (len != len2 || memcmp(text, text2, len)) {
        fprintf(stderr, "written config loads back differently\n");
        abort();
    }
    free(text);
    free(text2);
    return 0;
}
