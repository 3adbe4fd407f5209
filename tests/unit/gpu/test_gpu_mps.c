/* test_gpu_mps.c — MPS helpers without a GPU: the client environment, and the control daemon's
 * start/command/stop plumbing run against a stand-in nvidia-cuda-mps-control script that
 * records what it was given; the absent binary, a failing start and a hung command; a symlink
 * planted where the start's log goes is not followed (the daemon may be root). */
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
