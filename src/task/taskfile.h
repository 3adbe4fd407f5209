/* taskfile.h — carma's own keyed task files (YAML), for users who write tasks by hand.
 *
 *     name: resnet18-cifar100          # default: the file name without extension
 *     command: python train.py --epochs 20    # or a list: [python, train.py, --epochs, "20"]
 *     workdir: /home/me/project
 *     env: {CUDA_CACHE_DISABLE: "1"}
 *     gpus: 1                          # 1..SCHED_MAX_TASK_GPUS, default 1
 *     memory: 788                      # measured peak: MiB, or "20G", "512M"
 *     estimates: {horus: 2231, faketensor: 54, gpumemnet: 8G}
 *     summary: resnet18_cifar100.model
 *     batch_size: 32
 *     max_retries: 3                   # default: the config's retry_cap
 *     sim: {solo_runtime_s: 588, smact: 0.4, smocc: 0.2, drama: 0.1}
 *
 * Only `command` is required. Unknown keys, duplicate keys, wrong types and out-of-range values
 * are errors naming the file, the line and the key; so are a second document, YAML tags other
 * than !!str, !!seq and !!map, nesting deeper than 16 and aliases repeating more than
 * TASKFILE_MAX_BYTES of values.
 */
#ifndef CARMA_CORE_TASKFILE_H
#define CARMA_CORE_TASKFILE_H

#include <stddef.h>

#include "task/task.h"
#include "util/err.h"

#define TASKFILE_MAX_BYTES (1024 * 1024)

/* Parses YAML text; `name` (the path) is used in messages and as the source path. */
int taskfile_parse(const char *name, const char *text, size_t len, task_spec *out,
                   carma_err *err);
int taskfile_load(const char *path, task_spec *out, carma_err *err);

#endif
