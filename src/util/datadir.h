/* datadir.h — where carma's shipped data files (data/) are found at run time. */
#ifndef CARMA_UTIL_DATADIR_H
#define CARMA_UTIL_DATADIR_H

#include <stddef.h>

#include "util/err.h"

/* The data directory: $CARMA_DATA_DIR when set and non-empty, else the source tree's data/
 * (CARMA_SOURCE_DIR "/data", compiled in). */
const char *carma_data_dir(void);

/* Writes carma_data_dir() + "/" + rel into buf. Returns 0, or -1 (err set) when it does not fit. */
int carma_data_path(const char *rel, char *buf, size_t cap, carma_err *err);

/* A default file of the data directory for an option left out: when *path is NULL, writes
 * carma_data_path(rel) into buf and points *path at it. Returns 0, or -1 (err set). */
int carma_data_default(const char **path, const char *rel, char *buf, size_t cap,
                       carma_err *err);

#endif
