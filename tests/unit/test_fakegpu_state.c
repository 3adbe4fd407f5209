/* test_fakegpu_state.c — the fake-GPU backend's (`sim`) GPUs and shared state file:
 * specifications, memory registration with PyTorch-like refusal, dead processes dropped, the
 * backend's readings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu/backend.h"
#include "gpu/fakegpu.h"
#include "gpu/fakegpu_state.h"

static char dir[64], path[128];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/carma-sim-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/sim-gpus", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(path);
    return rmdir(dir);
}

static void specs(void **state)
{
    (void)state;
    fakegpu_state st;
    carma_err err = {{0}};
    assert_int_equal(fakegpu_parse_spec("2xA100-40GB,1xV100-16GB", &st, &err), 0);
    assert_int_equal(st.ngpus, 3);
    assert_int_equal(st.gpus[0].total_mib, 40960);
    assert_int_equal(st.gpus[2].total_mib, 16384);
    assert_string_equal(st.gpus[2].name, "V100-16GB");
    assert_string_equal(st.gpus[1].uuid, "GPU-sim-1");
    assert_int_equal(fakegpu_parse_spec("H100-80GB", &st, &err), 0);
    assert_int_equal(st.ngpus, 1);
    static const char *const bad[] = {"", "2xA100", "0xA100-40GB", "2xA100-0GB", "2xA100-xGB",
                                      "65xA100-40GB", "A100-40TB"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err.msg[0] = '\0';
        assert_int_equal(fakegpu_parse_spec(bad[i], &st, &err), -1);
        assert_non_null(strstr(err.msg, "sim GPUs"));
    }
}

static void register_refuse_unregister(void **state)
{
    (void)state;
    fakegpu_state st, got;
    carma_err err;
    assert_int_equal(fakegpu_parse_spec("2xA100-40GB", &st, &err), 0);
    assert_int_equal(fakegpu_state_init_file(path, &st, &err), 0);
    int g;
    uint64_t total, avail;
    pid_t me = getpid();
    assert_int_equal(fakegpu_state_register(path, me, "GPU-sim-1", 30000, 0.5, 0.2, 0.1, &g,
                                            &total, &avail, &err), 0);
    /* 15000 more does not fit on GPU 1: refused, naming that GPU's place in the list. */
    assert_int_equal(fakegpu_state_register(path, me, "0,GPU-sim-1", 15000, 0.5, 0.2, 0.1, &g,
                                            &total, &avail, &err), 1);
    assert_int_equal(g, 1);
    assert_int_equal(total, 40960);
    assert_int_equal(avail, 40960 - 30000);
    assert_int_equal(fakegpu_state_read(path, &got, &err), 0);
    assert_int_equal(got.nprocs, 1);
    assert_int_equal(fakegpu_state_used_mib(&got, 1), 30000);
    assert_int_equal(fakegpu_state_used_mib(&got, 0), 0);
    /* unknown device, empty list */
    assert_int_equal(fakegpu_state_register(path, me, "GPU-sim-7", 1, 0, 0, 0, &g, &total,
                                            &avail, &err), -1);
    assert_int_equal(fakegpu_state_register(path, me, "", 1, 0, 0, 0, &g, &total, &avail, &err),
                     -1);
    /* A restart with the same GPUs keeps the registration; different GPUs start afresh. */
    assert_int_equal(fakegpu_state_init_file(path, &st, &err), 0);
    assert_int_equal(fakegpu_state_read(path, &got, &err), 0);
    assert_int_equal(got.nprocs, 1);
    assert_int_equal(fakegpu_state_unregister(path, me, &err), 0);
    assert_int_equal(fakegpu_state_read(path, &got, &err), 0);
    assert_int_equal(got.nprocs, 0);
}

static void dead_processes_drop_out(void **state)
{
    (void)state;
    fakegpu_state st, got;
    carma_err err;
    assert_int_equal(fakegpu_parse_spec("1xA100-40GB", &st, &err), 0);
    assert_int_equal(fakegpu_state_init_file(path, &st, &err), 0);
    pid_t child = fork();
    if (child == 0) {
        int g;
        uint64_t t, a;
        _exit(fakegpu_state_register(path, getpid(), "0", 20000, 0.4, 0.2, 0.1, &g, &t, &a,
                                     NULL) ? 1 : 0);
    }
    int status;
    waitpid(child, &status, 0);
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(fakegpu_state_read(path, &got, &err), 0);
    assert_int_equal(got.nprocs, 0); /* the child is gone: its memory is free again */
}

static void backend_reads_memory_activity_and_processes(void **state)
{
    (void)state;
    const gpu_backend_ops *ops = gpu_backend_find("sim"); /* its name to users */
    assert_ptr_equal(ops, &gpu_backend_fakegpu);
    assert_null(gpu_backend_find("nope"));
    assert_non_null(strstr(gpu_backend_names(), "sim"));
    gpu_backend *b;
    carma_err err;
    char arg[200];
    assert_int_equal(ops->open(&b, "2xA100-40GB", &err), -1); /* no state file named */
    snprintf(arg, sizeof arg, "2xA100-40GB@%s", path);
    assert_int_equal(ops->open(&b, arg, &err), 0);
    assert_int_equal(ops->count(b), 2);
    int g;
    uint64_t t, a;
    assert_int_equal(fakegpu_state_register(path, getpid(), "GPU-sim-0", 12000, 0.5, 0.3, 0.2,
                                            &g, &t, &a, &err), 0);
    gpu_reading r[2];
    assert_int_equal(ops->sample(b, r, &err), 0);
    assert_true(r[0].mem_known);
    assert_int_equal(r[0].used_mib, 12000);
    assert_int_equal(r[0].free_mib, 40960 - 12000);
    assert_float_equal(r[0].smact, 0.5, 1e-9);
    assert_float_equal(r[0].drama, 0.2, 1e-9);
    assert_int_equal(r[0].nprocs, 1);
    assert_int_equal(r[0].procs[0].pid, getpid());
    assert_int_equal(r[1].nprocs, 0);
    assert_float_equal(r[1].smact, 0, 1e-9);
    assert_true(r[0].power_w > r[1].power_w);
    assert_string_equal(r[1].uuid, "GPU-sim-1");
    assert_int_equal(r[0].src_activity, SRC_FAKEGPU);
    assert_string_equal(metric_source_name(SRC_FAKEGPU), "sim");
    ops->close(b);
    fakegpu_state_unregister(path, getpid(), &err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(specs),
        cmocka_unit_test_setup_teardown(register_refuse_unregister, setup, teardown),
        cmocka_unit_test_setup_teardown(dead_processes_drop_out, setup, teardown),
        cmocka_unit_test_setup_teardown(backend_reads_memory_activity_and_processes, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
