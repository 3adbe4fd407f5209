/* gpus.c — `carma gpus`: the GPUs as the daemon sees them (memory, aggregated activity and its
 * source, power, tasks, grace state), or, with --gpu-backend, read directly through a GPU
 * backend without a daemon. GPM metrics need two samples more than 100 ms apart (carma waits
 * GPM_MIN_INTERVAL_S, 110 ms, gpm.h), so a direct read samples twice by default. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/commands.h"
#include "cli/fmt.h"
#include "cli/request.h"
#include "cli/views.h"
#include "gpu/nvml_backend.h"
#include "gpu/print.h"
#include "util/strutil.h"

static const char usage[] =
    "usage: carma gpus [--socket PATH] [--json]\n"
    "       carma gpus --gpu-backend nvml [--library PATH] [--samples N] [--interval-ms MS]\n"
    "                  [--json]\n\n"
    "Shows each GPU as the daemon sees it: memory used/total (MiB), SMACT/SMOCC/DRAMA as\n"
    "aggregated over the monitoring window (- = unknown) and where they came from (gpm,\n"
    "dcgm, sim or unknown), power, its grace state (available, launching, grace with the\n"
    "seconds left; - under the carma policy, whose ledger needs none), what the carma\n"
    "policy's ledger has committed on it (the figures + margins of its tasks; +all: a task\n"
    "placed with no figure holds it all) and the tasks on it, one line each: id, user,\n"
    "name, the memory figure it was placed with and its peak. A GPU the daemon found and\n"
    "does not use (one in MIG mode) gets a line `not used: NVML GPU N (UUID): why`. --json\n"
    "gives each GPU the daemon's backend (nvml, sim) and mps_pipe_dir too (with mps = on,\n"
    "the CUDA_MPS_PIPE_DIRECTORY of carma's MPS server; else null).\n\n"
    "With --gpu-backend, reads this machine's GPUs directly instead (no daemon): nvml loads\n"
    "libnvidia-ml.so.1 (or PATH, or $CARMA_NVML_LIBRARY), samples N times (default 2), MS\n"
    "milliseconds apart (default 200, at least 110 for GPM), and prints the last reading:\n"
    "memory, utilization, SM activity/occupancy and DRAM activity, power (W) and energy (J),\n"
    "each with its source, the GPU processes, and whether MIG is enabled (JSON: mig): the\n"
    "daemon places no task on a GPU in MIG mode. Unknown metrics print as 'unknown' (JSON:\n"
    "null).\n"
    "Inside a job allocation (SLURM_JOB_GPUS or CUDA_VISIBLE_DEVICES set) only the job's GPUs\n"
    "are read, as the daemon does, with a note saying which (docs/slurm-allocation.md).\n\n"
    "  --gpu-backend NAME  read the GPUs directly through this backend (nvml)\n"
    "  --library PATH      the NVML library to load\n"
    "  --samples N         readings to take (1..1000)\n"
    "  --interval-ms MS    milliseconds between readings (0..60000)\n" REQUEST_USAGE;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts))
        ;
}

typedef struct direct_opts {
    const char *backend, *library;
    int64_t samples, interval_ms;
    bool json;
} direct_opts;

/* Reads the GPUs through the backend, no daemon involved. */
static int gpus_direct(const direct_opts *o)
{
    carma_err err;
    if (gpu_backend_check(o->backend, &err))
        return cli_usage_error("gpus", "%s", err.msg);
    const gpu_backend_ops *ops = gpu_backend_find(o->backend);
    if (ops != &gpu_backend_nvml)
        return cli_usage_error("gpus", "the %s backend's GPUs live in the daemon; run `carma "
                                       "gpus` without --gpu-backend", ops->name);
    gpu_backend *b;
    /* every GPU, those in MIG mode too (marked), which the daemon's open leaves out */
    if (nvml_backend_open_all(&b, o->library, &err))
        return cli_fail("gpus", &err);
    int n = ops->count(b);
    gpu_reading *r = calloc(n > 0 ? (size_t)n : 1, sizeof *r);
    int rc = 0;
    if (!r) {
        carma_err_set(&err, "out of memory");
        rc = cli_fail("gpus", &err);
        goto out;
    }
    for (int64_t s = 0; s < o->samples; s++) {
        if (s)
            sleep_ms((long)o->interval_ms);
        if (ops->sample(b, r, &err)) {
            rc = cli_fail("gpus", &err);
            goto out;
        }
    }
    if (n == 0 && !o->json)
        printf("no GPUs\n");
    else if (gpu_print_readings(stdout, r, n, o->json))
        rc = 1;
    /* the notes quote NVML's UUIDs, the environment and dlerror(): no escape sequence reaches
     * the terminal, as in the GPU lines above */
    const char *notes[] = {nvml_backend_visible_note(b), nvml_backend_activity_note(b)};
    for (size_t i = 0; i < sizeof notes / sizeof *notes; i++) {
        char *note = *notes[i] ? str_escape_controls(notes[i]) : NULL;
        if (note)
            fprintf(o->json ? stderr : stdout, "note: %s\n", note);
        free(note);
    }
out:
    free(r);
    ops->close(b);
    return rc;
}

static void fmt_num(char *buf, size_t cap, const json_t *v, const char *fmt)
{
    if (json_is_number(v))
        snprintf(buf, cap, fmt, json_number_value(v));
    else
        snprintf(buf, cap, "-");
}

/* Under a GPU's row, one line per task on it: id, user, name (other users' words, escaped),
 * the figure it was placed with and its peak. */
static void print_holds(const json_t *holds)
{
    size_t i;
    json_t *h;
    json_array_foreach(holds, i, h) {
        char *name = column_text(json_string_value(json_object_get(h, "name")), 24);
        char *user = column_text(json_string_value(json_object_get(h, "user")), 10);
        const json_t *mem = json_object_get(h, "mem_mib"), *peak = json_object_get(h, "peak_mib");
        char *src = str_escape_controls(
            fmt_mem_source(json_string_value(json_object_get(h, "mem_source"))));
        char fig[64] = "no figure", pk[32] = "-";
        if (json_is_integer(mem))
            snprintf(fig, sizeof fig, "figure %lld MiB (%s)", (long long)json_integer_value(mem),
                     src ? src : "?");
        if (json_is_integer(peak))
            snprintf(pk, sizeof pk, "%lld MiB", (long long)json_integer_value(peak));
        printf("    task %-6lld %-10s %-24s %s, peak %s\n",
               (long long)json_integer_value(json_object_get(h, "id")), user ? user : "?",
               name ? name : "?", fig, pk);
        free(name);
        free(user);
        free(src);
    }
}

void gpus_print_table(const json_t *gpus)
{
    printf("%-3s %-18s %-13s %-6s %-6s %-6s %-8s %-7s %-10s %-10s %s\n", "GPU", "NAME",
           "MEM_MIB", "SMACT", "SMOCC", "DRAMA", "SOURCE", "POWER", "GRACE", "COMMITTED",
           "TASKS");
    size_t i;
    json_t *g;
    json_array_foreach(gpus, i, g) {
        char mem[32], a[16], o[16], dr[16], pw[16], grace[24], tasks[256] = "";
        json_t *used = json_object_get(g, "mem_used_mib"),
               *total = json_object_get(g, "mem_total_mib");
        if (json_is_integer(used) && json_is_integer(total))
            snprintf(mem, sizeof mem, "%lld/%lld", (long long)json_integer_value(used),
                     (long long)json_integer_value(total));
        else
            snprintf(mem, sizeof mem, "-");
        fmt_num(a, sizeof a, json_object_get(g, "smact"), "%.2f");
        fmt_num(o, sizeof o, json_object_get(g, "smocc"), "%.2f");
        fmt_num(dr, sizeof dr, json_object_get(g, "drama"), "%.2f");
        fmt_num(pw, sizeof pw, json_object_get(g, "power_w"), "%.0fW");
        /* a reply is another process's text: no escape sequence reaches the terminal */
        char *name = column_text(json_string_value(json_object_get(g, "name")), 18);
        char *src = str_escape_controls(json_string_value(json_object_get(g, "activity_source")));
        json_t *left = json_object_get(g, "grace_left_s");
        if (json_is_number(left))
            snprintf(grace, sizeof grace, "grace %.0fs", json_number_value(left));
        else {
            char *state = str_escape_controls(json_string_value(json_object_get(g, "grace")));
            snprintf(grace, sizeof grace, "%s", state ? state : "-");
            free(state);
        }
        /* whole ids only; those that do not fit are counted ("+N more"), never cut */
        json_t *list = json_object_get(g, "tasks"), *t;
        size_t k, n = 0, count = json_array_size(list);
        json_array_foreach(list, k, t) {
            char id[32];
            int w = snprintf(id, sizeof id, "%s%lld", k ? "," : "",
                             (long long)json_integer_value(t));
            bool last = k + 1 == count; /* no "+N more" to keep room for after it */
            if (n + (size_t)w + (last ? 1 : sizeof ",+99999 more") > sizeof tasks) {
                snprintf(tasks + n, sizeof tasks - n, ",+%zu more", count - k);
                break;
            }
            memcpy(tasks + n, id, (size_t)w + 1);
            n += (size_t)w;
        }
        json_t *committed = json_object_get(g, "committed_mib");
        char ledger[32] = "-";
        if (json_is_integer(committed))
            snprintf(ledger, sizeof ledger, "%lld%s", (long long)json_integer_value(committed),
                     json_integer_value(json_object_get(g, "committed_unknown")) ? "+all" : "");
        printf("%-3lld %-18s %-13s %-6s %-6s %-6s %-8s %-7s %-10s %-10s %s\n",
               (long long)json_integer_value(json_object_get(g, "index")),
               name ? name : "-", mem, a, o, dr, src ? src : "-", pw, grace, ledger,
               tasks[0] ? tasks : "-");
        free(name);
        free(src);
        print_holds(json_object_get(g, "holds"));
    }
}

/* The GPUs the daemon does not use, and why (a GPU in MIG mode). */
static void print_left_out(const json_t *left)
{
    size_t i;
    const json_t *g;
    json_array_foreach(left, i, g) {
        char *uuid = str_escape_controls(json_string_value(json_object_get(g, "uuid")));
        char *why = str_escape_controls(json_string_value(json_object_get(g, "why")));
        printf("not used: NVML GPU %lld (%s): %s\n",
               (long long)json_integer_value(json_object_get(g, "nvml_index")),
               uuid ? uuid : "UUID unknown", why ? why : "?");
        free(uuid);
        free(why);
    }
}

json_t *gpus_json(const json_t *reply)
{
    json_t *out = json_array(), *g;
    json_t *backend = json_object_get(reply, "backend");
    json_t *pipe = json_object_get(reply, "mps_pipe_dir");
    size_t i;
    json_array_foreach(json_object_get(reply, "gpus"), i, g) {
        json_t *c = json_copy(g);
        json_object_set_new(c, "backend", json_is_string(backend) ? json_copy(backend)
                                                                  : json_null());
        json_object_set_new(c, "mps_pipe_dir", json_is_string(pipe) ? json_copy(pipe)
                                                                     : json_null());
        json_array_append_new(out, c);
    }
    return out;
}

static const struct option longopts[] = {
    {"gpu-backend", required_argument, NULL, 'b'},
    {"library", required_argument, NULL, 'L'},
    {"samples", required_argument, NULL, 'n'},
    {"interval-ms", required_argument, NULL, 'i'},
    {NULL, 0, NULL, 0},
};

static int run(request_args *a)
{
    direct_opts d = {.samples = 2, .interval_ms = 200};
    bool direct_only = false; /* an option that means nothing to the daemon was given */
    int opt, rc;
    while ((opt = request_next_option(a)) > 0) {
        switch (opt) {
        case 'b':
            d.backend = a->arg;
            break;
        case 'L':
            if (cli_path_arg("gpus", "--library", a->arg))
                return EXIT_USAGE;
            d.library = a->arg;
            direct_only = true;
            break;
        case 'n':
            if (parse_i64(a->arg, &d.samples) || d.samples < 1 || d.samples > 1000)
                return cli_usage_error("gpus", "--samples wants 1..1000, not '%s'", a->arg);
            direct_only = true;
            break;
        case 'i':
            if (parse_i64(a->arg, &d.interval_ms) || d.interval_ms < 0 || d.interval_ms > 60000)
                return cli_usage_error("gpus", "--interval-ms wants 0..60000, not '%s'", a->arg);
            direct_only = true;
            break;
        }
    }
    if (opt < 0)
        return a->status;
    if ((rc = request_no_operands(a)) != 0)
        return rc;
    if (d.backend) {
        if (a->opts.socket)
            return cli_usage_error("gpus", "--socket asks the daemon; --gpu-backend reads the "
                                           "GPUs directly: give one of them");
        d.json = a->opts.json;
        return gpus_direct(&d);
    }
    if (direct_only)
        return cli_usage_error("gpus", "--library, --samples and --interval-ms go with "
                                       "--gpu-backend");
    json_t *reply, *req = json_pack("{ss}", "verb", "gpus");
    if ((rc = request_send(a, req, &reply)) != 0)
        return rc;
    if (a->opts.json) {
        json_t *gpus = gpus_json(reply);
        cli_print_json(gpus);
        json_decref(gpus);
    } else {
        gpus_print_table(json_object_get(reply, "gpus"));
        print_left_out(json_object_get(reply, "left_out"));
    }
    json_decref(reply);
    return 0;
}

const request_cmd cmd_gpus = {.usage = usage, .longopts = longopts, .run = run};
