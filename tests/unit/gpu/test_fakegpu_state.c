/* test_fakegpu_state.c — the fake-GPU backend's (`sim`) GPUs and shared state file:
 * specifications, memory registration with PyTorch-like refusal, dead processes dropped, the
 * backend's readings; the file replaced whole (a writer that fails or is killed mid-update
 * leaves the old contents, concurrent writers lose no update), and a sample that fails,
 * readings unknown but GPUs still named, when the file is empty or lists fewer GPUs; a
 * symlink at the file's path is not followed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpu/backend.h"
#include "gpu/fakegpu.h"
#include "gpu/fakegpu_state.h"

static char dir[64], path[128], tmp_path[140];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/carma-sim-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/sim-gpus", dir);
    snprintf(tmp_path, sizeof tmp_path, "%s.tmp", path); /* the writers' temporary file */
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(path);
    unlink(tmp_path);
    return rmdir(dir);
}

/* The file's bytes (at most cap - 1 of them), NUL-terminated; its length. */
static size_t slurp(char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = '\0';
    return n;
}

static void write_text(const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
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

/* A writer that fails part way through writing (here: the file size limit) changes nothing:
 * the file keeps its old contents whole, and no temporary file is left. The file is private. */
static void failed_write_leaves_the_old_file(void **state)
{
    (void)state;
    fakegpu_state st;
    carma_err err;
    assert_int_equal(fakegpu_parse_spec("2xA100-40GB", &st, &err), 0);
    assert_int_equal(fakegpu_state_init_file(path, &st, &err), 0);
    int g;
    uint64_t t, a;
    assert_int_equal(fakegpu_state_register(path, getpid(), "0", 1000, 0.5, 0.2, 0.1, &g, &t,
                                            &a, &err), 0);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    char before[4096], after[4096];
    size_t len = slurp(before, sizeof before);
    assert_true(len > 40);

    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        signal(SIGXFSZ, SIG_IGN); /* past the limit, write() fails with EFBIG */
        struct rlimit lim = {16, 16};
        carma_err cerr = {{0}};
        int rc = setrlimit(RLIMIT_FSIZE, &lim) ? -2
                 : fakegpu_state_register(path, getpid(), "1", 2000, 0.5, 0.2, 0.1, &g, &t, &a,
                                          &cerr);
        _exit(rc == -1 && strstr(cerr.msg, "write") ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(slurp(after, sizeof after), len);
    assert_string_equal(after, before);
    assert_int_not_equal(access(tmp_path, F_OK), 0);
    fakegpu_state got;
    assert_int_equal(fakegpu_state_read(path, &got, &err), 0);
    assert_int_equal(got.ngpus, 2);
    assert_int_equal(got.nprocs, 1);

    /* A stale temporary file (a writer killed before its rename) is no obstacle. */
    FILE *f = fopen(tmp_path, "w");
    assert_non_null(f);
    fputs("carma-sim 1\ngpu GPU-si", f);
    fclose(f);
    assert_int_equal(fakegpu_state_unregister(path, getpid(), &err), 0);
    assert_int_not_equal(access(tmp_path, F_OK), 0);
    assert_int_equal(fakegpu_state_read(path, &got, &err), 0);
    assert_int_equal(got.ngpus, 2);
    assert_int_equal(got.nprocs, 0);
}

/* Writers SIGKILLed at random moments of their updates (as a cancelled task's process group
 * is): every read, during and after, finds the whole file. */
static void killed_writers_leave_a_whole_file(void **state)
{
    (void)state;
    fakegpu_state st, got;
    carma_err err;
    assert_int_equal(fakegpu_parse_spec("2xA100-40GB", &st, &err), 0);
    assert_int_equal(fakegpu_state_init_file(path, &st, &err), 0);
    srand((unsigned)getpid());
    for (int round = 0; round < 20; round++) {
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) {
            pid_t parent = getppid(); /* alive: its registrations are kept */
            int g;
            uint64_t t, a;
            for (;;) {
                fakegpu_state_register(path, parent, "0,1", 10, 0.1, 0.1, 0.1, &g, &t, &a, NULL);
                fakegpu_state_unregister(path, parent, NULL);
            }
        }
        for (int i = 0; i < 5; i++) {
            assert_int_equal(fakegpu_state_read(path, &got, &err), 0);
            assert_int_equal(got.ngpus, 2);
            sleep_us(rand() % 500);
        }
        kill(child, SIGKILL);
        assert_int_equal(waitpid(child, NULL, 0), child);
        assert_int_equal(fakegpu_state_read(path, &got, &err), 0);
        assert_int_equal(got.ngpus, 2);
        assert_string_equal(got.gpus[1].uuid, "GPU-sim-1");
    }
    assert_int_equal(fakegpu_state_unregister(path, getpid(), &err), 0);
}

/* Writers at the same time each update the file that is current: no registration is lost
 * (a lock on a file already replaced would let two of them write over each other). */
static void concurrent_writers_lose_no_update(void **state)
{
    (void)state;
    enum { WRITERS = 4, EACH = 15 };
    fakegpu_state st, got;
    carma_err err;
    assert_int_equal(fakegpu_parse_spec("2xA100-40GB", &st, &err), 0);
    assert_int_equal(fakegpu_state_init_file(path, &st, &err), 0);
    pid_t kids[WRITERS];
    for (int k = 0; k < WRITERS; k++) {
        kids[k] = fork();
        assert_true(kids[k] >= 0);
        if (kids[k] == 0) {
            int g, bad = 0;
            uint64_t t, a;
            for (int i = 0; i < EACH; i++)
                bad |= fakegpu_state_register(path, getppid(), "1", 1, 0, 0, 0, &g, &t, &a,
                                              NULL) != 0;
            _exit(bad);
        }
    }
    for (int k = 0; k < WRITERS; k++) {
        int status;
        assert_int_equal(waitpid(kids[k], &status, 0), kids[k]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    assert_int_equal(fakegpu_state_read(path, &got, &err), 0);
    assert_int_equal(got.nprocs, WRITERS * EACH);
    assert_int_equal(fakegpu_state_used_mib(&got, 1), WRITERS * EACH);
    assert_int_equal(fakegpu_state_unregister(path, getpid(), &err), 0);
}

/* A sample of a file that is empty, lists fewer GPUs than were opened, or ends in the middle
 * of a line fails with a clear error; every reading is unknown but each GPU keeps its UUID
 * and name (never an empty UUID). The file written again, samples work again. */
static void short_state_file_fails_the_sample(void **state)
{
    (void)state;
    const gpu_backend_ops *ops = &gpu_backend_fakegpu;
    gpu_backend *b;
    carma_err err;
    char arg[200];
    snprintf(arg, sizeof arg, "2xA100-40GB@%s", path);
    assert_int_equal(ops->open(&b, arg, &err), 0);
    gpu_reading r[2];
    assert_int_equal(ops->sample(b, r, &err), 0);

    static const struct {
        const char *text, *error;
    } cases[] = {
        {"", "empty, not a carma sim state file"},
        {"carma-sim 1\n", "lists 0 of the backend's 2 GPUs"},
        {"carma-sim 1\ngpu GPU-sim-0 A100-40GB 40960 400\n", "lists 1 of the backend's 2 GPUs"},
        {"carma-sim 1\ngpu GPU-sim-0 A100-40GB 40960 400\ngpu GPU-si", "bad gpu line"},
        {"carma-s", "not a carma sim state file"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_text(cases[i].text);
        err.msg[0] = '\0';
        assert_int_equal(ops->sample(b, r, &err), -1);
        if (!strstr(err.msg, cases[i].error) || !strstr(err.msg, path))
            fail_msg("case %zu: error '%s' should name %s and say '%s'", i, err.msg, path,
                     cases[i].error);
        for (int g = 0; g < 2; g++) {
            char uuid[32];
            snprintf(uuid, sizeof uuid, "GPU-sim-%d", g);
            assert_string_equal(r[g].uuid, uuid);
            assert_string_equal(r[g].name, "sim A100-40GB");
            assert_int_equal(r[g].index, g);
            assert_false(r[g].mem_known);
            assert_false(r[g].procs_known);
            assert_true(isnan(r[g].smact) && isnan(r[g].util_gpu) && isnan(r[g].power_w));
            assert_int_equal(r[g].src_activity, SRC_UNKNOWN);
        }
        /* A fake job cannot register in it either. */
        int g;
        uint64_t t, a;
        assert_int_not_equal(fakegpu_state_register(path, getpid(), "GPU-sim-1", 1, 0, 0, 0, &g,
                                                    &t, &a, &err), 0);
    }
    fakegpu_state st;
    assert_int_equal(fakegpu_parse_spec("2xA100-40GB", &st, &err), 0);
    assert_int_equal(fakegpu_state_init_file(path, &st, &err), 0);
    assert_int_equal(ops->sample(b, r, &err), 0);
    assert_true(r[1].mem_known);
    assert_string_equal(r[1].uuid, "GPU-sim-1");
    ops->close(b);
}

/* A symlink planted at the state file's path is not followed (the daemon that creates the file
 * may be root): the file it points to is neither created nor written. */
static void symlink_is_not_followed(void **state)
{
    (void)state;
    char target[160];
    snprintf(target, sizeof target, "%s/target", dir);
    assert_int_equal(symlink(target, path), 0);
    fakegpu_state st;
    carma_err err;
    assert_int_equal(fakegpu_parse_spec("1xA100-40GB", &st, &err), 0);
    assert_int_equal(fakegpu_state_init_file(path, &st, &err), -1);
    assert_non_null(strstr(err.msg, path));
    assert_int_equal(access(target, F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(specs),
        cmocka_unit_test_setup_teardown(register_refuse_unregister, setup, teardown),
        cmocka_unit_test_setup_teardown(dead_processes_drop_out, setup, teardown),
        cmocka_unit_test_setup_teardown(backend_reads_memory_activity_and_processes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(failed_write_leaves_the_old_file, setup, teardown),
        cmocka_unit_test_setup_teardown(killed_writers_leave_a_whole_file, setup, teardown),
        cmocka_unit_test_setup_teardown(concurrent_writers_lose_no_update, setup, teardown),
        cmocka_unit_test_setup_teardown(short_state_file_fails_the_sample, setup, teardown),
        cmocka_unit_test_setup_teardown(symlink_is_not_followed, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
