/* pages.h — a listing fetched from the daemon a page at a time (pages.c). */
#ifndef CARMA_CLI_PAGES_H
#define CARMA_CLI_PAGES_H

#include <jansson.h>
#include <stdint.h>

#include "cli/cli.h"
#include "cli/request.h"

/* Sends `base` (not consumed) with "limit" (what is left of `limit`; 0: none) and "after"
 * until the daemon has no next page or `limit` tasks came; prints header() then row() for each
 * task, or with --json one array of them all. `cmd` names the command in messages. */
int request_pages(const request_args *a, const char *cmd, const json_t *base, int64_t limit,
                  int64_t after, void (*header)(void), void (*row)(const json_t *));

#endif
