/* test_gpu_procs.c — task process trees from /proc (a fake tree and the real one), matching them
 * against GPU process lists, and the idle and alone tests (MPS servers, exited processes). */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "gpu/mps.h"
#include "gpu/procs.h"

static char root_dir[64];

static void write_file(const char *rel, const char *text, size_t len)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", root_dir, rel);
    char dir[256];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    mkdir(dir, 0700);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fwrite(text, 1, len, f);
    fclose(f);
}

/* A /proc/PID/stat line: "pid (comm) S ppid pgrp session ..." */
static void fake_proc_group(int pid, const char *comm, int ppid, int pgrp, int sid)
{
    char rel[64], text[256];
    snprintf(rel, sizeof rel, "%d/stat", pid);
    int n = snprintf(text, sizeof text, "%d (%s) S %d %d %d 0 -1 4194304 0 0\n", pid, comm, ppid,
                     pgrp, sid);
    write_file(rel, text, (size_t)n);
}

static void fake_proc(int pid, const char *comm, int ppid, int sid)
{
    fake_proc_group(pid, comm, ppid, sid, sid);
}

static int make_root(void **state)
{
    (void)state;
    snprintf(root_dir, sizeof root_dir, "/tmp/carma-proc-XXXXXX");
    assert_non_null(mkdtemp(root_dir));
    return 0;
}

static int remove_root(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void sort_pids(pid_set *s)
{
    for (int i = 1; i < s->n; i++)
        for (int j = i; j > 0 && s->pids[j - 1] > s->pids[j]; j--) {
            pid_t t = s->pids[j];
            s->pids[j] = s->pids[j - 1];
            s->pids[j - 1] = t;
        }
}

static void tree_has_descendants_and_session_members(void **state)
{
    (void)state;
    fake_proc(100, "carma", 1, 100);          /* the daemon: not the task */
    fake_proc(200, "sh", 100, 200);           /* the task, session leader */
    fake_proc(201, "python train.py", 200, 200);
    fake_proc(202, "pt_data_worker", 201, 200);
    fake_proc(300, "orphan", 1, 200);         /* reparented, same session */
    fake_proc(400, "a) b (c", 202, 400);      /* a descendant that left the session */
    fake_proc(500, "other", 1, 500);
    write_file("self/stat", "x", 1);          /* not a pid */
    write_file("600/stat", "600 garbage", 11); /* unreadable: skipped */
    pid_set s = {0};
    carma_err err;
    assert_int_equal(proc_task_tree(root_dir, 200, &s, &err), 0);
    sort_pids(&s);
    int want[] = {200, 201, 202, 300, 400};
    assert_int_equal(s.n, 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(s.pids[i], want[i]);
    pid_set_free(&s);
}

static void tree_survives_its_root(void **state)
{
    (void)state;
    fake_proc(201, "python", 1, 200); /* root 200 exited; its workers were reparented */
    fake_proc(202, "worker", 201, 200);
    fake_proc(203, "other", 1, 203);
    pid_set s = {0};
    carma_err err;
    assert_int_equal(proc_task_tree(root_dir, 200, &s, &err), 0);
    sort_pids(&s);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.pids[0], 201);
    assert_int_equal(s.pids[1], 202);
    pid_set_free(&s);
}

static void tree_of_a_root_outside_any_own_session(void **state)
{
    (void)state;
    fake_proc(10, "daemon", 1, 10);
    fake_proc(20, "task", 10, 10); /* not a session leader: only descendants count */
    fake_proc(21, "child", 20, 10);
    fake_proc(30, "sibling", 10, 10);
    pid_set s = {0};
    carma_err err;
    assert_int_equal(proc_task_tree(root_dir, 20, &s, &err), 0);
    sort_pids(&s);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.pids[0], 20);
    assert_int_equal(s.pids[1], 21);
    pid_set_free(&s);
}

/* As the daemon launches: the supervisor leads the session, the task leads its own process
 * group; a worker reparented to init after the task's shell exited still counts. */
static void tree_keeps_the_process_group_of_a_group_leader(void **state)
{
    (void)state;
    fake_proc(50, "supervisor", 1, 50);
    fake_proc_group(52, "worker", 1, 51, 50);    /* root 51 exited */
    fake_proc_group(53, "grandchild", 52, 51, 50);
    fake_proc_group(54, "other task", 50, 54, 50);
    pid_set s = {0};
    carma_err err;
    assert_int_equal(proc_task_tree(root_dir, 51, &s, &err), 0);
    sort_pids(&s);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.pids[0], 52);
    assert_int_equal(s.pids[1], 53);
    pid_set_free(&s);
}

static void one_scan_serves_several_tasks(void **state)
{
    (void)state;
    fake_proc(10, "daemon", 1, 10);
    fake_proc(20, "task A", 10, 20);
    fake_proc(21, "A worker", 20, 20);
    fake_proc(30, "task B", 10, 30);
    fake_proc(31, "B worker", 30, 30);
    proc_table t;
    carma_err err;
    assert_int_equal(proc_table_scan(root_dir, &t, &err), 0);
    assert_int_equal(t.n, 5);
    pid_set a = {0}, b = {0};
    assert_int_equal(proc_table_task_tree(&t, 20, &a, &err), 0);
    assert_int_equal(proc_table_task_tree(&t, 30, &b, &err), 0);
    assert_int_equal(a.n, 2);
    assert_true(pid_set_has(&a, 21) && !pid_set_has(&a, 31));
    assert_int_equal(b.n, 2);
    assert_true(pid_set_has(&b, 31) && !pid_set_has(&b, 21));
    assert_int_equal(proc_table_task_tree(&t, 99, &a, &err), 0); /* gone: nothing */
    assert_int_equal(a.n, 0);
    pid_set_free(&a);
    pid_set_free(&b);
    proc_table_free(&t);
}

/* The daemon's tick reads only the GPU processes and their ancestors. */
static void partial_scan_of_gpu_processes(void **state)
{
    (void)state;
    fake_proc(10, "daemon", 1, 10);
    fake_proc(20, "task A", 10, 20);
    fake_proc(21, "A launcher", 20, 20);
    fake_proc_group(22, "A trainer", 21, 20, 99); /* its own session, still A's descendant */
    fake_proc(30, "task B", 10, 30);
    fake_proc(31, "B worker", 30, 30);
    fake_proc(40, "unrelated", 1, 40);
    pid_t on_gpus[] = {22, 31, 40, 77 /* exited */};
    proc_table t;
    carma_err err;
    assert_int_equal(proc_table_scan_pids(root_dir, on_gpus, 4, &t, &err), 0);
    assert_int_equal(t.n, 7); /* 22 21 20 10, 31 30, 40: each read once */
    pid_set a = {0}, b = {0};
    assert_int_equal(proc_table_task_tree(&t, 20, &a, &err), 0);
    assert_int_equal(proc_table_task_tree(&t, 30, &b, &err), 0);
    assert_true(pid_set_has(&a, 22) && !pid_set_has(&a, 31) && !pid_set_has(&a, 40));
    assert_true(pid_set_has(&b, 31) && !pid_set_has(&b, 22) && !pid_set_has(&b, 40));
    pid_set_free(&a);
    pid_set_free(&b);
    proc_table_free(&t);
}

static void unreadable_proc_root_is_an_error(void **state)
{
    (void)state;
    pid_set s = {0};
    carma_err err = {""};
    assert_int_equal(proc_task_tree("/nonexistent/proc", 1, &s, &err), -1);
    assert_non_null(strstr(err.msg, "/nonexistent/proc"));
    pid_set_free(&s);
}

/* The real /proc: a child that calls setsid and starts a grandchild; the grandchild is still
 * found through the session after the child is killed. */
static void real_proc_tree(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        setsid();
        pid_t g = fork();
        if (g == 0) {
            close(fds[1]);
            pause();
            _exit(0);
        }
        (void)!write(fds[1], &g, sizeof g);
        pause();
        _exit(0);
    }
    close(fds[1]);
    pid_t grandchild = 0;
    assert_int_equal(read(fds[0], &grandchild, sizeof grandchild), (ssize_t)sizeof grandchild);
    close(fds[0]);
    pid_set s = {0};
    carma_err err;
    /* the child ran setsid before it forked, so both exist in their session by now */
    assert_int_equal(proc_task_tree(PROC_ROOT, child, &s, &err), 0);
    assert_true(pid_set_has(&s, child));
    assert_true(pid_set_has(&s, grandchild));
    assert_false(pid_set_has(&s, getpid()));
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    assert_int_equal(proc_task_tree(PROC_ROOT, child, &s, &err), 0);
    assert_false(pid_set_has(&s, child));
    assert_true(pid_set_has(&s, grandchild));
    kill(grandchild, SIGKILL);
    pid_set_free(&s);
}

static gpu_reading reading(int index, bool known, int n, const gpu_proc *procs)
{
    gpu_reading r;
    memset(&r, 0, sizeof r);
    r.index = index;
    r.procs_known = known;
    r.nprocs = n;
    for (int i = 0; i < n; i++)
        r.procs[i] = procs[i];
    return r;
}

static void match_sums_memory_per_gpu(void **state)
{
    (void)state;
    pid_t pids[] = {201, 202, 203};
    pid_set s = {pids, 3, 3};
    gpu_reading r[4];
    r[0] = reading(0, true, 3, (gpu_proc[]){{201, 1000, true, false}, {999, 5000, true, false},
                                            {203, 24, true, false}});
    r[1] = reading(1, true, 1, (gpu_proc[]){{202, 0, false, false}});
    r[2] = reading(2, false, 0, NULL);
    r[3] = reading(3, true, 1, (gpu_proc[]){{998, 7000, true, false}});
    task_gpu_usage u;
    proc_match_task(&s, r, 4, &u);
    assert_int_equal(u.ngpus, 2);
    assert_int_equal(u.gpus[0], 0);
    assert_int_equal(u.gpus[1], 1);
    assert_int_equal(u.used_mib[0], 1024);
    assert_true(u.used_known[0]);
    assert_false(u.used_known[1]);
    assert_int_equal(u.nprocs, 3);
    assert_int_equal(u.total_mib, 1024);
    assert_false(u.total_known); /* one process's memory was unknown */
    proc_match_task(&s, r, 1, &u);
    assert_true(u.total_known);
    assert_int_equal(u.total_mib, 1024);
    proc_match_task(&s, r + 2, 2, &u);
    assert_int_equal(u.ngpus, 0);
    assert_false(u.total_known); /* not on any GPU: no figure */
}

static void idle_ignores_mps_servers(void **state)
{
    (void)state;
    static const char server_argv[] = "/usr/bin/nvidia-cuda-mps-server\0";
    write_file("700/cmdline", server_argv, sizeof server_argv);
    write_file("701/comm", "nvidia-cuda-mps\n", 16); /* argv and exe unreadable */
    static const char py_argv[] = "python\0train.py\0";
    write_file("702/cmdline", py_argv, sizeof py_argv);
    static const char ctl_argv[] = "nvidia-cuda-mps-control\0-d\0";
    write_file("703/cmdline", ctl_argv, sizeof ctl_argv);
    gpu_reading r =
        reading(0, true, 2, (gpu_proc[]){{700, 300, true, false}, {701, 300, true, false}});
    assert_true(gpu_reading_idle(&r, root_dir));
    r = reading(0, true, 2, (gpu_proc[]){{700, 300, true, false}, {702, 300, true, false}});
    assert_false(gpu_reading_idle(&r, root_dir));
    r = reading(0, true, 1, (gpu_proc[]){{703, 0, true, false}});
    assert_false(gpu_reading_idle(&r, root_dir));
    r = reading(0, true, 0, NULL);
    assert_true(gpu_reading_idle(&r, root_dir));
    r = reading(0, false, 0, NULL);
    assert_false(gpu_reading_idle(&r, root_dir)); /* unknown is not idle */
    assert_true(mps_is_server_process(root_dir, 700));
    assert_false(mps_is_server_process(root_dir, 702));
    assert_false(mps_is_server_process(root_dir, 12345)); /* gone */
}

/* A task's GPU is its own when the only other process listed there exited before /proc was
 * read (the task's own last sample: its process ends between the two); a live one is not. */
static void only_leaves_out_processes_that_exited(void **state)
{
    (void)state;
    fake_proc(10, "daemon", 1, 10);
    fake_proc(20, "task", 10, 20);
    fake_proc(30, "other", 1, 30);
    pid_t listed[] = {20, 30, 40 /* exited after the reading */};
    proc_table t;
    carma_err err;
    assert_int_equal(proc_table_scan_pids(root_dir, listed, 3, &t, &err), 0);
    assert_true(proc_table_has(&t, 20) && proc_table_has(&t, 10) && !proc_table_has(&t, 40));
    pid_set mine = {0};
    assert_int_equal(proc_table_task_tree(&t, 20, &mine, &err), 0);
    gpu_reading r =
        reading(0, true, 2, (gpu_proc[]){{20, 100, true, false}, {40, 100, true, false}});
    assert_true(gpu_reading_only(&r, &mine, &t, root_dir));
    assert_false(gpu_reading_only(&r, &mine, NULL, root_dir)); /* no table: 40 is a witness */
    assert_false(gpu_reading_idle(&r, root_dir));
    r = reading(0, true, 2, (gpu_proc[]){{20, 100, true, false}, {30, 100, true, false}});
    assert_false(gpu_reading_only(&r, &mine, &t, root_dir));
    r = reading(0, false, 0, NULL);
    assert_false(gpu_reading_only(&r, &mine, &t, root_dir)); /* unknown is not alone */
    pid_set_free(&mine);
    proc_table_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(tree_has_descendants_and_session_members, make_root,
                                        remove_root),
        cmocka_unit_test_setup_teardown(tree_survives_its_root, make_root, remove_root),
        cmocka_unit_test_setup_teardown(tree_of_a_root_outside_any_own_session, make_root,
                                        remove_root),
        cmocka_unit_test_setup_teardown(tree_keeps_the_process_group_of_a_group_leader,
                                        make_root, remove_root),
        cmocka_unit_test_setup_teardown(one_scan_serves_several_tasks, make_root, remove_root),
        cmocka_unit_test_setup_teardown(partial_scan_of_gpu_processes, make_root, remove_root),
        cmocka_unit_test(unreadable_proc_root_is_an_error),
        cmocka_unit_test(real_proc_tree),
        cmocka_unit_test(match_sums_memory_per_gpu),
        cmocka_unit_test_setup_teardown(idle_ignores_mps_servers, make_root, remove_root),
        cmocka_unit_test_setup_teardown(only_leaves_out_processes_that_exited, make_root,
                                        remove_root),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
