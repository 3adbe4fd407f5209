/* run.c — `carma run TASKFILE...`: submit task files, wait for all of them, report how each
 * ended; a Slurm job script in one line. It uses the daemon the other commands use or, inside a
 * job or when none answers, a private one it starts and stops itself (private_daemon.h). The
 * task files are read by `carma submit`'s code (submit.h) and the ends judged by `carma wait`'s
 * (wait.h), so the three commands agree on files and exit codes; what it says of each task
 * (the end lines, kept output, the --json report) is run_report.c's. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/fmt.h"
#include "cli/private_daemon.h"
#include "cli/request.h"
#include "cli/run_report.h"
#include "cli/submit.h"
#include "cli/wait.h"
#include "daemon/connect.h"
#include "gpu/backend.h"
#include "gpu/fakegpu_state.h"
#include "util/clock.h"
#include "util/strutil.h"

#define CANCEL_WAIT_S 120.0   /* after cancelling: how long the tasks may take to end */
#define DAEMON_START_S 60.0   /* how long a private daemon may take to answer */
#define MAX_FILES 1000

enum { OPT_PRIVATE = 0x300, OPT_GPU_BACKEND, OPT_SIM_GPUS, OPT_TIMEOUT, OPT_OUTPUT_DIR };

static const char usage[] =
    "usage: carma run [--private] [--gpu-backend sim|nvml] [--sim-gpus SPEC]\n"
    "                 [--output-dir DIR] [--timeout SECONDS] [--socket PATH] [--json]\n"
    "                 TASKFILE...\n\n"
    "Submits every task file (carma .yaml or CARMA .rad, read as `carma submit TASKFILE`\n"
    "reads them), waits until all have ended, printing a line as each ends (task ID STATE\n"
    "FILE), and exits as `carma wait` does: 0 when all ended done; else the worst of 3 (one\n"
    "was cancelled), 4 (one ran past its time limit), 5 (one failed); 124 when --timeout ran\n"
    "out; 1 on an error; 2 on a usage error; 128+N after signal N. Every file is read and\n"
    "checked before anything is submitted, and all go in one request: the daemon queues all\n"
    "of them or, refusing one, none.\n\n"
    "It uses the daemon the other commands would use. It starts a private daemon of its own\n"
    "instead when none answers there, with --private, or inside a Slurm job (SLURM_JOB_ID\n"
    "set) unless --socket or $CARMA_SOCKET names a daemon: its socket and state live in a\n"
    "fresh directory carma-run-XXXXXX (mode 0700) under $TMPDIR or /tmp, removed with the\n"
    "daemon when the tasks have ended; each task's output is kept first, in --output-dir:\n"
    "its last attempt's stdout and stderr as carma-RUN-ID.out and .err, an earlier attempt's\n"
    "(one an out-of-memory relaunch followed) as carma-RUN-ID.attemptN.out and .err (RUN:\n"
    "the Slurm job's id, else carma run's pid). Its nvml backend uses only the job's GPUs\n"
    "(SLURM_JOB_GPUS, else CUDA_VISIBLE_DEVICES). On SIGINT, SIGTERM or SIGHUP, and when\n"
    "--timeout runs out, carma run cancels its tasks before it exits; a daemon that does not\n"
    "answer is given 3 s after a signal, and a second signal stops the cancels it does not\n"
    "answer (the tasks may then run on: carma queue).\n\n"
    "  --private           always start a private daemon\n"
    "  --gpu-backend NAME  a private daemon's GPU backend: sim or nvml (default: the config's\n"
    "                      `gpu_backend`, nvml)\n"
    "  --sim-gpus SPEC     a private sim daemon's GPUs, e.g. 2xA100-40GB (config `sim_gpus`);\n"
    "                      refused with another backend\n"
    "  --output-dir DIR    where a private daemon's task output is kept (default: the\n"
    "                      current directory, as Slurm's slurm-JOBID.out)\n"
    "  --timeout SECONDS   cancel the tasks still live after this long, and exit 124\n"
    REQUEST_USAGE
    "                                   and a private daemon's (it is started with them)\n";

static const struct option longopts[] = {
    {"private", no_argument, NULL, OPT_PRIVATE},
    {"gpu-backend", required_argument, NULL, OPT_GPU_BACKEND},
    {"sim-gpus", required_argument, NULL, OPT_SIM_GPUS},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"output-dir", required_argument, NULL, OPT_OUTPUT_DIR},
    {NULL, 0, NULL, 0},
};

static volatile sig_atomic_t stop_signal, signals_seen;

static void on_signal(int sig)
{
    stop_signal = sig;
    signals_seen++;
}

/* --sim-gpus with a private daemon whose backend (--gpu-backend, else the config's) is not
 * sim: refused here, as `carma daemon` would refuse it, rather than after that daemon failed.
 * True with *status set when refused (or the config cannot be read). */
static bool sim_gpus_refused(const request_args *a, const run_opts *o, int *status)
{
    const char *backend = o->gpu_backend;
    carma_config cfg;
    carma_err err;
    if (!backend) {
        int rc = cli_load_config(&cfg, &a->opts.config, &err);
        if (rc) {
            *status = cli_config_fail("run", rc, &err);
            return true;
        }
        backend = cfg.daemon.gpu_backend;
    }
    if (!strcmp(backend, "sim"))
        return false;
    *status = cli_usage_error("run", "--sim-gpus goes with the sim GPU backend (--gpu-backend "
                                     "sim), not '%s'", backend);
    return true;
}

/* Reads the options; true when the command ends now with *status (--help, usage error). */
static bool read_options(request_args *a, run_opts *o, int *status)
{
    int opt;
    o->timeout_s = INFINITY;
    while ((opt = request_next_option(a)) > 0) {
        switch (opt) {
        case OPT_PRIVATE:
            o->private_daemon = true;
            break;
        case OPT_GPU_BACKEND: { /* refused here, not by the private daemon as its own usage */
            carma_err err;
            if (gpu_backend_check(a->arg, &err)) {
                *status = cli_usage_error("run", "%s", err.msg);
                return true;
            }
            o->gpu_backend = a->arg;
            break;
        }
        case OPT_SIM_GPUS: { /* as `carma daemon` refuses it: usage, not a failed daemon */
            carma_err err;
            if (fakegpu_check_spec(a->arg, &err)) {
                *status = cli_usage_error("run", "--sim-gpus: %s", err.msg);
                return true;
            }
            o->sim_gpus = a->arg;
            break;
        }
        case OPT_OUTPUT_DIR:
            if ((*status = cli_path_arg("run", "--output-dir", a->arg)) != 0)
                return true;
            o->output_dir = a->arg;
            break;
        case OPT_TIMEOUT:
            if (parse_double(a->arg, &o->timeout_s) || !(o->timeout_s >= 0)) {
                *status = cli_usage_error("run", "--timeout: expected seconds, got '%s'",
                                          a->arg);
                return true;
            }
            break;
        }
    }
    *status = a->status;
    if (opt < 0)
        return true;
    if (o->sim_gpus && sim_gpus_refused(a, o, status))
        return true;
    int n = a->argc - a->operands;
    if (n < 1 || n > MAX_FILES) {
        *status = cli_usage_error("run", "expected 1 to %d task files", MAX_FILES);
        return true;
    }
    return false;
}

/* Every file read and checked before any is submitted: a bad one stops the run with nothing
 * queued. tasks gets one {"file", "task"} per file. */
static int read_task_files(const request_args *a, json_t *tasks)
{
    int bad = 0;
    for (int i = a->operands; i < a->argc; i++) {
        json_t *task;
        carma_err err;
        if (submit_task_file_json(a->argv[i], &task, &err)) {
            cli_fail("run", &err); /* it may quote the file's text: escapes shown escaped */
            bad++;
            continue;
        }
        json_array_append_new(tasks, json_pack("{ssso}", "file", a->argv[i], "task", task));
    }
    if (bad)
        fprintf(stderr, "carma run: %d of %d task file(s) cannot be run; nothing was submitted\n",
                bad, a->argc - a->operands);
    return bad ? 1 : 0;
}

/* Whether a daemon answers on the sockets these options lead to. */
static bool daemon_answers(const request_args *a)
{
    carma_err err;
    int fd = request_connect(a, &err);
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

/* Inside a Slurm job the tasks belong on the job's GPUs, not on a shared daemon's, unless the
 * script points at a daemon on purpose. */
static bool wants_private(const request_args *a, const run_opts *o)
{
    if (o->private_daemon)
        return true;
    bool named = a->opts.socket ||
                 (getenv("CARMA_SOCKET") && *getenv("CARMA_SOCKET"));
    const char *job = getenv("SLURM_JOB_ID");
    if (!named && job && *job)
        return true;
    return !daemon_answers(a);
}

/* The task (file) t queued with id: reported and cancelled by its id from now on. */
static void submitted(json_t *t, json_int_t id)
{
    json_object_del(t, "task");
    json_object_set_new(t, "id", json_integer(id));
    json_object_set_new(t, "state", json_string("queued"));
}

/* For a daemon that takes no batch: submits every task held, then releases them once the
 * daemon has taken all, so that a file it refuses leaves none of them started. On a failure
 * the ones already queued are kept in `tasks` (with their ids) so that the caller cancels and
 * reports them; should carma run die meanwhile, they stay held. */
static int submit_held(const request_args *a, json_t *tasks)
{
    size_t i;
    json_t *t, *reply;
    json_array_foreach(tasks, i, t) {
        json_int_t id;
        if (stop_signal)
            return 128 + stop_signal;
        json_t *task = json_object_get(t, "task");
        json_object_set_new(task, "hold", json_true());
        int rc = submit_send(a, task, &id);
        if (rc)
            return rc; /* this one and the rest: reported as not submitted */
        submitted(t, id);
    }
    json_array_foreach(tasks, i, t) {
        if (stop_signal)
            return 128 + stop_signal;
        int rc = request_send(a, json_pack("{sssO}", "verb", "release", "id",
                                           json_object_get(t, "id")), &reply);
        if (rc)
            return rc;
        json_decref(reply);
    }
    return 0;
}

/* Submits every task in one request: the daemon queues all of them or, refusing one (more
 * GPUs than it has, a user's task cap), none; a carma run killed while it sends them leaves
 * all or none, none held. An older daemon's are sent held one at a time (submit_held). */
static int submit_all(const request_args *a, json_t *tasks)
{
    if (stop_signal)
        return 128 + stop_signal;
    size_t i, n = json_array_size(tasks);
    json_t *t, *specs = json_array();
    json_int_t *ids = calloc(n, sizeof *ids);
    json_array_foreach(tasks, i, t)
        json_array_append(specs, json_object_get(t, "task"));
    int rc = 1;
    if (ids)
        rc = submit_send_batch(a, specs, ids);
    else
        fputs("carma run: out of memory\n", stderr);
    json_decref(specs);
    if (rc == 0) {
        json_array_foreach(tasks, i, t)
            submitted(t, ids[i]);
    }
    free(ids);
    return rc == SUBMIT_UNTAKEN ? submit_held(a, tasks) : rc;
}

/* One look at every live task; prints those that ended, raising *worst. *left: still live. */
static int refresh_all(const request_args *a, const run_opts *o, json_t *tasks, int *left,
                       int *worst)
{
    size_t i;
    json_t *t;
    *left = 0;
    json_array_foreach(tasks, i, t) {
        if (!json_object_get(t, "id") || !wait_state_live(wait_task_state(t)))
            continue;
        bool ended;
        int rc = wait_refresh(a, t, &ended);
        if (rc)
            return rc;
        if (!ended) {
            (*left)++;
            continue;
        }
        run_task_ended(a, o, t, worst);
    }
    return 0;
}

/* Asks the daemon to cancel t. 0 when it did. Else -1 with err saying why, *answered telling
 * whether the daemon refused (the task may have ended since it was last looked at: "task N is
 * already done") or could not be asked at all. */
static int send_cancel(const request_args *a, const json_t *t, bool *answered, carma_err *err)
{
    *answered = false;
    int fd = request_connect(a, err);
    if (fd < 0)
        return -1;
    json_t *reply = daemon_call_answered(fd, json_pack("{sssO}", "verb", "cancel", "id",
                                                       json_object_get(t, "id")),
                                         answered, err);
    close(fd);
    int rc = reply ? 0 : -1;
    json_decref(reply);
    return rc;
}

/* Cancels every live task, then waits (a while) until they have ended: tasks of a job that
 * is going away must not outlive it. A signal other than the one that stopped the run (one
 * that comes during the cancels too) stops the waiting, and the cancels only where the daemon
 * does not answer them. */
static void cancel_and_drain(const request_args *a, const run_opts *o, json_t *tasks,
                             int *worst)
{
    const int spent = stop_signal ? 1 : 0;
    size_t i;
    json_t *t;
    int left = 0;
    json_array_foreach(tasks, i, t) {
        if (!json_object_get(t, "id") || !wait_state_live(wait_task_state(t)))
            continue;
        bool answered, ended;
        carma_err err;
        if (send_cancel(a, t, &answered, &err) == 0) {
            left++;
            continue;
        }
        /* a refusal of a task that has ended since the last look is its end, not a failure */
        if (answered && wait_refresh(a, t, &ended) == 0 && ended) {
            run_task_ended(a, o, t, worst);
            continue;
        }
        /* the daemon is gone or will not: say which task, do not claim it cancelled */
        carma_err_prefix(&err, "task %lld (%s) could not be cancelled",
                         (long long)json_integer_value(json_object_get(t, "id")),
                         json_string_value(json_object_get(t, "file")));
        cli_fail("run", &err);
        if (!answered && signals_seen > spent) {
            /* a second signal ended a cancel the daemon did not answer: the others would
             * hang the same way */
            fprintf(stderr, "carma run: the daemon does not answer; the tasks not cancelled "
                            "may still run (carma queue)\n");
            return;
        }
    }
    if (left == 0)
        return;
    fprintf(stderr, "carma run: cancelled %d task(s); waiting for them to end\n", left);
    double give_up = clock_mono_s() + CANCEL_WAIT_S;
    while (refresh_all(a, o, tasks, &left, worst) == 0 && left > 0) {
        if (clock_mono_s() > give_up || signals_seen > spent) {
            fprintf(stderr, "carma run: %d task(s) still live\n", left);
            return;
        }
        wait_nap(INFINITY);
    }
}

/* Submits, waits, and on a signal, --timeout or error cancels what is still live. */
static int submit_and_wait(const request_args *a, const run_opts *o, json_t *tasks)
{
    int rc = submit_all(a, tasks), worst = 0, left = 0;
    double deadline = clock_mono_s() + o->timeout_s;
    while (rc == 0) {
        if ((rc = refresh_all(a, o, tasks, &left, &worst)) != 0 || left == 0 || stop_signal)
            break;
        if (!wait_nap(deadline)) {
            rc = EXIT_WAIT_TIMEOUT;
            fprintf(stderr, "carma run: --timeout %g s ran out\n", o->timeout_s);
        }
    }
    /* a signal stops the waiting, or ended a request in progress (not said twice: submit_all
     * stopped by one returns its status) */
    if (stop_signal && rc != 128 + stop_signal) {
        rc = 128 + stop_signal;
        fprintf(stderr, "carma run: signal %d\n", (int)stop_signal);
    }
    if (rc)
        cancel_and_drain(a, o, tasks, &worst);
    run_print_report(a, tasks);
    return rc ? rc : worst;
}

static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: a wait in progress ends at once */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* a stopped or hung daemon must not hold the run past a signal (nor the cancels past a
     * second one) */
    daemon_calls_interruptible(&signals_seen);
}

static int run(request_args *a)
{
    run_opts o;
    memset(&o, 0, sizeof o);
    int status;
    if (read_options(a, &o, &status))
        return status;
    const char *job = getenv("SLURM_JOB_ID");
    char base[32];
    if (job && *job && strlen(job) < sizeof base && strspn(job, "0123456789_") == strlen(job))
        snprintf(base, sizeof base, "%s", job);
    else
        snprintf(base, sizeof base, "%ld", (long)getpid());
    json_t *tasks = json_array();
    if (read_task_files(a, tasks)) {
        json_decref(tasks);
        return 1;
    }
    catch_signals();
    private_daemon pd;
    memset(&pd, 0, sizeof pd);
    carma_err err;
    int rc = 0;
    if (wants_private(a, &o)) {
        struct stat st; /* checked now: the tasks' output is kept there at their ends */
        if (!o.output_dir)
            o.output_dir = ".";
        if (stat(o.output_dir, &st) || !S_ISDIR(st.st_mode) || access(o.output_dir, W_OK | X_OK)) {
            carma_err_set(&err, "--output-dir %s: not a directory you can write in",
                          o.output_dir);
            json_decref(tasks);
            return cli_fail("run", &err); /* the name is shown, not obeyed by the terminal */
        }
        run_pick_id(&o, base);
        private_daemon_opts po = {o.gpu_backend, o.sim_gpus, &a->opts.config, DAEMON_START_S,
                                  &stop_signal};
        if (private_daemon_start(&pd, &po, &err)) {
            json_decref(tasks);
            cli_fail("run", &err);
            return stop_signal ? 128 + stop_signal : 1;
        }
        fputs("carma run: started a private daemon (socket ", stderr);
        fput_escaped(stderr, pd.socket); /* under $TMPDIR, whatever that names */
        fputs(")\n", stderr);
        a->opts.socket = pd.socket;
        o.keep_logs = true;
    } else if (o.gpu_backend || o.sim_gpus || o.output_dir) { /* else silently not obeyed */
        cli_warn("run", "--gpu-backend, --sim-gpus and --output-dir are for a private daemon "
                        "(the output of a daemon's tasks is read with carma logs ID); a daemon "
                        "already answers (--private starts one anyway)");
    }
    rc = submit_and_wait(a, &o, tasks);
    json_decref(tasks);
    if (pd.dir[0]) {
        if (private_daemon_stop(&pd, &err)) {
            cli_fail("run", &err);
            rc = rc ? rc : 1;
        }
    }
    return rc;
}

const request_cmd cmd_run = {.usage = usage, .shortopts = "", .longopts = longopts, .run = run};
