/* test_gpu_mps.c — MPS helpers without a GPU: the client environment, and the control daemon's
 * start/command/stop plumbing run against a stand-in nvidia-cuda-mps-control script that
 * records what it was given; the absent binary, a failing start and a hung command; a symlink
 * planted where the start's log goes is not followed (the daemon may be root). For a daemon
 * whose tasks run as other users (shared): the default pipe directory lies outside the
 * private state directory, is made 0755 with its parents, and one other users could not pass
 * through to (or whose parent another user could swap) is refused; the control daemon starts
 * under umask 022. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "gpu/mps.h"

static char dir[64], bin[128], pipe_dir[128], log_dir[128];

/* The stand-in: `-d` records its environment and starts a sleeping "daemon" whose pid goes to
 * the pid file; a command on stdin is logged and answered. */
static const char *const script =
    "#!/bin/sh\n"
    "if [ \"$1\" = -d ]; then\n"
    "  [ -n \"$FAIL_START\" ] && { echo 'cannot start: no GPUs'; exit 1; }\n"
    "  env | grep -E '^CUDA_(MPS_|VISIBLE)' | sort > \"$CUDA_MPS_PIPE_DIRECTORY/daemon-env\"\n"
    "  umask > \"$CUDA_MPS_PIPE_DIRECTORY/umask\"\n"
    "  sleep 30 >/dev/null 2>&1 </dev/null &\n"
    "  echo $! > \"$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid\"\n"
    "  exit 0\n"
    "fi\n"
    "read cmd\n"
    "echo \"$cmd\" >> \"$CUDA_MPS_PIPE_DIRECTORY/commands\"\n"
    "case \"$cmd\" in\n"
    "  get_server_list) echo 4321 ;;\n"
    "  hang) exec sleep 5 ;;\n"
    "  quit) kill $(cat \"$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid\") ;;\n"
    "  *) echo \"unknown command $cmd\"; exit 1 ;;\n"
    "esac\n";

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/carma-mps-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(bin, sizeof bin, "%s/nvidia-cuda-mps-control", dir);
    snprintf(pipe_dir, sizeof pipe_dir, "%s/run/pipe", dir);
    snprintf(log_dir, sizeof log_dir, "%s/log", dir);
    FILE *f = fopen(bin, "w");
    assert_non_null(f);
    fputs(script, f);
    fclose(f);
    chmod(bin, 0700);
    unsetenv("FAIL_START");
    unsetenv(MPS_CONTROL_ENV);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static char *slurp(const char *d, const char *name)
{
    static char buf[2048];
    char path[256];
    snprintf(path, sizeof path, "%s/%s", d, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static void client_env_caps_memory_per_gpu(void **state)
{
    (void)state;
    mps_options o = {.pipe_dir = "/run/carma/mps"};
    mps_env e;
    carma_err err;
    assert_int_equal(mps_client_env(&o, 2, 10000, 2048, 50, &e, &err), 0);
    assert_int_equal(e.n, 3);
    assert_string_equal(e.vars[0], "CUDA_MPS_PIPE_DIRECTORY=/run/carma/mps");
    assert_string_equal(e.vars[1],
                        "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=12048M,1=12048M");
    assert_string_equal(e.vars[2], "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50");
    assert_int_equal(mps_client_env(&o, 1, 512, 0, 0, &e, &err), 0);
    assert_int_equal(e.n, 2); /* no thread percentage asked */
    assert_string_equal(e.vars[1], "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=512M");
}

static void client_env_rejects_bad_input(void **state)
{
    (void)state;
    mps_options o = {.pipe_dir = "/run/carma/mps"};
    mps_env e;
    carma_err err = {""};
    assert_int_equal(mps_client_env(&o, 1, 0, 2048, 0, &e, &err), -1);
    assert_non_null(strstr(err.msg, "memory figure"));
    assert_int_equal(mps_client_env(&o, 1, 100, 0, 101, &e, &err), -1);
    assert_non_null(strstr(err.msg, "101"));
    assert_int_equal(mps_client_env(&o, 0, 100, 0, 0, &e, &err), -1);
    mps_options none = {0};
    assert_int_equal(mps_client_env(&none, 1, 100, 0, 0, &e, &err), -1);
    assert_non_null(strstr(err.msg, "pipe directory"));
}

static void control_daemon_start_command_stop(void **state)
{
    (void)state;
    mps_options o = {.control_bin = bin, .pipe_dir = pipe_dir, .log_dir = log_dir,
                     .visible_devices = "GPU-aaaa,GPU-bbbb", .default_thread_pct = 60};
    carma_err err = {""};
    assert_false(mps_control_running(&o));
    int rc = mps_control_start(&o, &err);
    if (rc)
        print_error("%s\n", err.msg);
    assert_int_equal(rc, 0);
    struct stat st;
    assert_int_equal(stat(log_dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    const char *env = slurp(pipe_dir, "daemon-env");
    assert_non_null(env);
    char want[512];
    snprintf(want, sizeof want,
             "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=60\nCUDA_MPS_LOG_DIRECTORY=%s\n"
             "CUDA_MPS_PIPE_DIRECTORY=%s\nCUDA_VISIBLE_DEVICES=GPU-aaaa,GPU-bbbb\n",
             log_dir, pipe_dir);
    assert_string_equal(env, want);
    assert_true(mps_control_running(&o));
    char reply[64];
    assert_int_equal(mps_control_command(&o, "get_server_list", reply, sizeof reply, &err), 0);
    assert_string_equal(reply, "4321\n");
    assert_int_equal(mps_control_command(&o, "bogus", reply, sizeof reply, &err), -1);
    assert_non_null(strstr(err.msg, "exit status 1"));
    assert_int_equal(mps_control_stop(&o, &err), 0);
    assert_string_equal(slurp(pipe_dir, "commands"), "get_server_list\nbogus\nquit\n");
    for (int i = 0; i < 200 && mps_control_running(&o); i++)
        usleep(10000); /* the killed sleep is reaped by init */
    assert_false(mps_control_running(&o));
}

static void absent_binary_is_named(void **state)
{
    (void)state;
    mps_options o = {.control_bin = "/nonexistent/nvidia-cuda-mps-control",
                     .pipe_dir = pipe_dir, .log_dir = log_dir};
    carma_err err = {""};
    assert_int_equal(mps_control_start(&o, &err), -1);
    assert_non_null(strstr(err.msg, "/nonexistent/nvidia-cuda-mps-control not found"));
    /* through PATH */
    char *old = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    setenv("PATH", dir, 1); /* holds no nvidia-cuda-mps-control of that name? it does: */
    unlink(bin);            /* so take it away */
    o.control_bin = NULL;
    assert_int_equal(mps_control_stop(&o, &err), -1);
    assert_non_null(strstr(err.msg, "nvidia-cuda-mps-control not found in PATH"));
    setenv("PATH", old, 1);
    free(old);
}

static void failing_start_quotes_its_output(void **state)
{
    (void)state;
    setenv("FAIL_START", "1", 1);
    setenv(MPS_CONTROL_ENV, bin, 1); /* the binary named through the environment */
    mps_options o = {.pipe_dir = pipe_dir, .log_dir = log_dir};
    carma_err err = {""};
    assert_int_equal(mps_control_start(&o, &err), -1);
    assert_non_null(strstr(err.msg, "cannot start: no GPUs"));
    assert_non_null(strstr(err.msg, "exit status 1"));
    unsetenv("FAIL_START");
    unsetenv(MPS_CONTROL_ENV);
}

static void hung_command_times_out(void **state)
{
    (void)state;
    mps_options o = {.control_bin = bin, .pipe_dir = pipe_dir, .log_dir = log_dir,
                     .timeout_s = 0.3};
    carma_err err = {""};
    mkdir(dir, 0700);
    char p[160];
    snprintf(p, sizeof p, "%s/run", dir);
    mkdir(p, 0700);
    mkdir(pipe_dir, 0700);
    assert_int_equal(mps_control_command(&o, "hang", NULL, 0, &err), -1);
    assert_non_null(strstr(err.msg, "timed out"));
    assert_int_equal(mps_control_command(&o, "two\nlines", NULL, 0, &err), -1);
    assert_non_null(strstr(err.msg, "bad MPS control command"));
}

static void planted_log_symlink_is_not_followed(void **state)
{
    (void)state;
    char victim[160], link[200];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    FILE *f = fopen(victim, "w");
    assert_non_null(f);
    fputs("precious\n", f);
    fclose(f);
    assert_int_equal(mkdir(log_dir, 0700), 0);
    snprintf(link, sizeof link, "%s/carma-mps-start.log", log_dir);
    assert_int_equal(symlink(victim, link), 0);
    mps_options o = {.control_bin = bin, .pipe_dir = pipe_dir, .log_dir = log_dir};
    carma_err err = {""};
    assert_int_equal(mps_control_start(&o, &err), -1);
    assert_non_null(strstr(err.msg, link));
    assert_string_equal(slurp(dir, "victim"), "precious\n");
}

static void default_dirs_leave_a_shared_pipe_outside_the_state(void **state)
{
    (void)state;
    char pipe[64], log[64];
    carma_err err = {""};
    assert_int_equal(mps_default_dirs("/home/u/.local/state/carma", false, pipe, sizeof pipe,
                                      log, sizeof log, &err), 0);
    assert_string_equal(pipe, "/home/u/.local/state/carma/mps/pipe");
    assert_string_equal(log, "/home/u/.local/state/carma/mps/log");
    assert_int_equal(mps_default_dirs("/var/lib/carma/", true, pipe, sizeof pipe, log,
                                      sizeof log, &err), 0);
    assert_string_equal(pipe, "/var/lib/carma-mps");
    assert_string_equal(log, "/var/lib/carma/mps/log"); /* the log stays private */
    const char *longer = "/a/state/directory/path/longer/than/the/sixty-four/bytes/given";
    assert_int_equal(mps_default_dirs(longer, false, pipe, sizeof pipe, log, sizeof log, &err),
                     -1);
    assert_non_null(strstr(err.msg, "too long"));
}

static unsigned mode_of(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (unsigned)(st.st_mode & 07777);
}

static void shared_pipe_dir_is_reachable_by_every_user(void **state)
{
    (void)state;
    assert_int_equal(chmod(dir, 0755), 0); /* mkdtemp's 0700 would stop every other user */
    char pipe[160], parent[160];
    snprintf(parent, sizeof parent, "%s/a", dir);
    snprintf(pipe, sizeof pipe, "%s/a/b/pipe", dir);
    mode_t old = umask(077); /* the daemon's */
    mps_options o = {.control_bin = bin, .pipe_dir = pipe, .log_dir = log_dir, .shared = true};
    carma_err err = {""};
    int rc = mps_control_start(&o, &err);
    if (rc)
        print_error("%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(mode_of(parent), 0755);
    assert_int_equal(mode_of(pipe), 0755);
    assert_int_equal(mode_of(log_dir), 0700);
    /* whatever the control daemon leaves to its umask is open to other users' servers */
    assert_string_equal(slurp(pipe, "umask"), "0022\n");
    assert_int_equal(mps_control_stop(&o, &err), 0);
    /* not shared: the daemon's own umask, as before */
    o = (mps_options){.control_bin = bin, .pipe_dir = pipe_dir, .log_dir = log_dir};
    assert_int_equal(mps_control_start(&o, &err), 0);
    assert_string_equal(slurp(pipe_dir, "umask"), "0077\n");
    assert_int_equal(mode_of(pipe_dir), 0700);
    assert_int_equal(mps_control_stop(&o, &err), 0);
    umask(old);
}

/* mps_dirs_prepare with shared on pipe directory `p`: the error, or "" when accepted. */
static const char *shared_verdict(const char *p)
{
    static carma_err err;
    mps_options o = {.control_bin = bin, .pipe_dir = p, .log_dir = log_dir, .shared = true};
    err.msg[0] = '\0';
    return mps_dirs_prepare(&o, &err) ? err.msg : "";
}

static void shared_pipe_dir_others_cannot_reach_is_refused(void **state)
{
    (void)state;
    assert_int_equal(chmod(dir, 0755), 0);
    char p[200], q[200];
    /* a parent closed to other users (the state directory, 0700) */
    snprintf(p, sizeof p, "%s/closed", dir);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(q, sizeof q, "%s/closed/pipe", dir);
    const char *why = shared_verdict(q);
    assert_non_null(strstr(why, "cannot pass through it"));
    assert_non_null(strstr(why, p));
    assert_non_null(strstr(why, "without its memory cap"));
    /* the pipe directory itself closed */
    snprintf(q, sizeof q, "%s/own", dir);
    assert_int_equal(mkdir(q, 0700), 0);
    why = shared_verdict(q);
    assert_non_null(strstr(why, "other users cannot reach it"));
    assert_non_null(strstr(why, "chmod o+x"));
    /* a parent others may write to could have the pipe directory swapped */
    snprintf(p, sizeof p, "%s/open", dir);
    assert_int_equal(mkdir(p, 0777), 0);
    assert_int_equal(chmod(p, 0777), 0);
    snprintf(q, sizeof q, "%s/open/pipe", dir);
    assert_int_equal(mkdir(q, 0755), 0);
    assert_int_equal(chmod(q, 0755), 0); /* whatever the umask */
    why = shared_verdict(q);
    assert_non_null(strstr(why, "writable by nobody else unless sticky"));
    /* ... unless sticky, as /tmp: nobody else can rename what is ours there */
    assert_int_equal(chmod(p, 01777), 0);
    assert_string_equal(shared_verdict(q), "");
    /* a pipe directory that is open for writing stays refused, as before */
    assert_int_equal(chmod(q, 0777), 0);
    assert_non_null(strstr(shared_verdict(q), "refusing it"));
    /* reached through a link: the directories it resolves to are the ones checked */
    snprintf(p, sizeof p, "%s/real", dir);
    assert_int_equal(mkdir(p, 0700), 0);
    assert_int_equal(chmod(p, 0700), 0);
    snprintf(q, sizeof q, "%s/link", dir);
    assert_int_equal(symlink(p, q), 0);
    snprintf(q, sizeof q, "%s/link/pipe", dir);
    assert_non_null(strstr(shared_verdict(q), "cannot pass through it"));
    assert_int_equal(chmod(p, 0755), 0);
    assert_string_equal(shared_verdict(q), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(client_env_caps_memory_per_gpu),
        cmocka_unit_test(client_env_rejects_bad_input),
        cmocka_unit_test_setup_teardown(control_daemon_start_command_stop, setup, teardown),
        cmocka_unit_test_setup_teardown(absent_binary_is_named, setup, teardown),
        cmocka_unit_test_setup_teardown(failing_start_quotes_its_output, setup, teardown),
        cmocka_unit_test_setup_teardown(hung_command_times_out, setup, teardown),
        cmocka_unit_test_setup_teardown(planted_log_symlink_is_not_followed, setup, teardown),
        cmocka_unit_test(default_dirs_leave_a_shared_pipe_outside_the_state),
        cmocka_unit_test_setup_teardown(shared_pipe_dir_is_reachable_by_every_user, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(shared_pipe_dir_others_cannot_reach_is_refused, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
