/* run_report.c — what `carma run` says of its tasks (run_report.h): a line as each ends, its
 * output kept first when the daemon is a private one that takes it away, and the report at the
 * end. */
#include "cli/run_report.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/fmt.h"
#include "cli/logs.h"
#include "cli/wait.h"

/* Whether dir holds a file named carma-ID-... */
static bool id_used(const char *dir, const char *id)
{
    char prefix[64];
    size_t n = (size_t)snprintf(prefix, sizeof prefix, "carma-%s-", id);
    DIR *d = opendir(dir);
    if (!d)
        return false; /* the files will say why they cannot be made */
    bool used = false;
    for (struct dirent *e; !used && (e = readdir(d)) != NULL;)
        used = !strncmp(e->d_name, prefix, n);
    closedir(d);
    return used;
}

void run_pick_id(run_opts *o, const char *base)
{
    snprintf(o->run_id, sizeof o->run_id, "%s", base);
    for (int k = 2; k < 10000 && id_used(o->output_dir, o->run_id); k++)
        snprintf(o->run_id, sizeof o->run_id, "%s.%d", base, k);
}

/* Keeps one attempt's output (0: the latest) as carma-RUN-ID[SUFFIX].out and .err; their paths
 * go into `into` ("stdout_file", "stderr_file"). A failure is said, and the run goes on. */
static int keep_attempt(const request_args *a, const run_opts *o, long long id, int64_t which,
                        const char *suffix, json_t *into)
{
    char out[PATH_MAX], errp[PATH_MAX];
    int n1 = snprintf(out, sizeof out, "%s/carma-%s-%lld%s.out", o->output_dir, o->run_id, id,
                      suffix);
    int n2 = snprintf(errp, sizeof errp, "%s/carma-%s-%lld%s.err", o->output_dir, o->run_id, id,
                      suffix);
    carma_err err;
    if (n1 < 0 || n2 < 0 || (size_t)n1 >= sizeof out || (size_t)n2 >= sizeof errp)
        carma_err_set(&err, "--output-dir %s is too long a path", o->output_dir);
    else if (logs_save(a, id, which, out, errp, &err) == 0) {
        json_object_set_new(into, "stdout_file", json_string(out));
        json_object_set_new(into, "stderr_file", json_string(errp));
        return 0;
    }
    cli_warn("run", "task %lld's output%s is not kept: %s", id,
             which ? " of an earlier attempt" : "", err.msg);
    return -1;
}

/* Keeps an ended task's output before the private daemon takes it away: the last attempt's
 * as carma-RUN-ID.out/.err, each earlier one's (an out-of-memory crash's traceback, say) as
 * carma-RUN-ID.attemptN.out/.err, listed in t's "earlier_attempts". */
static void keep_logs(const request_args *a, const run_opts *o, json_t *t)
{
    long long id = (long long)json_integer_value(json_object_get(t, "id"));
    json_int_t attempts = json_integer_value(json_object_get(t, "attempts"));
    json_t *earlier = json_array();
    for (json_int_t n = 1; n < attempts && earlier; n++) {
        char suffix[32];
        snprintf(suffix, sizeof suffix, ".attempt%lld", (long long)n);
        json_t *e = json_pack("{sI}", "attempt", n);
        if (e && keep_attempt(a, o, id, n, suffix, e) == 0)
            json_array_append(earlier, e);
        json_decref(e);
    }
    if (earlier && json_array_size(earlier))
        json_object_set(t, "earlier_attempts", earlier);
    json_decref(earlier);
    keep_attempt(a, o, id, 0, "", t);
}

void run_task_ended(const request_args *a, const run_opts *o, json_t *t, int *worst)
{
    int s = wait_state_status(wait_task_state(t));
    *worst = s > *worst ? s : *worst;
    /* a task cancelled before it ever started has no output to keep */
    if (o->keep_logs && json_integer_value(json_object_get(t, "attempts")) > 0)
        keep_logs(a, o, t);
    FILE *f = a->opts.json ? stderr : stdout;
    /* file names are shown, not obeyed by the terminal */
    fprintf(f, "task %lld %s ", (long long)json_integer_value(json_object_get(t, "id")),
            wait_task_state(t));
    fput_escaped(f, json_string_value(json_object_get(t, "file")));
    if (json_object_get(t, "stdout_file")) {
        fputs(" (output: ", f);
        fput_escaped(f, json_string_value(json_object_get(t, "stdout_file")));
        size_t k;
        json_t *e;
        json_array_foreach(json_object_get(t, "earlier_attempts"), k, e) {
            fputs(k ? " " : "; earlier attempts: ", f);
            fput_escaped(f, json_string_value(json_object_get(e, "stdout_file")));
        }
        fputc(')', f);
    }
    fputc('\n', f);
    fflush(f);
}

void run_print_report(const request_args *a, json_t *tasks)
{
    size_t i;
    json_t *t;
    json_array_foreach(tasks, i, t) {
        if (json_object_get(t, "task")) { /* never sent: said, not left out */
            json_object_del(t, "task");
            json_object_set_new(t, "state", json_string("unsubmitted"));
            fputs("carma run: ", stderr);
            fput_escaped(stderr, json_string_value(json_object_get(t, "file")));
            fputs(": not submitted\n", stderr);
        }
    }
    if (a->opts.json)
        cli_print_json(tasks);
}
