/* proto.h — the wire format between carma's clients and the daemon: one JSON object per
 * line over a Unix socket (docs/protocol.md). A request is {"verb": ..., ...}; a reply is
 * {"ok": true, ...} or {"ok": false, "error": "..."}. Also the submission record that
 * travels in a submit request and is stored as the task's spec. */
#ifndef CARMA_DAEMON_PROTO_H
#define CARMA_DAEMON_PROTO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched/sched.h"
#include "util/err.h"

#define PROTO_MAX_LINE (256 * 1024) /* longest request line the daemon accepts */
#define PROTO_VERSION 2 /* 2: submit takes a batch, "tasks" */
#define PROTO_MAX_ARRAY 1000 /* tasks in one submitted array (carma submit --array) */

/* A task this one waits for (submit --after, --afterok). */
typedef struct sub_dep {
    uint64_t id;
    bool ok; /* afterok: only when it ended done (else this task is cancelled) */
} sub_dep;

/* Bounds on what one submission carries: the environment is the submitter's whole one, and
 * the daemon keeps it in memory and in its database for as long as the task lives. */
#define SUB_MAX_ENV_VARS 1024
#define SUB_MAX_ENV_BYTES (128 * 1024) /* "KEY=VALUE" lengths, plus one each */
#define SUB_MAX_DEPS 64
#define SUB_MAX_PRIORITY 1000000 /* |priority| */
#define SUB_MAX_TIME_S (366LL * 86400) /* a year */
/* Bounds on a new submission's text fields (submission_check_new). A command is one argument
 * of /bin/sh -c, which Linux caps at 128 KiB (MAX_ARG_STRLEN): 2 KiB of it are left for what
 * carma wraps it in (exec, conda activate). A path is at most PATH_MAX - 1 bytes. */
#define SUB_MAX_NAME 255
#define SUB_MAX_COMMAND (126 * 1024)
#define SUB_MAX_PATH 4095

/* What a submitter asks to run. The submitter's identity is not part of it: the daemon takes
 * that from the socket. */
typedef struct submission {
    char *name;
    char *command;      /* run with /bin/sh -c */
    char *cwd;          /* absolute; the task's working directory */
    char **env;         /* "KEY=VALUE" */
    size_t nenv;
    int ngpus;          /* 1..SCHED_MAX_TASK_GPUS */
    mem_figures mem;    /* per-source figures in MiB */
    int max_retries;    /* -1 = the config's retry_cap */
    char *summary;      /* model summary path, NULL if none */
    int batch;          /* 0 = unknown */
    char *source;       /* the task file it came from, NULL if none */
    char *conda_env;    /* run under `conda activate` of this environment, NULL if none */
    sub_dep *deps;      /* tasks it waits for, NULL if none */
    size_t ndeps;
    int64_t time_limit_s; /* each attempt is cancelled after this long (timeout); 0 none */
    int array_index;    /* its index in a submitted array (CARMA_ARRAY_INDEX); -1 none */
    int priority;       /* as submitted: higher goes ahead in the main queue; default 0 */
    bool hold;          /* as submitted: held until released */
} submission;

void submission_init(submission *s);
void submission_free(submission *s);
/* Parses and validates; every problem is named ("task.ngpus: expected 1..16, got 0"). */
int submission_from_json(const json_t *j, submission *out, carma_err *err);
/* The bounds a new submission keeps, beyond submission_from_json's: a name of 1..SUB_MAX_NAME
 * bytes, a command of at most SUB_MAX_COMMAND, paths (cwd, summary, source) of at most
 * SUB_MAX_PATH. Checked at submission only: a stored task is read back as it was accepted. */
int submission_check_new(const submission *s, carma_err *err);
json_t *submission_to_json(const submission *s);
int submission_add_env(submission *s, const char *kv, carma_err *err);
int submission_add_dep(submission *s, uint64_t id, bool ok, carma_err *err);
/* True for a variable carma sets for every task itself, which a submitted environment never
 * sets: CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, CUDA_MPS_*,
 * CARMA_TASK_ID, CARMA_ATTEMPT, CARMA_ARRAY_INDEX, CARMA_SIM_STATE (docs/protocol.md). */
bool submission_env_reserved(const char *kv);

/* Names of the memory sources in JSON: "oracle", "horus", "faketensor", "gpumemnet", "carma". */
const char *proto_mem_source_name(mem_source src);

/* Replies. */
json_t *proto_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
json_t *proto_ok(void);

/* Serializes j as one line (compact JSON + '\n'); caller frees. */
char *proto_encode_line(const json_t *j, size_t *len);

/* Copies bytes into a JSON string, replacing invalid UTF-8 and NUL with '?'. */
json_t *proto_string_lossy(const char *data, size_t len);

/* len, less an incomplete UTF-8 sequence at data's end (a lead byte and fewer continuation
 * bytes than it announces: 1 to 3 bytes), where a chunk of a longer text is cut so that no
 * character is split in two. */
size_t proto_utf8_whole(const char *data, size_t len);

#endif
