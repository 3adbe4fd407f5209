/* logs.c — `carma logs ID [--follow] [--attempt N]`: a task's stdout and stderr (its latest
 * attempt, or attempt N). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/commands.h"
#include "cli/request.h"
#include "util/strutil.h"

static const char usage[] =
    "usage: carma logs [--follow] [--attempt N] [--socket PATH] [--json] ID\n\n"
    "Prints the latest attempt's stdout (to stdout) and stderr (to stderr), or attempt N's\n"
    "(`carma show ID` lists them). Only the task's owner or root may read them.\n\n"
    "  --follow, -f    keep printing as the task writes, until it ends\n"
    "  --attempt N     this attempt's output (1 is the first launch)\n" REQUEST_USAGE;

/* Reads one chunk of a stream from offset; *eof when the attempt ended and all was read. */
static int fetch(const request_args *a, long long id, const char *stream, json_int_t *offset,
                 int *attempt, bool *eof, json_t **data, int64_t which)
{
    json_t *reply, *req = json_pack("{sssIsssI}", "verb", "logs", "id", (json_int_t)id, "stream",
                                    stream, "offset", *offset);
    if (which)
        json_object_set_new(req, "attempt", json_integer(which));
    int rc = request_send(a, req, &reply);
    if (rc)
        return rc;
    int att = (int)json_integer_value(json_object_get(reply, "attempt"));
    if (att != *attempt && *attempt != 0) {
        /* a relaunch started a new attempt: start its logs from the beginning */
        *attempt = att;
        *offset = 0;
        *eof = false;
        *data = json_string("");
        json_decref(reply);
        return 0;
    }
    *attempt = att;
    *offset = json_integer_value(json_object_get(reply, "offset"));
    *eof = json_is_true(json_object_get(reply, "eof"));
    *data = json_incref(json_object_get(reply, "data"));
    json_decref(reply);
    return 0;
}

static const struct option longopts[] = {
    {"follow", no_argument, NULL, 'f'},
    {"attempt", required_argument, NULL, 'n'},
    {NULL, 0, NULL, 0},
};

static int run(request_args *a)
{
    bool follow = false;
    long long id;
    int opt, rc;
    int64_t which = 0;
    while ((opt = request_next_option(a)) > 0) {
        follow |= opt == 'f';
        if (opt == 'n' && (parse_i64(a->arg, &which) || which < 1 || which > INT32_MAX))
            return cli_usage_error("logs", "--attempt: expected an attempt number (1, 2, ...), "
                                           "got '%s'", a->arg);
    }
    if (opt < 0)
        return a->status;
    if ((rc = request_task_id_operand(a, &id)) != 0)
        return rc;
    static const char *const streams[2] = {"stdout", "stderr"};
    json_int_t offset[2] = {0, 0};
    int attempt[2] = {0, 0};
    bool eof[2] = {false, false};
    json_t *collected = a->opts.json ? json_object() : NULL;
    for (;;) {
        bool progress = false;
        for (int s = 0; s < 2; s++) {
            while (!eof[s]) {
                json_t *data = NULL;
                if ((rc = fetch(a, id, streams[s], &offset[s], &attempt[s], &eof[s], &data,
                                which))) {
                    json_decref(collected);
                    return rc;
                }
                size_t n = json_string_length(data);
                if (collected) {
                    json_t *prev = json_object_get(collected, streams[s]);
                    char *joined = NULL;
                    size_t plen = prev ? json_string_length(prev) : 0;
                    joined = malloc(plen + n + 1);
                    if (joined) {
                        memcpy(joined, prev ? json_string_value(prev) : "", plen);
                        memcpy(joined + plen, json_string_value(data), n);
                        json_object_set_new(collected, streams[s],
                                            json_stringn(joined, plen + n));
                        free(joined);
                    }
                } else {
                    fwrite(json_string_value(data), 1, n, s ? stderr : stdout);
                    fflush(s ? stderr : stdout);
                }
                json_decref(data);
                progress |= n > 0;
                if (n == 0)
                    break;
            }
        }
        if (!follow || (eof[0] && eof[1]))
            break;
        if (!progress) {
            struct timespec ts = {0, 300 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    if (collected) {
        cli_print_json(collected);
        json_decref(collected);
    }
    return 0;
}

const request_cmd cmd_logs = {.usage = usage, .shortopts = "f", .longopts = longopts, .run = run};
