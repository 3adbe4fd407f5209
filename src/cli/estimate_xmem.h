/* estimate_xmem.h — `carma estimate --run`, `--trace` and `--fit-xmem` (estimate.c parses
 * the options). Each returns the command's exit status. */
#ifndef CARMA_CLI_ESTIMATE_XMEM_H
#define CARMA_CLI_ESTIMATE_XMEM_H

#include <stdbool.h>

/* The xmem estimate, with its parts (JSON when json): of the saved trace `trace` when not
 * NULL, else of cmd[0..ncmd) traced up to its iterations-th optimizer step. */
int estimate_run_xmem(bool json, const char *trace, int iterations, char **cmd, int ncmd);

/* The fit on an index of synthetic traces, its grid and its cross-validation over `folds`. */
int estimate_fit_xmem(const char *index, double band, int folds);

#endif
