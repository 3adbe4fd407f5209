/* mps.c — CUDA MPS helpers (see mps.h; the directories are mps_dirs.c's). The control binary
 * runs as a child with an environment built before fork (nothing but async-signal-safe calls
 * after fork), its exec failure reported back through a close-on-exec pipe, and every wait
 * bounded by a timeout. */
#include "gpu/mps.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"

extern char **environ;

static const char *control_bin(const mps_options *o)
{
    if (o->control_bin && *o->control_bin)
        return o->control_bin;
    const char *env = getenv(MPS_CONTROL_ENV);
    return env && *env ? env : MPS_CONTROL_BIN;
}

/* ---- environment ---------------------------------------------------------------------------- */

typedef struct envp_buf {
    char **v;
    int n;
    char own[4][PATH_MAX + 64]; /* our variables */
    int nown;
} envp_buf;

static bool has_key(const char *var, const char *key)
{
    size_t k = strlen(key);
    return !strncmp(var, key, k) && var[k] == '=';
}

static void env_set(envp_buf *e, const char *key, const char *value)
{
    snprintf(e->own[e->nown], sizeof e->own[e->nown], "%s=%s", key, value);
    e->nown++;
}

/* environ without the keys we set, plus ours. */
static int env_build(envp_buf *e)
{
    int n = 0;
    while (environ[n])
        n++;
    e->v = calloc((size_t)n + (size_t)e->nown + 1, sizeof *e->v);
    if (!e->v)
        return -1;
    e->n = 0;
    for (int i = 0; i < n; i++) {
        bool ours = false;
        for (int j = 0; j < e->nown; j++) {
            char key[64];
            snprintf(key, sizeof key, "%.*s", (int)strcspn(e->own[j], "="), e->own[j]);
            ours |= has_key(environ[i], key);
        }
        if (!ours)
            e->v[e->n++] = environ[i];
    }
    for (int j = 0; j < e->nown; j++)
        e->v[e->n++] = e->own[j];
    e->v[e->n] = NULL;
    return 0;
}

static int daemon_env(const mps_options *o, envp_buf *e, carma_err *err)
{
    memset(e, 0, sizeof *e);
    if (!o->pipe_dir || !*o->pipe_dir || !o->log_dir || !*o->log_dir)
        return carma_err_set(err, "MPS needs both a pipe directory and a log directory");
    env_set(e, "CUDA_MPS_PIPE_DIRECTORY", o->pipe_dir);
    env_set(e, "CUDA_MPS_LOG_DIRECTORY", o->log_dir);
    if (o->visible_devices)
        env_set(e, "CUDA_VISIBLE_DEVICES", o->visible_devices);
    if (o->default_thread_pct > 0) {
        char pct[16];
        snprintf(pct, sizeof pct, "%d", o->default_thread_pct);
        env_set(e, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", pct);
    }
    if (env_build(e))
        return carma_err_set(err, "out of memory");
    return 0;
}

/* ---- running the control binary ------------------------------------------------------------- */

typedef struct run_io {
    const char *input;   /* written to stdin, then closed; NULL: /dev/null */
    int out_fd;          /* stdout+stderr go here when >= 0 (not captured) */
    char *reply;         /* else captured into reply[0..cap) */
    size_t cap;
} run_io;

static void child_exec(const char *bin, char *const argv[], char *const envp[], int in_fd,
                       int out_fd, int report_fd, bool shared)
{
    /* The daemon's umask (077) would close to other users whatever the control daemon leaves
     * to the umask in its pipe directory; it is documented as started from a root shell
     * (umask 022), and other users' MPS servers and clients must use its pipes. */
    if (shared)
        umask(022);
    if (dup2(in_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
        dup2(out_fd, STDERR_FILENO) < 0) {
        int e = errno;
        (void)!write(report_fd, &e, sizeof e);
        _exit(127);
    }
    execvpe(bin, argv, envp);
    int e = errno;
    (void)!write(report_fd, &e, sizeof e);
    _exit(127);
}

/* Waits for pid until the deadline; kills it past the deadline. Returns its wait status or -1. */
static int wait_until(pid_t pid, double deadline)
{
    int status;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return status;
        if (r < 0 && errno != EINTR)
            return -1;
        if (clock_mono_s() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return -1;
        }
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* Reads the child's output until EOF or the deadline. */
static void capture(int fd, char *reply, size_t cap, double deadline)
{
    size_t len = 0;
    for (;;) {
        int ms = (int)((deadline - clock_mono_s()) * 1000);
        if (ms <= 0)
            break;
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        char buf[512];
        ssize_t k = read(fd, buf, sizeof buf);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        for (ssize_t i = 0; i < k && reply && len + 1 < cap; i++)
            reply[len++] = buf[i];
    }
    if (reply && cap)
        reply[len] = '\0';
}

/* Writes a short text to a pipe whose reader may already have exited: EPIPE, not a SIGPIPE
 * that would end the caller (the daemon). */
static void write_without_sigpipe(int fd, const char *text)
{
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    ssize_t k = write(fd, text, strlen(text));
    if (k < 0 && errno == EPIPE) {
        struct timespec zero = {0, 0};
        sigtimedwait(&pipe_set, NULL, &zero); /* consume the pending SIGPIPE */
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static int run_control(const mps_options *o, const char *arg, const run_io *io, carma_err *err)
{
    const char *bin = control_bin(o);
    envp_buf env;
    if (daemon_env(o, &env, err))
        return -1;
    double deadline = clock_mono_s() + (o->timeout_s > 0 ? o->timeout_s : 10.0);
    char *argv[] = {(char *)bin, (char *)arg, NULL};
    int in[2] = {-1, -1}, out[2] = {-1, -1}, report[2] = {-1, -1};
    int rc = -1;
    if (pipe2(report, O_CLOEXEC) || pipe2(in, O_CLOEXEC) ||
        (io->out_fd < 0 && pipe2(out, O_CLOEXEC))) {
        carma_err_set(err, "cannot create pipes for %s: %s", bin, strerror(errno));
        goto done;
    }
    pid_t pid = fork();
    if (pid < 0) {
        carma_err_set(err, "cannot fork for %s: %s", bin, strerror(errno));
        goto done;
    }
    if (pid == 0)
        child_exec(bin, argv, env.v, in[0], io->out_fd >= 0 ? io->out_fd : out[1], report[1],
                   o->shared);
    close(report[1]);
    report[1] = -1;
    close(in[0]);
    in[0] = -1;
    if (out[1] >= 0) {
        close(out[1]);
        out[1] = -1;
    }
    if (io->input)
        write_without_sigpipe(in[1], io->input);
    close(in[1]);
    in[1] = -1;
    int exec_errno = 0;
    ssize_t got = read(report[0], &exec_errno, sizeof exec_errno);
    if (out[0] >= 0)
        capture(out[0], io->reply, io->cap, deadline);
    int status = wait_until(pid, deadline);
    if (got == (ssize_t)sizeof exec_errno) {
        if (exec_errno == ENOENT)
            carma_err_set(err, "%s not found%s (is the NVIDIA driver with MPS installed? set %s "
                               "to its path)", bin, strchr(bin, '/') ? "" : " in PATH",
                          MPS_CONTROL_ENV);
        else
            carma_err_set(err, "cannot run %s: %s", bin, strerror(exec_errno));
    } else if (status < 0) {
        carma_err_set(err, "%s %s timed out", bin, arg ? arg : "");
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        carma_err_set(err, "%s %s failed (%s %d)", bin, arg ? arg : "",
                      WIFEXITED(status) ? "exit status" : "signal",
                      WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    } else {
        rc = 0;
    }
done:
    for (int i = 0; i < 2; i++) {
        if (in[i] >= 0)
            close(in[i]);
        if (out[i] >= 0)
            close(out[i]);
        if (report[i] >= 0)
            close(report[i]);
    }
    free(env.v);
    return rc;
}

/* ---- control daemon ------------------------------------------------------------------------- */

int mps_control_start(const mps_options *o, carma_err *err)
{
    if (mps_dirs_prepare(o, err))
        return -1;
    char log_path[PATH_MAX];
    snprintf(log_path, sizeof log_path, "%s/carma-mps-start.log", o->log_dir);
    /* never through a symlink: a root daemon would truncate whatever it points to */
    int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return carma_err_set(err, "cannot write %s: %s", log_path, strerror(errno));
    /* -d daemonizes: its output goes to a file, since the daemon may keep the descriptors. */
    run_io io = {.input = NULL, .out_fd = fd};
    int rc = run_control(o, "-d", &io, err);
    close(fd);
    if (rc == 0 || strstr(err->msg, "not found"))
        return rc;
    char tail[256] = "";
    FILE *f = fopen(log_path, "r");
    if (f) {
        size_t n = fread(tail, 1, sizeof tail - 1, f);
        tail[n] = '\0';
        tail[strcspn(tail, "\n")] = '\0';
        fclose(f);
    }
    if (*tail)
        return carma_err_prefix(err, "starting the MPS control daemon (%s)", tail);
    return carma_err_prefix(err, "starting the MPS control daemon");
}

int mps_control_command(const mps_options *o, const char *cmd, char *reply, size_t cap,
                        carma_err *err)
{
    char line[512];
    if (!cmd || !*cmd || strchr(cmd, '\n') ||
        snprintf(line, sizeof line, "%s\n", cmd) >= (int)sizeof line)
        return carma_err_set(err, "bad MPS control command");
    char scratch[1];
    run_io io = {.input = line, .out_fd = -1, .reply = reply ? reply : scratch,
                 .cap = reply ? cap : sizeof scratch};
    if (run_control(o, NULL, &io, err))
        return carma_err_prefix(err, "MPS command '%s'", cmd);
    return 0;
}

int mps_control_stop(const mps_options *o, carma_err *err)
{
    return mps_control_command(o, "quit", NULL, 0, err);
}

bool mps_control_running(const mps_options *o)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", o->pipe_dir ? o->pipe_dir : "", MPS_PID_FILE);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    long pid = 0;
    bool ok = fscanf(f, "%ld", &pid) == 1 && pid > 0;
    fclose(f);
    return ok && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* ---- clients -------------------------------------------------------------------------------- */

int mps_client_env(const mps_options *o, int ngpus,
                   uint64_t figure_mib, uint64_t margin_mib, int thread_pct, mps_env *out,
                   carma_err *err)
{
    memset(out, 0, sizeof *out);
    if (!o->pipe_dir || !*o->pipe_dir)
        return carma_err_set(err, "MPS needs a pipe directory");
    if (ngpus < 1)
        return carma_err_set(err, "an MPS client needs at least one GPU");
    if (figure_mib == 0)
        return carma_err_set(err, "an MPS memory cap needs the task's memory figure (got 0)");
    if (thread_pct < 0 || thread_pct > 100)
        return carma_err_set(err, "active thread percentage %d is not in 1..100", thread_pct);
    snprintf(out->vars[out->n++], MPS_ENV_LEN, "CUDA_MPS_PIPE_DIRECTORY=%s", o->pipe_dir);
    char *lim = out->vars[out->n++];
    size_t len = (size_t)snprintf(lim, MPS_ENV_LEN, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=");
    /* MPS reads a limit as an integer with an 'M' or 'G' qualifier (the control daemon's
     * set_default_device_pinned_mem_limit says so; "MB" is not one of them) */
    for (int i = 0; i < ngpus; i++) {
        int k = snprintf(lim + len, MPS_ENV_LEN - len, "%s%d=%lluM", i ? "," : "", i,
                         (unsigned long long)(figure_mib + margin_mib));
        if (k < 0 || (size_t)k >= MPS_ENV_LEN - len)
            return carma_err_set(err, "MPS memory cap for %d GPUs is too long", ngpus);
        len += (size_t)k;
    }
    if (thread_pct > 0)
        snprintf(out->vars[out->n++], MPS_ENV_LEN, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%d",
                 thread_pct);
    return 0;
}

/* ---- servers in NVML's lists ----------------------------------------------------------------- */

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

bool mps_is_server_process(const char *proc_root, pid_t pid)
{
    static const char server[] = "nvidia-cuda-mps-server";
    char path[PATH_MAX], buf[PATH_MAX];
    /* argv[0]: readable for every user's processes */
    snprintf(path, sizeof path, "%s/%d/cmdline", proc_root, (int)pid);
    FILE *f = fopen(path, "r");
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        if (n > 0)
            return !strcmp(base_name(buf), server);
    }
    snprintf(path, sizeof path, "%s/%d/exe", proc_root, (int)pid);
    ssize_t n = readlink(path, buf, sizeof buf - 1);
    if (n > 0) {
        buf[n] = '\0';
        return !strcmp(base_name(buf), server);
    }
    snprintf(path, sizeof path, "%s/%d/comm", proc_root, (int)pid);
    f = fopen(path, "r");
    if (!f)
        return false;
    size_t k = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[k] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    return !strncmp(buf, server, 15) && strlen(buf) == 15;
}
