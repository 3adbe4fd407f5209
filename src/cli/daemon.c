/* daemon.c — `carma daemon`: runs the live manager in the foreground. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "daemon/daemon.h"
#include "gpu/backend.h"
#include "gpu/fakegpu_state.h"

static const char *const usage =
    "usage: carma daemon [--socket PATH] [--state DIR] [--config FILE] [--set KEY=VALUE]...\n"
    "                    [--gpu-backend sim|nvml] [--sim-gpus SPEC]\n\n"
    "Runs the GPU manager of this server in the foreground (stop it with SIGTERM or Ctrl-C;\n"
    "running tasks keep running under their supervisors and are found again at the next\n"
    "start). Clients talk to it over a Unix socket (docs/protocol.md).\n\n"
    "  --socket PATH       socket to serve (default: $CARMA_SOCKET, else the config's\n"
    "                      `socket`, else /run/carma/carma.sock as root; otherwise\n"
    "                      $XDG_RUNTIME_DIR/carma.sock when that directory is yours and\n"
    "                      private (no access for group or others, as /run/user/UID;\n"
    "                      else /run/user/UID when it is so),\n"
    "                      else /tmp/carma-UID.sock)\n"
    "  --state DIR         database and task logs (default: the config's `state_dir`, else\n"
    "                      /var/lib/carma as root; otherwise $XDG_STATE_HOME/carma when\n"
    "                      $XDG_STATE_HOME is an absolute path, else ~/.local/state/carma,\n"
    "                      or /tmp/carma-state-UID without $HOME)\n"
    "  --gpu-backend NAME  where GPU readings come from: sim or nvml (config `gpu_backend`);\n"
    "                      nvml keeps only a job's GPUs when SLURM_JOB_GPUS or\n"
    "                      CUDA_VISIBLE_DEVICES is set (docs/slurm-allocation.md), and\n"
    "                      leaves out GPUs in MIG mode: carma places tasks on whole GPUs\n"
    "                      (docs/gpu.md)\n"
    "  --sim-gpus SPEC     the sim backend's GPUs, e.g. 2xA100-40GB (config `sim_gpus`);\n"
    "                      refused with another backend\n"
    "  --config FILE, --set KEY=VALUE   configuration (policy, grace_s, ...; `carma config`);\n"
    "                      default: $CARMA_CONFIG, else " CARMA_SYSCONFDIR
    "/carma.conf if it exists;\n"
    "                      it, and its on_finish program, must be writable only by this\n"
    "                      user or root (their directories too, unless sticky)\n\n"
    "Prometheus metrics (GPUs, tasks, waits, OOM crashes): --set metrics_listen=HOST:PORT\n"
    "serves them read-only at http://HOST:PORT/metrics (off by default; docs/metrics.md).\n";

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void log_line(const char *msg)
{
    time_t now = time(NULL);
    struct tm tm;
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", localtime_r(&now, &tm));
    fprintf(stderr, "%s carma daemon: %s\n", stamp, msg);
}

/* path, relative to the current directory, made absolute in place. */
static int make_absolute(char *path, size_t cap, carma_err *err)
{
    char cwd[PATH_MAX], full[PATH_MAX + CONFIG_STR_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return carma_err_set(err, "the current directory: %s", strerror(errno));
    int n = snprintf(full, sizeof full, "%s/%s", cwd, path);
    if (n < 0 || (size_t)n >= cap)
        return carma_err_set(err, "state directory path too long: %s/%s", cwd, path);
    memcpy(path, full, (size_t)n + 1);
    return 0;
}

int cmd_daemon(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"socket", required_argument, NULL, 'S'},      {"state", required_argument, NULL, 'd'},
        {"config", required_argument, NULL, 'c'},      {"set", required_argument, NULL, 's'},
        {"gpu-backend", required_argument, NULL, 'b'}, {"sim-gpus", required_argument, NULL, 'g'},
        {"help", no_argument, NULL, 'h'},              {NULL, 0, NULL, 0},
    };
    cli_config_args cargs = {.trusted = true};
    carma_err err;
    const char *socket_opt = NULL, *state_opt = NULL, *backend_opt = NULL, *fake_gpus_opt = NULL;
    int opt;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'S':
            if (cli_path_arg("daemon", "--socket", optarg))
                return EXIT_USAGE;
            socket_opt = optarg;
            break;
        case 'd':
            if (cli_path_arg("daemon", "--state", optarg))
                return EXIT_USAGE;
            state_opt = optarg;
            break;
        case 'c':
            if (cli_path_arg("daemon", "--config", optarg))
                return EXIT_USAGE;
            cargs.path = optarg;
            break;
        case 's':
            if (cli_add_set("daemon", &cargs, optarg))
                return EXIT_USAGE;
            break;
        case 'b': /* a typo on the command line is bad usage, as for `carma gpus` */
            if (gpu_backend_check(optarg, &err))
                return cli_usage_error("daemon", "%s", err.msg);
            backend_opt = optarg;
            break;
        case 'g': /* refused as a bad --set sim_gpus=... is, before anything starts */
            if (fakegpu_check_spec(optarg, &err))
                return cli_usage_error("daemon", "--sim-gpus: %s", err.msg);
            fake_gpus_opt = optarg;
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            return cli_bad_option("daemon", argv, optopt, opt);
        }
    }
    if (optind < argc)
        return cli_usage_error("daemon", "unexpected argument '%s'", argv[optind]);
    daemon_options o = {0};
    int rc = cli_load_config(&o.cfg, &cargs, &err);
    if (rc)
        return cli_config_fail("daemon", rc, &err);
    char socket_path[CONFIG_STR_MAX], state_dir[CONFIG_STR_MAX];
    o.socket_default = daemon_serve_socket(socket_opt, &o.cfg, socket_path, sizeof socket_path);
    if (state_opt)
        snprintf(state_dir, sizeof state_dir, "%s", state_opt);
    else if (o.cfg.daemon.state_dir[0])
        snprintf(state_dir, sizeof state_dir, "%s", o.cfg.daemon.state_dir);
    else {
        daemon_default_state_dir(state_dir, sizeof state_dir);
        o.state_default = true;
    }
    /* the attempt directories the daemon names to clients must read from anywhere */
    if (state_dir[0] != '/' && make_absolute(state_dir, sizeof state_dir, &err))
        return cli_fail("daemon", &err);
    o.socket_path = socket_path;
    o.state_dir = state_dir;
    o.backend = backend_opt ? backend_opt : o.cfg.daemon.gpu_backend;
    o.fakegpu_spec = fake_gpus_opt ? fake_gpus_opt : o.cfg.daemon.sim_gpus;
    if (fake_gpus_opt && strcmp(o.backend, "sim")) /* another backend would ignore it */
        return cli_usage_error("daemon", "--sim-gpus goes with the sim GPU backend "
                                         "(--gpu-backend sim), not '%s'", o.backend);
    o.stop = &stop_requested;
    o.log = log_line;
    struct sigaction sa = {0};
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (daemon_run(&o, &err))
        return cli_fail("daemon", &err);
    log_line("stopped");
    return 0;
}
