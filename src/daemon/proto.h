/* proto.h — the wire format between carma's clients and the daemon: one JSON object per
 * line over a Unix socket (docs/protocol.md). A request is {"verb": ..., ...}; a reply is
 * {"ok": true, ...} or {"ok": false, "error": "..."}. Also the submission record that
 * travels in a submit request and is stored as the task's spec. */
#ifndef CARMA_DAEMON_PROTO_H
#define CARMA_DAEMON_PROTO_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "sched/sched.h"
#include "util/err.h"

#define PROTO_MAX_LINE (256 * 1024) /* longest request line the daemon accepts */
#define PROTO_VERSION 1

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
} submission;

void submission_init(submission *s);
void submission_free(submission *s);
/* Parses and validates; every problem is named ("task.ngpus: expected 1..16, got 0"). */
int submission_from_json(const json_t *j, submission *out, carma_err *err);
json_t *submission_to_json(const submission *s);
int submission_add_env(submission *s, const char *kv, carma_err *err);

/* Names of the memory sources in JSON: "oracle", "horus", "faketensor", "gpumemnet", "carma". */
const char *proto_mem_source_name(mem_source src);

/* Replies. */
json_t *proto_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
json_t *proto_ok(void);

/* Serializes j as one line (compact JSON + '\n'); caller frees. */
char *proto_encode_line(const json_t *j, size_t *len);

/* Copies bytes into a JSON string, replacing invalid UTF-8 and NUL with '?'. */
json_t *proto_string_lossy(const char *data, size_t len);

#endif
