/* rad.h — CARMA's positional `.rad` task files (carma-spec §2.1), read strictly.
 *
 * One field per line, no keys. Lines (1-based):
 *    1 comment (ignored)              7 collocation mode (kept, never acted on)
 *    2 `conda activate ENV`           8 GPUs, an integer 1..SCHED_MAX_TASK_GPUS
 *    3 the training command           9 measured peak memory, MiB (the oracle figure)
 *    4 model summary file name       10 Horus estimate, MiB      (optional)
 *    5 dataset                       11 FakeTensor estimate, MiB (optional)
 *    6 batch size, an integer >= 1   12 GPUMemNet estimate, MiB  (optional)
 *
 * Lines 1-9 are required; 10-12 may be left out from the end (a file with 10 lines has only the
 * Horus figure). Memory figures are numbers >= 0 truncated to whole MiB, as the reference's
 * int(float(x)), the measured peak at least 1 (no task runs in no memory; the daemon refuses
 * 0); 40000 ("capped / unavailable" in the reference's data) is kept as a figure.
 * The command is line 3. The reference takes "the first line containing `python`", which is
 * line 3 in every one of its 52 files; carma does not search, so a comment mentioning python
 * cannot become the command, and non-Python commands work.
 * Rejected: missing or empty required lines, non-numeric or negative numbers, trailing text
 * after a number, a fractional GPU count, text after line 12, control characters (binary
 * files), a carriage return not before a newline (old Mac line ends: said so), lines over
 * RAD_MAX_LINE bytes and files over RAD_MAX_BYTES. A UTF-8 byte-order mark, CRLF line ends and
 * blank lines at the end of the file are accepted.
 */
#ifndef CARMA_CORE_RAD_H
#define CARMA_CORE_RAD_H

#include <stddef.h>

#include "task/task.h"
#include "util/err.h"

#define RAD_MAX_BYTES (64 * 1024)
#define RAD_MAX_LINE 8192
#define RAD_REQUIRED_LINES 9
#define RAD_MAX_LINES 12

/* Parses .rad text of `len` bytes; `name` (the file path) appears in messages and becomes the
 * task's source_path, its last path component the task's name. On error *out is left empty. */
int rad_parse(const char *name, const char *text, size_t len, task_spec *out, carma_err *err);
/* Reads and parses a .rad file. */
int rad_load(const char *path, task_spec *out, carma_err *err);

#endif
