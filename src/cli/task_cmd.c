/* task_cmd.c — `carma task check|show`: validate task files and print what carma reads. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/fmt.h"
#include "cli/submit.h"
#include "daemon/proto.h"
#include "task/taskload.h"
#include "util/strutil.h"

static const char *const usage =
    "usage: carma task check FILE...\n"
    "       carma task show [--json] FILE\n\n"
    "Task files are CARMA .rad files (12 positional lines) or carma's keyed .yaml/.yml files\n"
    "(see README, \"Task files\").\n\n"
    "  check   parse and validate each FILE, with the bounds `carma submit` keeps on the\n"
    "          lengths of the name, the command and paths; prints `FILE: ok` or the error\n"
    "          (file:line: ...). Exits 1 when any file is bad.\n"
    "  show    print the task parsed from FILE (control characters shown escaped, as \\x1b);\n"
    "          --json prints one JSON object, strings exact, with keys\n"
    "          id, name, command, workdir, env, gpus, memory {source: MiB}, summary,\n"
    "          batch_size, max_retries (null where unknown).\n";

/* The name a memory figure goes by in output: the measured figure is "oracle". */
static const char *mem_label(mem_source s)
{
    return s == MEM_ORACLE ? "oracle" : mem_source_estimator_name(s);
}

/* The bounds `carma submit` and the daemon keep on a new task's text (the name, the command,
 * paths: submission_check_new), on the file's fields as submit sends them; and no variable
 * that carma sets itself. */
static int check_submission_bounds(const task_spec *t, const char *path, carma_err *err)
{
    for (size_t i = 0; i < t->nenv; i++) /* as submit refuses them */
        if (submission_env_reserved(t->env[i]))
            return carma_err_set(err, "%s: env: %.*s: carma sets this variable itself for every "
                                 "task", path, (int)strcspn(t->env[i], "="), t->env[i]);
    submission s;
    submission_init(&s);
    s.name = t->name; /* borrowed: s is not freed, but for the source, its own */
    s.command = t->command;
    s.cwd = t->workdir;
    s.summary = t->summary_path;
    s.source = realpath(path, NULL);
    int rc = submission_check_new(&s, err);
    free(s.source);
    return rc ? carma_err_prefix(err, "%s", path) : 0;
}

static int load_checked(const char *path, task_spec *t, carma_err *err)
{
    if (task_load_file(path, t, err))
        return -1;
    if (task_spec_validate(t, path, err) || check_submission_bounds(t, path, err)) {
        task_spec_free(t);
        return -1;
    }
    return 0;
}

static int task_check(int argc, char **argv)
{
    if (argc < 1)
        return cli_usage_error("task", "check: expected at least one FILE");
    int bad = 0;
    for (int i = 0; i < argc; i++) {
        task_spec t;
        carma_err err;
        if (load_checked(argv[i], &t, &err)) {
            cli_fail("task", &err);
            bad = 1;
            continue;
        }
        task_spec_free(&t);
        /* and as `carma submit` and `carma run` read it (its workdir exists, its text is
         * UTF-8, ...): a file that checks ok must not be refused there */
        json_t *sub;
        if (submit_task_file_json(argv[i], &sub, &err)) {
            cli_fail("task", &err);
            bad = 1;
            continue;
        }
        json_decref(sub);
        fput_escaped(stdout, argv[i]); /* a glob over another user's files may name it */
        fputs(": ok\n", stdout);
    }
    return bad;
}

static json_t *json_str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *task_json(const task_spec *t)
{
    json_t *env = json_array(), *mem = json_object();
    for (size_t i = 0; i < t->nenv; i++)
        json_array_append_new(env, json_string(t->env[i]));
    for (int s = 0; s < MEM_SOURCE_COUNT; s++) {
        uint64_t mib;
        if (mem_figures_get(&t->mem, (mem_source)s, &mib))
            json_object_set_new(mem, mem_label((mem_source)s), json_integer((json_int_t)mib));
    }
    /* a task file carries no id (0): the task has one only once submitted */
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:i, s:o, s:o, s:o, s:o}", "id",
                     t->id ? json_integer((json_int_t)t->id) : json_null(), "name",
                     json_str_or_null(t->name), "command",
                     json_str_or_null(t->command), "workdir", json_str_or_null(t->workdir), "env",
                     env, "gpus", t->ngpus, "memory", mem, "summary",
                     json_str_or_null(t->summary_path), "batch_size",
                     t->batch_size > 0 ? json_integer(t->batch_size) : json_null(), "max_retries",
                     t->max_retries >= 0 ? json_integer(t->max_retries) : json_null());
}

/* A field as the file has it, its control characters made visible: a task file may come from
 * anyone, and its text must not drive the terminal (JSON keeps it exact). */
static void print_opt(const char *label, const char *value, const char *none)
{
    char *shown = str_escape_controls(value);
    printf("%-12s %s\n", label, shown ? shown : value ? "?" : none);
    free(shown);
}

static void task_print(const task_spec *t)
{
    print_opt("name:", t->name, "-");
    print_opt("source:", t->source_path, "-");
    print_opt("command:", t->command, "-");
    print_opt("workdir:", t->workdir, "(the submitter's directory)");
    for (size_t i = 0; i < t->nenv; i++)
        print_opt(i ? "" : "env:", t->env[i], "");
    printf("%-12s %d\n", "gpus:", t->ngpus);
    bool any = false;
    for (int s = 0; s < MEM_SOURCE_COUNT; s++) {
        uint64_t mib;
        if (mem_figures_get(&t->mem, (mem_source)s, &mib)) {
            printf("%-12s %-11s %llu MiB\n", any ? "" : "memory:", mem_label((mem_source)s),
                   (unsigned long long)mib);
            any = true;
        }
    }
    if (!any)
        print_opt("memory:", NULL, "(no figure: estimate or measure)");
    print_opt("summary:", t->summary_path, "-");
    if (t->batch_size > 0)
        printf("%-12s %d\n", "batch_size:", t->batch_size);
    else
        print_opt("batch_size:", NULL, "(unknown)");
    if (t->max_retries >= 0)
        printf("%-12s %d\n", "max_retries:", t->max_retries);
    else
        print_opt("max_retries:", NULL, "(the config's retry_cap)");
    if (t->conda_env)
        print_opt("conda_env:", t->conda_env, "");
    if (t->dataset)
        print_opt("dataset:", t->dataset, "");
    if (t->collocation_mode)
        print_opt("collocation:", t->collocation_mode, "");
    if (t->sim.solo_runtime_s > 0)
        printf("%-12s %g s\n", "solo time:", t->sim.solo_runtime_s);
}

static int task_show(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool as_json = false;
    int opt;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'j':
            as_json = true;
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            return cli_bad_option("task", argv, optopt, opt);
        }
    }
    if (argc - optind != 1)
        return cli_usage_error("task", "show: expected exactly one FILE");
    task_spec t;
    carma_err err;
    if (load_checked(argv[optind], &t, &err))
        return cli_fail("task", &err);
    if (as_json) {
        json_t *j = task_json(&t);
        if (!j || json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ||
            fputc('\n', stdout) == EOF) {
            json_decref(j);
            task_spec_free(&t);
            carma_err_set(&err, "cannot write JSON");
            return cli_fail("task", &err);
        }
        json_decref(j);
    } else {
        task_print(&t);
    }
    task_spec_free(&t);
    return 0;
}

int cmd_task(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error("task", "expected a subcommand: check or show");
    const char *sub = argv[1];
    if (!strcmp(sub, "--help") || !strcmp(sub, "-h")) {
        fputs(usage, stdout);
        return 0;
    }
    if (!strcmp(sub, "check")) {
        for (int i = 2; i < argc; i++) {
            if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
                fputs(usage, stdout);
                return 0;
            }
            if (argv[i][0] == '-' && argv[i][1])
                return cli_usage_error("task", "check: unknown option '%s'", argv[i]);
        }
        return task_check(argc - 2, argv + 2);
    }
    if (!strcmp(sub, "show"))
        return task_show(argc - 1, argv + 1);
    if (sub[0] == '-')
        return cli_usage_error("task", "unknown option '%s'", sub);
    return cli_usage_error("task", "unknown subcommand '%s' (expected check or show)", sub);
}
