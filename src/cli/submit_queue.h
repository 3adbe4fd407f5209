/* submit_queue.h — `carma submit`'s queue controls (--after, --afterok, --hold, --priority,
 * --time, --array, --clean-env): read from the command line, then applied to the submission
 * once it is complete. */
#ifndef CARMA_CLI_SUBMIT_QUEUE_H
#define CARMA_CLI_SUBMIT_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/proto.h"
#include "util/err.h"

enum { OPT_AFTER = 0x200, OPT_AFTEROK, OPT_HOLD, OPT_PRIORITY, OPT_TIME, OPT_ARRAY, OPT_CLEAN_ENV };

#define MAX_ARRAY 1000 /* tasks in one --array */

typedef struct queue_ctl {
    uint64_t after[SUB_MAX_DEPS], afterok[SUB_MAX_DEPS];
    size_t nafter, nafterok;
    bool hold, clean_env;
    int priority;
    int64_t time_limit_s;
    int array[MAX_ARRAY];
    size_t narray; /* 0: no --array */
} queue_ctl;

/* One queue-control option (OPT_*) into *qc; 0, or a usage error's exit status (said). */
int queue_ctl_option(int opt, const char *arg, queue_ctl *qc);

/* The dependencies, hold, priority and time limit asked for, onto sub; 0, or -1 with err. */
int queue_ctl_apply(const queue_ctl *qc, submission *sub, carma_err *err);

#endif
