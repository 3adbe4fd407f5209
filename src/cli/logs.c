/* logs.c — `carma logs ID [--follow] [--attempt N]`: a task's stdout and stderr (its latest
 * attempt, or attempt N); followed, on through each relaunch until the task has ended. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/logs.h"
#include "cli/request.h"
#include "cli/wait.h"
#include "util/strutil.h"

static const char usage[] =
    "usage: carma logs [--follow] [--attempt N] [--socket PATH] [--json] ID\n\n"
    "Prints the latest attempt's stdout (to stdout) and stderr (to stderr), or attempt N's\n"
    "(`carma show ID` lists them). Only the task's owner or root may read them. Another\n"
    "user's output bound for a terminal has its control characters shown escaped (ESC as\n"
    "\\x1b), newlines and tabs kept; a pipe or a file gets the text as written, but for\n"
    "bytes that are not UTF-8 (and NULs), which come as '?' (the daemon sends text as\n"
    "JSON). --json prints {\"stdout\", \"stderr\", \"attempt\"}: the attempt's number, null\n"
    "for a task not started (with --follow: the last one's, the text every attempt's).\n\n"
    "  --follow, -f    keep printing as the task writes, until it ends: through each\n"
    "                  relaunch (an out-of-memory retry), announced on stderr as\n"
    "                  \"== attempt N\"; through a restart of the daemon too (it is\n"
    "                  asked again for up to 30 s)\n"
    "  --attempt N     this attempt's output (1 is the first launch)\n" REQUEST_USAGE;

int logs_fetch(const request_args *a, long long id, const char *stream, json_int_t *offset,
               int *attempt, bool *eof, json_t **data, log_task *task)
{
    json_t *req = json_pack("{sssIsssI}", "verb", "logs", "id", (json_int_t)id, "stream",
                            stream, "offset", *offset);
    if (*attempt)
        json_object_set_new(req, "attempt", json_integer(*attempt));
    /* a follower the daemon has answered is patient with it: a restart keeps the task */
    carma_err err;
    json_t *reply = request_call_patient(a, req, INFINITY,
                                         task && task->patient ? REQUEST_PATIENCE_S : 0, &err);
    if (!reply)
        return cli_fail(a->cmd, &err);
    if (task)
        task->patient = task->follow;
    *attempt = (int)json_integer_value(json_object_get(reply, "attempt"));
    *offset = json_integer_value(json_object_get(reply, "offset"));
    *eof = json_is_true(json_object_get(reply, "eof"));
    *data = json_incref(json_object_get(reply, "data"));
    if (task) {
        const char *state = json_string_value(json_object_get(reply, "state"));
        task->attempts = (int)json_integer_value(json_object_get(reply, "attempts"));
        task->ended = !state || !wait_state_live(state);
        json_t *uid = json_object_get(reply, "uid");
        task->uid = json_is_integer(uid) ? json_integer_value(uid) : -1;
    }
    json_decref(reply);
    return 0;
}

/* One stream of an ended task's latest attempt (or attempt `which`) into a new file of ours
 * (never through a link, never over an existing file). */
static int save_stream(const request_args *a, long long id, int64_t which, const char *stream,
                       const char *path, carma_err *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return carma_err_set(err, "cannot create %s: %s", path, strerror(errno));
    json_int_t offset = 0;
    int attempt = (int)which, rc = 0;
    bool eof = false;
    while (!eof && rc == 0) {
        json_t *data = NULL;
        if (logs_fetch(a, id, stream, &offset, &attempt, &eof, &data, NULL)) {
            rc = carma_err_set(err, "cannot read task %lld's %s from the daemon", id, stream);
            break;
        }
        size_t n = json_string_length(data);
        const char *p = json_string_value(data);
        for (size_t done = 0; done < n && rc == 0;) {
            ssize_t w = write(fd, p + done, n - done);
            if (w < 0 && errno != EINTR)
                rc = carma_err_set(err, "cannot write %s: %s", path, strerror(errno));
            done += w > 0 ? (size_t)w : 0;
        }
        json_decref(data);
        if (n == 0)
            break; /* nothing more now; an ended task's log does not grow */
    }
    if (close(fd) && rc == 0)
        rc = carma_err_set(err, "cannot write %s: %s", path, strerror(errno));
    if (rc)
        unlink(path); /* no half-written copy left to be taken for the whole */
    return rc;
}

int logs_save(const request_args *a, long long id, int64_t which, const char *out_path,
              const char *err_path, carma_err *err)
{
    if (save_stream(a, id, which, "stdout", out_path, err))
        return -1;
    if (save_stream(a, id, which, "stderr", err_path, err)) {
        unlink(out_path); /* both or neither */
        return -1;
    }
    return 0;
}

/* A chunk of a task's output to the reader's stdout or stderr. Another user's output bound
 * for a terminal (root reading a user's task) has its control characters made visible,
 * newlines and tabs kept: its escape sequences would otherwise act on root's terminal (retitle
 * it, clear it, answer queries as typed input). A pipe or a file gets the bytes as written. */
static void print_output(const char *text, size_t n, FILE *to, const log_task *task)
{
    char *shown = NULL;
    if (n > 0 && task->uid != (long long)geteuid() && isatty(fileno(to)))
        shown = str_escape_controls_text(text);
    if (shown)
        fputs(shown, to);
    else
        fwrite(text, 1, n, to);
    free(shown);
    fflush(to);
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
        if (opt == 'n' && cli_int_arg("logs", "--attempt", a->arg, 1, INT32_MAX, &which))
            return EXIT_USAGE;
    }
    if (opt < 0)
        return a->status;
    if ((rc = request_task_id_operand(a, &id)) != 0)
        return rc;
    static const char *const streams[2] = {"stdout", "stderr"};
    json_int_t offset[2] = {0, 0};
    /* the attempt both streams read: --attempt's, else the latest (0) until the first reply
     * names it; a follower then reads each later one in turn */
    int attempt = (int)which;
    bool eof[2] = {false, false};
    json_t *collected = a->opts.json ? json_object() : NULL;
    log_task task = {.attempts = 0, .ended = true, .uid = -1, .follow = follow};
    for (;;) {
        bool progress = false;
        for (int s = 0; s < 2; s++) {
            for (;;) {
                json_t *data = NULL;
                if ((rc = logs_fetch(a, id, streams[s], &offset[s], &attempt, &eof[s], &data,
                                     &task))) {
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
                    print_output(json_string_value(data), n, s ? stderr : stdout, &task);
                }
                json_decref(data);
                progress |= n > 0;
                if (n == 0 || eof[s])
                    break;
            }
        }
        if (!follow)
            break;
        if (eof[0] && eof[1]) {
            /* all of the attempt asked for, or of an ended task's last one */
            if (which || (task.ended && task.attempts <= attempt))
                break;
            if (task.attempts > attempt) {
                /* relaunched (maybe more than once since the last look): the next attempt */
                attempt++;
                offset[0] = offset[1] = 0;
                eof[0] = eof[1] = false;
                if (!collected)
                    fprintf(stderr, "== attempt %d\n", attempt);
                continue;
            }
            /* else it waits to be relaunched (the recovery queue) */
        }
        if (!progress) {
            struct timespec ts = {0, 300 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    /* nothing printed is not the same as a task that printed nothing; a follower too ends
     * on a task cancelled before it started */
    if (task.attempts == 0 && !collected)
        fprintf(stderr, "carma logs: task %lld %s: no output\n", (long long)id,
                task.ended ? "ended without starting" : "has not started yet");
    if (collected) {
        /* which attempt the text is of (followed: the last); none yet is unknown, not 0 */
        json_object_set_new(collected, "attempt",
                            task.attempts > 0 && attempt > 0 ? json_integer(attempt)
                                                             : json_null());
        cli_print_json(collected);
        json_decref(collected);
    }
    return 0;
}

const request_cmd cmd_logs = {.usage = usage, .shortopts = "f", .longopts = longopts, .run = run};
