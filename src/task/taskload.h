/* taskload.h — reads a task file of either kind, chosen by its extension:
 * `.rad` (CARMA's positional format, rad.h) or `.yaml` / `.yml` (carma's keyed format,
 * taskfile.h). Any other extension is an error that names both kinds. A relative workdir is
 * taken as relative to the task file's directory (the spec holds the joined path). */
#ifndef CARMA_CORE_TASKLOAD_H
#define CARMA_CORE_TASKLOAD_H

#include <stdbool.h>

#include "task/task.h"
#include "util/err.h"

int task_load_file(const char *path, task_spec *out, carma_err *err);

/* Whether path names a task file by its extension (.rad, .yaml, .yml, in any case), as
 * task_load_file reads it. */
bool task_file_name(const char *path);

#endif
