/* views.h — the tables `queue` and `gpus` print, shared with `top`, which shows both live.
 * User-chosen strings in them (names, users) are printed with their control characters made
 * visible. */
#ifndef CARMA_CLI_VIEWS_H
#define CARMA_CLI_VIEWS_H

#include <jansson.h>

/* queue.c: the header, and one task of a queue reply. */
void queue_print_header(void);
void queue_print_task(const json_t *t);
/* gpus.c: a gpus reply's GPUs, each with the tasks it holds. */
void gpus_print_table(const json_t *gpus);
/* gpus.c: a gpus reply's GPUs as --json prints them (gpus, top): an array, each GPU with the
 * reply's `backend` and `mps_pipe_dir` added (null when the reply has none). A new reference. */
json_t *gpus_json(const json_t *reply);

#endif
