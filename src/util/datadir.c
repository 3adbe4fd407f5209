/* datadir.c — see datadir.h. */
#include "util/datadir.h"

#include <stdio.h>
#include <stdlib.h>

#ifndef CARMA_SOURCE_DIR
#define CARMA_SOURCE_DIR "."
#endif

const char *carma_data_dir(void)
{
    const char *env = getenv("CARMA_DATA_DIR");
    return env && *env ? env : CARMA_SOURCE_DIR "/data";
}

int carma_data_path(const char *rel, char *buf, size_t cap, carma_err *err)
{
    int n = snprintf(buf, cap, "%s/%s", carma_data_dir(), rel);
    if (n < 0 || (size_t)n >= cap)
        return carma_err_set(err, "data path too long: %s/%s", carma_data_dir(), rel);
    return 0;
}

int carma_data_default(const char **path, const char *rel, char *buf, size_t cap,
                       carma_err *err)
{
    if (*path)
        return 0;
    if (carma_data_path(rel, buf, cap, err))
        return -1;
    *path = buf;
    return 0;
}
