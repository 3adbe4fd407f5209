/* submit.c — `carma submit`: queue a task with the daemon (a command line or a task file). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

#include "cli/commands.h"
#include "cli/submit.h"
#include "cli/submit_queue.h"
#include "cli/request.h"
#include "task/taskload.h"
#include "estimate/estimate.h"
#include "estimate/xmem_cache.h"
#include "estimate/xmem_run.h"
#include "daemon/proto.h"
#include "util/strutil.h"

enum { GIVEN_GPUS = 1, GIVEN_RETRIES = 2, GIVEN_NAME = 4, GIVEN_SUMMARY = 8, GIVEN_BATCH = 16 };

static const char usage[] =
    "usage: carma submit [OPTIONS] -- COMMAND [ARGS...]\n"
    "       carma submit [OPTIONS] TASKFILE\n\n"
    "Queues a task with the daemon and prints its id. The task runs as you, in the current\n"
    "directory, with /bin/sh -c: COMMAND and each ARG are quoted as one word each (a pipe or\n"
    "a list: -- sh -c 'a | b'). Options end at COMMAND, so -- is needed only before a COMMAND\n"
    "that starts with - or ends in .yaml, .yml or .rad. TASKFILE is a carma task file (.yaml)\n"
    "or a CARMA .rad file, which takes no arguments: the options go before it (the command\n"
    "line's win over its).\n"
    "When the daemon cannot be reached or its reply is lost, the submission is sent again\n"
    "(4 tries): its random key makes the daemon answer a repeat with the first task's id.\n\n"
    "  --gpus N           GPUs the task needs (default 1)\n"
    "  --mem SIZE         its GPU memory need per GPU (e.g. 12G, 8000M): the measured figure;\n"
    "                     without it, a Python training command (SCRIPT.py or -m MODULE) gets\n"
    "                     carma's xmem estimate, traced here on the CPU as you (cached; see\n"
    "                     carma estimate --run); a peak measured on an earlier identical run (or\n"
    "                     what its out-of-memory crash was seen to need) wins\n"
    "  --summary FILE     its model summary: with --batch, the horus, gpumemnet and carma\n"
    "                     estimates are computed from it (for the est-* policies)\n"
    "  --batch N          its batch size: with --summary for the estimates; and with the\n"
    "                     command, --gpus and your directory, the key under which the\n"
    "                     daemon remembers the task's measured peak memory (and, run alone,\n"
    "                     its run time) for your later identical submissions\n"
    "  --name X           a short name (default: the command's program name)\n"
    "  --max-retries N    out-of-memory relaunches (default: the config's retry_cap)\n"
    "  --env KEY=VALUE    an environment variable for the task (repeatable)\n"
    "  --clean-env        pass only PATH and the --env variables (default: your whole\n"
    "                     environment, less the variables carma sets itself:\n"
    "                     CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER,\n"
    "                     CUDA_MPS_*, CARMA_TASK_ID, CARMA_ATTEMPT, CARMA_ARRAY_INDEX,\n"
    "                     CARMA_SIM_STATE)\n"
    "  --after ID[,ID]    start only after these tasks ended, however they ended\n"
    "  --afterok ID[,ID]  start only after these tasks ended done; if one ends otherwise,\n"
    "                     this task is cancelled, naming it\n"
    "  --hold             queue it held: it does not start until `carma release ID`\n"
    "  --priority N       higher goes ahead of lower in the queue (default 0); above 0 is\n"
    "                     root's only (it passes other users' tasks)\n"
    "  --time DURATION    each attempt's time limit (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM,\n"
    "                     D-HH:MM:SS): past it the task is cancelled and ends `timeout`\n"
    "                     (not retried); the carma policy plans with it as the task's\n"
    "                     run time when no solo run of the same task was shorter\n"
    "  --array LIST       a sweep: one task per index (1-8, 1-7:2 for every second, 1,2,5,\n"
    "                     0-3,10; at most 1000), each with CARMA_ARRAY_INDEX in its\n"
    "                     environment (a command reads it as sh -c '... $CARMA_ARRAY_INDEX');\n"
    "                     named NAME[INDEX]; queued all or none in one request, as Slurm's\n"
    "                     (one refused: none is); prints the ids on one line (--json:\n"
    "                     {\"ids\": [...]}, else {\"id\": N})\n"
    REQUEST_USAGE;

/* Fills the submission from a task file (task/taskload.h); options given on the command
 * line (already in *sub, flagged in `given`) win over the file's values. */
static int submit_load_task_file(const char *path, submission *sub, const submission *given_vals,
                                 unsigned given, carma_err *err)
{
    task_spec spec;
    task_spec_init(&spec);
    if (task_load_file(path, &spec, err)) {
        task_spec_free(&spec);
        return -1;
    }
    submission fs;
    submission_init(&fs);
    int rc = 0;
    fs.name = str_dup(spec.name);
    fs.command = str_dup(spec.command);
    fs.cwd = spec.workdir ? realpath(spec.workdir, NULL) : NULL;
    struct stat st;
    if (spec.workdir && !fs.cwd)
        rc = carma_err_set(err, "%s: working directory '%s' does not exist", path, spec.workdir);
    else if (fs.cwd && (stat(fs.cwd, &st) || !S_ISDIR(st.st_mode))) /* else each attempt fails */
        rc = carma_err_set(err, "%s: working directory '%s' is not a directory", path,
                           spec.workdir);
    fs.ngpus = spec.ngpus;
    /* The file's figures are the task's; those computed from a summary are for the file's own
     * summary and batch, so a --summary or --batch given here has them computed again. */
    for (int k = 0; k < MEM_SOURCE_COUNT; k++) {
        uint64_t mib;
        if (mem_figures_get(&spec.mem, (mem_source)k, &mib) &&
            !((given & (GIVEN_SUMMARY | GIVEN_BATCH)) && estimator_computes((mem_source)k)))
            mem_figures_set(&fs.mem, (mem_source)k, mib);
    }
    fs.max_retries = spec.max_retries < 0 ? -1 : spec.max_retries;
    fs.summary = spec.summary_path ? str_dup(spec.summary_path) : NULL;
    fs.batch = spec.batch_size;
    fs.source = realpath(path, NULL);
    fs.conda_env = spec.conda_env ? str_dup(spec.conda_env) : NULL;
    for (size_t i = 0; rc == 0 && i < spec.nenv; i++)
        rc = submission_add_env(&fs, spec.env[i], err);
    for (size_t i = 0; rc == 0 && i < given_vals->nenv; i++)
        rc = submission_add_env(&fs, given_vals->env[i], err);
    task_spec_free(&spec);
    if (rc) {
        submission_free(&fs);
        return -1;
    }
    if (given & GIVEN_GPUS)
        fs.ngpus = given_vals->ngpus;
    if (given & GIVEN_RETRIES)
        fs.max_retries = given_vals->max_retries;
    if (given & GIVEN_NAME) {
        free(fs.name);
        fs.name = str_dup(given_vals->name);
    }
    if (given & GIVEN_SUMMARY) {
        free(fs.summary);
        fs.summary = str_dup(given_vals->summary);
        fs.batch = given_vals->batch;
    }
    if (given & GIVEN_BATCH)
        fs.batch = given_vals->batch;
    submission_free(sub);
    *sub = fs;
    return 0;
}

/* Fills the figures of the estimators computed from a summary (horus, gpumemnet, carma) that
 * the submission does not have yet: a figure a task file gives is the task's. */
static int estimate_summary(submission *sub, carma_err *err)
{
    estimator e;
    estimator_init(&e);
    int rc = 0;
    uint64_t mib;
    for (int k = 0; k < MEM_SOURCE_COUNT && rc == 0; k++)
        if (estimator_computes((mem_source)k) && !mem_figures_get(&sub->mem, (mem_source)k, &mib))
            rc = estimate_fill_mem(&e, (mem_source)k, sub->summary, sub->batch, &sub->mem, err);
    estimator_free(&e);
    return rc;
}

/* No --mem for a Python training command: carma's xmem estimate, traced here as the user
 * (cached by script, arguments and environment, while the files it read are unchanged). A
 * script it cannot trace only warns. */
static void estimate_xmem(submission *sub, char **words, int nwords)
{
    xmem_estimate e;
    bool hit;
    carma_err err;
    /* the script runs now, before it is queued (--hold too): say so before it does */
    fprintf(stderr, "carma submit: no --mem: estimating the peak with xmem (the script runs "
            "now, on the CPU, for %d optimizer steps, unless cached; --mem skips this)\n",
            XMEM_DEFAULT_ITERATIONS);
    if (xmem_cached_estimate(words, nwords, sub->env, sub->nenv, XMEM_DEFAULT_ITERATIONS, &e,
                             &hit, &err)) {
        cli_warn("submit", "no xmem estimate (%s)", err.msg);
        return;
    }
    mem_figures_set(&sub->mem, MEM_XMEM, (uint64_t)e.total_mib);
    fprintf(stderr, "carma submit: xmem estimate %.0f MiB%s\n", e.total_mib,
            hit ? " (cached)" : "");
}


/* The operands, when no -- says they are a command: a task file takes no arguments, and
 * options after it would otherwise be read as a command line (with '+' the options stop at the
 * first operand); a directory is neither a task file nor a program. A bare word that is not the
 * sole operand is a program's name, which the shell looks up in PATH, not here. 0, or a usage
 * error's exit status. */
static int check_file_operand(int n, char **operands)
{
    const char *op = operands[0];
    struct stat st;
    if ((n == 1 || strchr(op, '/')) && stat(op, &st) == 0 && S_ISDIR(st.st_mode))
        return cli_usage_error("submit", "'%s' is a directory (give a TASKFILE, or -- COMMAND)",
                               op);
    if (task_file_name(op) && n > 1)
        return cli_usage_error("submit", "'%s' after the task file %s: a task file takes no "
                               "arguments and options go before it (carma submit [OPTIONS] "
                               "TASKFILE)", operands[1], op);
    return 0;
}

static const struct option longopts[] = {
    {"gpus", required_argument, NULL, 'g'},    {"mem", required_argument, NULL, 'm'},
    {"summary", required_argument, NULL, 'S'}, {"batch", required_argument, NULL, 'b'},
    {"name", required_argument, NULL, 'n'},    {"max-retries", required_argument, NULL, 'r'},
    {"env", required_argument, NULL, 'e'},     {"after", required_argument, NULL, OPT_AFTER},
    {"afterok", required_argument, NULL, OPT_AFTEROK}, {"hold", no_argument, NULL, OPT_HOLD},
    {"priority", required_argument, NULL, OPT_PRIORITY},
    {"time", required_argument, NULL, OPT_TIME}, {"array", required_argument, NULL, OPT_ARRAY},
    {"clean-env", no_argument, NULL, OPT_CLEAN_ENV}, {NULL, 0, NULL, 0},
};

/* The task's environment: the variables given (task file, --env), which may not name one
 * that carma sets itself, then the submitter's own environment where they did not set the
 * variable (only PATH with --clean-env), less the ones carma sets. */
static int add_environment(submission *sub, bool clean, carma_err *err)
{
    size_t given = sub->nenv;
    for (char **e = environ; e && *e; e++) {
        size_t klen = strcspn(*e, "=");
        if (klen == 0 || !(*e)[klen]) /* not KEY=VALUE */
            continue;
        if (submission_env_reserved(*e) || (clean && (klen != 4 || strncmp(*e, "PATH", 4))))
            continue;
        if (!str_utf8_valid(*e)) { /* JSON, and so the daemon, cannot carry it */
            cli_warn("submit", "%.*s is not valid UTF-8: not passed to the task (give it with "
                     "--env in UTF-8)", (int)klen, *e);
            continue;
        }
        bool set = false;
        for (size_t i = 0; i < given && !set; i++)
            set = !strncmp(sub->env[i], *e, klen + 1);
        if (!set && submission_add_env(sub, *e, err))
            return -1;
    }
    return 0;
}

/* What the user gave and the daemon would refuse or lose, checked before anything runs (the
 * xmem trace runs the script): a variable carma sets itself, and text that JSON cannot carry
 * (not UTF-8), which would be dropped on the way to the daemon. */
static int check_given(const submission *sub, carma_err *err)
{
    size_t given_env = sub->nenv;
    for (size_t i = 0; i < given_env; i++)
        if (submission_env_reserved(sub->env[i]))
            return carma_err_set(err, "%.*s: carma sets this variable itself for every task "
                                 "(given with --env or in the task file's env)",
                                 (int)strcspn(sub->env[i], "="), sub->env[i]);
    const struct {
        const char *what, *value;
    } text[] = {{"the task's name", sub->name},   {"the command", sub->command},
                {"the directory", sub->cwd},      {"the summary path", sub->summary},
                {"the source", sub->source},      {"the conda environment", sub->conda_env}};
    for (size_t i = 0; i < sizeof text / sizeof *text; i++)
        if (text[i].value && !str_utf8_valid(text[i].value))
            return carma_err_set(err, "%s is not valid UTF-8: carma passes text as UTF-8 "
                                 "(JSON)", text[i].what);
    for (size_t i = 0; i < given_env; i++)
        if (!str_utf8_valid(sub->env[i]))
            return carma_err_set(err, "%.*s (--env or the task file's env) is not valid UTF-8: "
                                 "carma passes text as UTF-8 (JSON)",
                                 (int)strcspn(sub->env[i], "="), sub->env[i]);
    return 0;
}

/* The submission's default directory (the current one), then check_given: before anything
 * runs for it (the xmem trace). */
static int prepare_submission(submission *sub, carma_err *err)
{
    char cwd[PATH_MAX];
    if (!sub->cwd && !getcwd(cwd, sizeof cwd))
        return carma_err_set(err, "cannot read the current directory");
    if (!sub->cwd && !(sub->cwd = str_dup(cwd)))
        return carma_err_set(err, "out of memory");
    return check_given(sub, err);
}

/* A prepared submission's environment, then its JSON, checked as the daemon will check it;
 * the submission is freed. */
static int finish_submission(submission *sub, bool clean_env, json_t **out, carma_err *err)
{
    *out = NULL;
    int rc = add_environment(sub, clean_env, err);
    json_t *task = rc ? NULL : submission_to_json(sub);
    submission_free(sub);
    if (rc)
        return rc;
    submission check;
    if (!task)
        return carma_err_set(err, "out of memory");
    if (submission_from_json(task, &check, err) || submission_check_new(&check, err)) {
        submission_free(&check);
        json_decref(task);
        return -1;
    }
    submission_free(&check);
    *out = task;
    return 0;
}

int submit_task_file_json(const char *path, json_t **out, carma_err *err)
{
    submission sub, none;
    submission_init(&sub);
    submission_init(&none);
    *out = NULL;
    int rc = submit_load_task_file(path, &sub, &none, 0, err);
    submission_free(&none);
    if (rc) {
        submission_free(&sub);
        return -1;
    }
    carma_err why;
    if (sub.summary && sub.batch > 0 && estimate_summary(&sub, &why))
        cli_warn(NULL, "%s: no estimates (%s)", path, why.msg);
    if (prepare_submission(&sub, err)) {
        submission_free(&sub);
        return carma_err_prefix(err, "%s", path);
    }
    if (finish_submission(&sub, false, out, err))
        return carma_err_prefix(err, "%s", path);
    return 0;
}

static int run(request_args *a)
{
    submission sub;
    submission_init(&sub);
    bool have_mem = false;
    unsigned given = 0;
    uint64_t mem = 0;
    carma_err err;
    int opt = 0, rc = 0;
    static queue_ctl qc; /* static: its arrays are large for a stack */
    memset(&qc, 0, sizeof qc);
    while (rc == 0 && (opt = request_next_option(a)) > 0) {
        const char *arg = a->arg;
        int64_t v;
        switch (opt) {
        default:
            rc = queue_ctl_option(opt, arg, &qc);
            break;
        case 'g':
            if (parse_i64(arg, &v) || v < 1 || v > SCHED_MAX_TASK_GPUS) {
                rc = cli_usage_error("submit", "--gpus: expected 1..%d, got '%s'",
                                     SCHED_MAX_TASK_GPUS, arg);
                break;
            }
            sub.ngpus = (int)v;
            given |= GIVEN_GPUS;
            break;
        case 'm':
            if (parse_size_mib(arg, &mem)) {
                rc = cli_usage_error("submit", "--mem: expected a size such as 12G or 8000M, "
                                               "got '%s'", arg);
                break;
            }
            have_mem = true;
            break;
        case 'S':
            if ((rc = cli_path_arg("submit", "--summary", arg)) != 0)
                break;
            free(sub.summary);
            sub.summary = realpath(arg, NULL);
            if (!sub.summary) {
                rc = cli_usage_error("submit", "--summary: cannot read '%s'", arg);
                break;
            }
            given |= GIVEN_SUMMARY;
            break;
        case 'b':
            if (parse_i64(arg, &v) || v < 1 || v > (1 << 30)) {
                rc = cli_usage_error("submit", "--batch: expected 1..%d, got '%s'", 1 << 30, arg);
                break;
            }
            sub.batch = (int)v;
            given |= GIVEN_BATCH;
            break;
        case 'n':
            if (!*arg) { /* as a task file's `name: ""`: a blank NAME in every listing */
                rc = cli_usage_error("submit", "--name: must not be empty");
                break;
            }
            free(sub.name);
            sub.name = str_dup(arg);
            given |= GIVEN_NAME;
            break;
        case 'r':
            if (parse_i64(arg, &v) || v < 0 || v > 1000) {
                rc = cli_usage_error("submit", "--max-retries: expected 0..1000, got '%s'", arg);
                break;
            }
            sub.max_retries = (int)v;
            given |= GIVEN_RETRIES;
            break;
        case 'e':
            if (submission_add_env(&sub, arg, &err))
                rc = cli_usage_error("submit", "--env: %s", err.msg);
            else if (!str_env_name_valid(arg, strcspn(arg, "=")))
                rc = cli_usage_error("submit", "--env: '%.*s' is not a valid variable name "
                                     "(letters, digits and _, not first a digit)",
                                     (int)strcspn(arg, "="), arg);
            break;
        }
    }
    if (rc || opt < 0) {
        submission_free(&sub);
        return rc ? rc : a->status;
    }
    int argc = a->argc, first = a->operands;
    char **argv = a->argv;
    bool dashdash = first > 1 && !strcmp(argv[first - 1], "--");
    if (first >= argc) {
        submission_free(&sub);
        return cli_usage_error("submit", "nothing to run: give -- COMMAND or a TASKFILE");
    }
    if (!dashdash && (rc = check_file_operand(argc - first, argv + first)) != 0) {
        submission_free(&sub);
        return rc;
    }
    bool task_file = !dashdash && task_file_name(argv[first]);
    if (task_file) {
        submission opts_sub = sub;
        submission_init(&sub);
        rc = submit_load_task_file(argv[first], &sub, &opts_sub, given, &err);
        submission_free(&opts_sub);
        if (rc) {
            submission_free(&sub);
            return cli_fail("submit", &err);
        }
    } else {
        /* `sh -c "''"` only fails at run time, "not found", exit 127 */
        if (strspn(argv[first], " \t\n") == strlen(argv[first])) {
            submission_free(&sub);
            return cli_usage_error("submit", "-- COMMAND: the program to run is a blank word");
        }
        char *cmd = NULL;
        size_t len = 0;
        for (int i = first; i < argc; i++)
            if (str_append_shell_word(&cmd, &len, argv[i])) {
                free(cmd);
                submission_free(&sub);
                carma_err_set(&err, "out of memory");
                return cli_fail("submit", &err);
            }
        free(sub.command);
        sub.command = cmd;
    }
    if ((given & GIVEN_SUMMARY) && sub.batch == 0) {
        submission_free(&sub);
        return cli_usage_error("submit", "--summary needs --batch N");
    }
    /* What would refuse the task is checked before the script runs for its estimate */
    if (prepare_submission(&sub, &err)) {
        submission_free(&sub);
        return cli_fail("submit", &err);
    }
    if (have_mem)
        mem_figures_set(&sub.mem, MEM_ORACLE, mem);
    else if (!task_file && xmem_command_is_python(argv + first, argc - first))
        estimate_xmem(&sub, argv + first, argc - first);
    /* Estimates are computed here, reading the summary with the submitter's own rights. */
    if (sub.summary && sub.batch > 0 && estimate_summary(&sub, &err)) {
        if (given & GIVEN_SUMMARY) {
            submission_free(&sub);
            return cli_fail("submit", &err);
        }
        cli_warn("submit", "no estimates (%s)", err.msg);
    }
    if (rc == 0)
        rc = queue_ctl_apply(&qc, &sub, &err);
    /* Checked here for a clear message; the daemon checks again. */
    json_t *task = NULL;
    if (rc)
        submission_free(&sub);
    if (rc || finish_submission(&sub, qc.clean_env, &task, &err))
        return cli_usage_error("submit", "%s%s", err.msg,
                               strstr(err.msg, "task.env") ? " (--clean-env passes only PATH "
                                                             "and --env)" : "");
    rc = submit_send_all(a, task, qc.array, qc.narray);
    json_decref(task);
    return rc;
}

/* '+': the options stop at the command, so that its own options are left alone. */
const request_cmd cmd_submit = {.usage = usage, .shortopts = "+", .longopts = longopts, .run = run};
