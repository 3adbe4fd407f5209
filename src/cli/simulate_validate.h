/* simulate_validate.h — `carma simulate --validate`: the simulator against the real AEGIS runs. */
#ifndef CARMA_CLI_SIMULATE_VALIDATE_H
#define CARMA_CLI_SIMULATE_VALIDATE_H

#include <stdbool.h>

#include "config/config.h"
#include "util/err.h"

/* Simulates data/traces/aegis_{philly,saturn,venus}_60.csv under exclusive, oracle-magm,
 * or-magm, est-magm, horus and lucid with `cfg` (normally data/aegis.conf) and prints each
 * figure next to the real run's: a table, or with `json` an array of objects. `source` says
 * in the table's header where cfg came from ("data/aegis.conf", a --config, "... with --set"). */
int simulate_validate(const carma_config *cfg, const char *source, bool json, carma_err *err);

#endif
