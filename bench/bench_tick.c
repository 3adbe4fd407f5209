/* bench_tick.c — the daemon's CPU time per monitoring tick with 8 GPUs (goal < 1 ms; the
 * reference spawned nvidia-smi and dcgmi several times a second). Two figures:
 *   1. in-process: the daemon's own tick function (d_monitor_tick: read the fake-GPU backend's
 *      state file, push 8 windows, aggregate with the risk blend, rebuild the views) called
 *      back to back, CPU time from getrusage; then again with the 16 processes as running
 *      tasks, so each tick also reads /proc once and matches every task's process tree
 *      against the GPUs' process lists;
 *   2. a real `carma daemon` process (daemon_run in a child) ticking every 5 ms for 3 s
 *      with 16 processes registered on its GPUs, CPU time from /proc/PID/stat.
 * Usage: bench_tick [TICKS] */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/daemon_int.h"
#include "gpu/fakegpu_state.h"

static volatile sig_atomic_t stop_flag;
static void on_term(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

/* Registers 16 processes (this one's children, sleeping) across the 8 GPUs. */
static pid_t helpers[16];
static void register_load(const char *state_file)
{
    for (int i = 0; i < 16; i++) {
        helpers[i] = fork();
        if (helpers[i] == 0) {
            pause();
            _exit(0);
        }
        char dev[8];
        snprintf(dev, sizeof dev, "%d", i % 8);
        int g;
        uint64_t t, a;
        carma_err err;
        fakegpu_state_register(state_file, helpers[i], dev, 2000, 0.2 + 0.02 * i, 0.1, 0.1, &g,
                               &t, &a, &err);
    }
}

static void kill_load(void)
{
    for (int i = 0; i < 16; i++) {
        kill(helpers[i], SIGKILL);
        waitpid(helpers[i], NULL, 0);
    }
}

int main(int argc, char **argv)
{
    int ticks = argc > 1 ? atoi(argv[1]) : 20000;
    char root[] = "/tmp/carma-tick-XXXXXX";
    if (!mkdtemp(root))
        return 1;
    char state[128], sock[128], fake_gpus[160];
    snprintf(state, sizeof state, "%s/state", root);
    snprintf(sock, sizeof sock, "%s/s", root);
    snprintf(fake_gpus, sizeof fake_gpus, "%s/sim-gpus", state); /* the fake-GPU state file */
    if (mkdir(state, 0755))
        return 1;

    daemon_options o = {0};
    config_defaults(&o.cfg);
    o.state_dir = state;
    o.socket_path = sock;
    o.backend = "sim";
    o.fakegpu_spec = "8xA100-80GB";
    o.stop = &stop_flag;
    daemon_state d = {0};
    d.opts = &o;
    d.cfg = o.cfg;
    carma_err err;
    if (d_monitor_open(&d, &err) || !(d.core = sched_create(&d.cfg.sched, d.ngpus, &err))) {
        fprintf(stderr, "bench_tick: %s\n", err.msg);
        return 1;
    }
    register_load(fake_gpus);
    d_monitor_tick(&d);
    double c0 = cpu_s();
    for (int i = 0; i < ticks; i++)
        d_monitor_tick(&d);
    double per = (cpu_s() - c0) / ticks;
    printf(
        "tick (in-process, 8 GPUs, 16 procs): %d ticks, %.1f us CPU per tick  [goal < 1000 us]\n",
        ticks, per * 1e6);
    /* the same processes as 16 running tasks, followed through /proc */
    dtask tasks[16], *running[16];
    memset(tasks, 0, sizeof tasks);
    for (int i = 0; i < 16; i++) {
        tasks[i].st.id = (uint64_t)i + 1;
        tasks[i].att.pid = helpers[i];
        tasks[i].att.ngpus = 1;
        tasks[i].att.gpus[0] = i % 8;
        tasks[i].att.peak_mib = -1;
        /* the peak (2000 MiB) as already stored: each tick is a running task's steady state,
         * with no attempt row to write (the daemon writes one only when the peak has grown by
         * 64 MiB, and this bench has no database) */
        tasks[i].att.peak_saved_mib = 2000;
        running[i] = &tasks[i];
    }
    d.running = running;
    d.nrunning = 16;
    int tticks = ticks / 10 > 0 ? ticks / 10 : 1;
    c0 = cpu_s();
    for (int i = 0; i < tticks; i++)
        d_monitor_tick(&d);
    double per_tasks = (cpu_s() - c0) / tticks;
    printf("tick (in-process, 8 GPUs, 16 running tasks followed in /proc): %d ticks, %.1f us CPU "
           "per tick  [goal < 1000 us]\n", tticks, per_tasks * 1e6);
    bool peaks = true;
    for (int i = 0; i < 16; i++)
        peaks &= tasks[i].att.peak_mib == 2000 && tasks[i].att.seen[0];
    if (!peaks)
        fprintf(stderr, "bench_tick: the tasks' processes were not all matched\n");
    d.running = NULL;
    d.nrunning = 0;
    per = per > per_tasks ? per : per_tasks;
    sched_destroy(d.core);
    d_monitor_close(&d);

    /* 2. a whole daemon process */
    o.cfg.daemon.sample_interval_s = 0.005;
    pid_t pid = fork();
    if (pid == 0) {
        struct sigaction sa = {0};
        sa.sa_handler = on_term;
        sigaction(SIGTERM, &sa, NULL);
        _exit(daemon_run(&o, &err) ? 1 : 0);
    }
    struct timespec ts = {3, 0};
    nanosleep(&ts, NULL);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    unsigned long ut = 0, st = 0;
    if (f) {
        if (fscanf(f, "%*d %*s %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
            ut = st = 0;
        fclose(f);
    }
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    double cpu = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
    double nticks = 3.0 / 0.005;
    printf("tick (carma daemon process, 8 GPUs, 16 procs, every 5 ms for 3 s): ~%.0f ticks, "
           "%.1f us CPU per tick (incl. start-up; clock-tick resolution %.0f us/tick)\n",
           nticks, cpu / nticks * 1e6, 1e6 / (double)sysconf(_SC_CLK_TCK) / nticks);
    kill_load();
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) != 0 || per >= 1e-3;
}
