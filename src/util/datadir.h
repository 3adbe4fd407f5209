/* datadir.h — where carma's shipped data files (data/) and its system config are found at run
 * time, for an installed binary and a build-tree one alike. */
#ifndef CARMA_UTIL_DATADIR_H
#define CARMA_UTIL_DATADIR_H

#include <stddef.h>

#include "util/err.h"

/* The data directory, the first of:
 *   $CARMA_DATA_DIR, when set and non-empty;
 *   PREFIX/share/carma for the running binary PREFIX/DIR/NAME, when it exists (an installed
 *   binary: PREFIX/bin/carma reads PREFIX/share/carma, also under a DESTDIR or when moved);
 *   the source tree's data/ (CARMA_SOURCE_DIR "/data", compiled in), when it exists (a binary
 *   of the build tree, whose data is the checkout's, even where an older copy is installed);
 *   the install path compiled in (CARMA_INSTALL_DATADIR). */
const char *carma_data_dir(void);

/* Writes carma_data_dir() + "/" + rel into buf. Returns 0, or -1 (err set) when it does not fit. */
int carma_data_path(const char *rel, char *buf, size_t cap, carma_err *err);

/* A default file of the data directory for an option left out: when *path is NULL, writes
 * carma_data_path(rel) into buf and points *path at it. Returns 0, or -1 (err set). */
int carma_data_default(const char **path, const char *rel, char *buf, size_t cap,
                       carma_err *err);

/* The system config file read when neither --config nor $CARMA_CONFIG names one:
 * $CARMA_SYSTEM_CONFIG when set (tests; "" reads none), else CARMA_SYSCONFDIR "/carma.conf"
 * (compiled in, /etc/carma/carma.conf by default). */
const char *carma_system_config(void);

#endif
