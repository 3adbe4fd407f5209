/* test_daemon_launch.c — a task's launch, in process: a daemon's state built as daemon.c builds
 * it (sim GPUs, store, core), a task submitted, placed, launched through its supervisor and
 * reaped. The environment it runs with carries its GPUs (CUDA_VISIBLE_DEVICES) and the
 * submitted variables; when a variable cannot be stored, the environment is refused whole and
 * the launch fails with a clear error instead of starting the task without it.
 *
 * Allocation failures are injected into env.c alone: this file compiles env.c itself with
 * malloc, array_grow and str_dup counted (and failed on demand), and the linker takes these
 * definitions of d_task_env and d_task_env_free instead of the library's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <pwd.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/daemon_int.h"
#include "daemon/journal.h"
#include "daemon/registry.h"
#include "daemon/tasks.h"
#include "gpu/fakegpu_state.h"
#include "util/array.h"
#include "util/strutil.h"
#include "daemon_fixture.h"

/* ---- env.c, with its allocations counted and failed on demand ---------------------------- */

static int env_allocs;  /* allocations env.c asked for since the last reset */
static int env_fail_at; /* the one that fails (1-based); 0: none */

static bool env_alloc_fails(void)
{
    return ++env_allocs == env_fail_at;
}
static void *env_test_malloc(size_t n)
{
    return env_alloc_fails() ? NULL : malloc(n);
}
/* array_grow allocates only when the array must grow: only those calls count. */
static void *env_test_array_grow(void *items, size_t *cap, size_t need, size_t elem,
                                 size_t initial)
{
    if ((need > *cap || !items) && env_alloc_fails())
        return NULL;
    return array_grow(items, cap, need, elem, initial);
}
static char *env_test_str_dup(const char *s)
{
    return env_alloc_fails() ? NULL : str_dup(s);
}

#define malloc env_test_malloc
#define array_grow env_test_array_grow
#define str_dup env_test_str_dup
#include "daemon/env.c"
#undef malloc
#undef array_grow
#undef str_dup

/* ---- a daemon's state, in process ------------------------------------------------------- */

static char root[64], state_dir[128], db_path[160];
static char logbuf[16384];
static volatile sig_atomic_t never;
static daemon_options opts;
static daemon_state *d;

static void log_line(const char *msg)
{
    size_t n = strlen(logbuf);
    snprintf(logbuf + n, sizeof logbuf - n, "%s\n", msg);
}


static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/carma-launch-XXXXXX");
    assert_non_null(mkdtemp(root));
    snprintf(state_dir, sizeof state_dir, "%s/state", root);
    snprintf(db_path, sizeof db_path, "%s/carma.db", state_dir);
    char attempts[200];
    snprintf(attempts, sizeof attempts, "%s/attempts", state_dir);
    assert_int_equal(mkdir(state_dir, 0755), 0);
    assert_int_equal(mkdir(attempts, 0755), 0);
    memset(&opts, 0, sizeof opts);
    config_defaults(&opts.cfg);
    opts.state_dir = state_dir;
    opts.socket_path = "/nonexistent";
    opts.backend = "sim";
    opts.fakegpu_spec = "2xA100-40GB";
    opts.stop = &never;
    opts.log = log_line;
    d = calloc(1, sizeof *d);
    assert_non_null(d);
    d->opts = &opts;
    d->cfg = opts.cfg;
    d->listen_fd = -1;
    d->state_fd = d->lock_fd = -1;
    d->attempts_fd = open(attempts, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(d->attempts_fd >= 0);
    d->task_umask = 022;
    carma_err err;
    assert_int_equal(store_open(&d->db, db_path, &err), 0);
    assert_int_equal(d_monitor_open(d, &err), 0);
    assert_non_null(d->core = sched_create(&d->cfg.sched, d->ngpus, &err));
    d_monitor_tick(d);
    assert_true(d->have_sample);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    d_free_tasks(d);
    free(d->running);
    sched_destroy(d->core);
    d_monitor_close(d);
    store_close(d->db);
    close(d->attempts_fd);
    free(d);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd);
}

/* Submits a task as this process's user; returns it. */
static dtask *submit(const char *command, const char *env_json)
{
    char text[2048];
    snprintf(text, sizeof text, "{\"command\": \"%s\", \"cwd\": \"%s\", \"env\": %s}", command,
             root, env_json);
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);
    assert_non_null(j);
    submission sub;
    carma_err err;
    assert_int_equal(submission_from_json(j, &sub, &err), 0);
    json_decref(j);
    peer p = {.fd = -1, .uid = getuid(), .gid = getgid(), .pid = getpid()};
    uint64_t id = 0;
    bool repeat;
    assert_int_equal(d_submit(d, &p, &sub, NULL, NULL, 0, &id, &repeat, &err), 0);
    assert_false(repeat);
    assert_true(d_commit(d));
    dtask *t = d_task(d, id);
    assert_non_null(t);
    return t;
}

/* Reaps until the task has ended (10 s at most). */
static void wait_ended(dtask *t)
{
    for (int i = 0; i < 1000 && t->state == DS_RUNNING; i++) {
        sleep_ms(10);
        d_reap(d);
        assert_true(d_commit(d));
    }
    assert_int_not_equal(t->state, DS_RUNNING);
}

static int64_t count(const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    int64_t n = -1;
    assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

static const char *env_get(const task_env *e, const char *key)
{
    size_t k = strlen(key);
    for (size_t i = 0; i < e->n; i++)
        if (!strncmp(e->v[i], key, k) && e->v[i][k] == '=')
            return e->v[i] + k + 1;
    return NULL;
}

/* ---- tests ------------------------------------------------------------------------------- */

/* A task runs with its GPU's UUID in CUDA_VISIBLE_DEVICES and the variables it submitted. */
static void launched_task_sees_its_gpus_and_env(void **state)
{
    (void)state;
    env_fail_at = 0;
    dtask *t = submit("printf '%s %s' \\\"$CUDA_VISIBLE_DEVICES\\\" \\\"$FOO\\\" >seen",
                      "[\"FOO=bar\"]");
    d_schedule(d);
    assert_int_equal(t->state, DS_RUNNING);
    assert_int_equal(t->att.n, 1);
    assert_false(t->att.launch_pending);
    wait_ended(t);
    assert_int_equal(t->state, DS_DONE);
    char path[200], seen[256] = "", want[256];
    snprintf(path, sizeof path, "%s/seen", root);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(seen, sizeof seen, f));
    fclose(f);
    snprintf(want, sizeof want, "%s bar", d->readings[t->att.gpus[0]].uuid);
    assert_true(d->readings[t->att.gpus[0]].uuid[0] != '\0');
    assert_string_equal(seen, want);
}

/* Whichever of env.c's allocations fails, the environment is refused whole (nothing left
 * allocated, a clear error); with none failing, every variable is there. */
static void environment_is_whole_or_refused(void **state)
{
    (void)state;
    dtask *t = d_new_task();
    assert_non_null(t);
    t->st.id = 7;
    t->uid = getuid();
    t->user = str_dup("someone");
    assert_int_equal(submission_add_env(&t->sub, "PATH=/opt/bin", NULL), 0);
    assert_int_equal(submission_add_env(&t->sub, "FOO=bar", NULL), 0);
    t->att.n = 2;
    t->att.ngpus = 2;
    t->att.gpus[0] = 1;
    t->att.gpus[1] = 0;
    char devices[256];
    snprintf(devices, sizeof devices, "%s,%s", d->readings[1].uuid, d->readings[0].uuid);

    task_env e;
    carma_err err;
    env_fail_at = 0;
    env_allocs = 0;
    assert_int_equal(d_task_env(d, t, &e, &err), 0);
    int total = env_allocs;
    assert_true(total > 10);
    assert_null(e.v[e.n]);
    assert_string_equal(env_get(&e, "CUDA_VISIBLE_DEVICES"), devices);
    assert_string_equal(env_get(&e, "CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
    assert_string_equal(env_get(&e, "PATH"), "/opt/bin"); /* the submitted one replaces the base */
    assert_string_equal(env_get(&e, "FOO"), "bar");
    assert_string_equal(env_get(&e, "USER"), "someone");
    assert_string_equal(env_get(&e, "CARMA_TASK_ID"), "7");
    assert_string_equal(env_get(&e, "CARMA_ATTEMPT"), "2");
    assert_non_null(env_get(&e, "CARMA_SIM_STATE"));
    assert_non_null(env_get(&e, "HOME"));
    size_t nvars = e.n;
    d_task_env_free(&e);

    for (env_fail_at = 1; env_fail_at <= total; env_fail_at++) {
        env_allocs = 0;
        memset(&err, 0, sizeof err);
        int rc = d_task_env(d, t, &e, &err);
        assert_int_equal(rc, -1); /* every allocation matters */
        assert_null(e.v);
        assert_int_equal(e.n, 0);
        assert_non_null(strstr(err.msg, "out of memory building the task's environment"));
    }
    env_fail_at = 0;
    assert_int_equal(d_task_env(d, t, &e, &err), 0);
    assert_int_equal(e.n, nvars);
    d_task_env_free(&e);
    /* a GPU whose UUID is not known: refused, never an empty or partial CUDA_VISIBLE_DEVICES */
    char saved[sizeof d->readings[0].uuid];
    memcpy(saved, d->readings[0].uuid, sizeof saved);
    d->readings[0].uuid[0] = '\0';
    assert_int_equal(d_task_env(d, t, &e, &err), -1);
    assert_non_null(strstr(err.msg, "UUID is not known"));
    assert_null(e.v);
    memcpy(d->readings[0].uuid, saved, sizeof saved);
    d_free_task(t);
}

/* A launch whose environment cannot be built fails, logged and recorded: the attempt ends as
 * failed and no supervisor is started (the task never runs without its variables). */
static void launch_fails_when_the_environment_cannot_be_built(void **state)
{
    (void)state;
    env_fail_at = 0;
    dtask *t = submit("touch ran", "[]");
    logbuf[0] = '\0';
    env_allocs = 0;
    env_fail_at = 5; /* while the base variables are set, before CUDA_VISIBLE_DEVICES */
    d_schedule(d);
    env_fail_at = 0;
    assert_int_equal(t->state, DS_FAILED);
    assert_string_equal(t->outcome, "failed");
    assert_int_equal(t->att.n, 1);
    assert_true(t->running_idx < 0);
    assert_true(d_tasks_ok(d));
    char want[200];
    snprintf(want, sizeof want,
             "task %llu: launch failed: out of memory building the task's environment",
             (unsigned long long)t->st.id);
    if (!strstr(logbuf, want))
        fail_msg("log lacks '%s':\n%s", want, logbuf);
    struct stat sb;
    assert_int_not_equal(stat(t->att.dir, &sb), 0); /* no supervisor made its directory */
    char path[200];
    snprintf(path, sizeof path, "%s/ran", root);
    assert_int_not_equal(stat(path, &sb), 0);
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM events WHERE task_id=%llu AND kind='ended'"
             " AND detail='attempt 1: failed, launch failed'", (unsigned long long)t->st.id);
    assert_int_equal(count(sql), 1);
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM attempts WHERE task_id=%llu AND n=1 AND state='ended'"
             " AND outcome='failed'", (unsigned long long)t->st.id);
    assert_int_equal(count(sql), 1);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM tasks WHERE id=%llu AND state='failed'",
             (unsigned long long)t->st.id);
    assert_int_equal(count(sql), 1);
    /* The daemon goes on: the next task launches. */
    dtask *next = submit("true", "[]");
    d_schedule(d);
    wait_ended(next);
    assert_int_equal(next->state, DS_DONE);
}

/* A fake-GPU state file found empty (as a writer killed mid-update once left it): the sample
 * fails, logged, and the GPUs' readings are unknown, but each GPU keeps its UUID, so a task's
 * CUDA_VISIBLE_DEVICES is never empty. The file written again, the samples are whole again. */
static void empty_fake_gpu_state_leaves_gpus_unknown_not_nameless(void **state)
{
    (void)state;
    assert_true(d->fakegpu_state_path[0] != '\0');
    char uuid1[96];
    snprintf(uuid1, sizeof uuid1, "%s", d->readings[1].uuid);
    assert_true(uuid1[0] != '\0');
    assert_int_equal(truncate(d->fakegpu_state_path, 0), 0);
    logbuf[0] = '\0';
    d_monitor_tick(d);
    if (!strstr(logbuf, "GPU sample failed: ") || !strstr(logbuf, "empty"))
        fail_msg("log should say the sample failed on an empty file:\n%s", logbuf);
    for (int g = 0; g < d->ngpus; g++) {
        assert_true(d->readings[g].uuid[0] != '\0');
        assert_false(d->readings[g].mem_known);
        assert_false(d->views[g].free_known);
    }
    assert_string_equal(d->readings[1].uuid, uuid1);

    dtask *t = d_new_task();
    assert_non_null(t);
    t->st.id = 9;
    t->uid = getuid();
    t->user = str_dup("someone");
    t->att.n = 1;
    t->att.ngpus = 1;
    t->att.gpus[0] = 1;
    task_env e;
    carma_err err;
    env_fail_at = 0;
    assert_int_equal(d_task_env(d, t, &e, &err), 0);
    assert_string_equal(env_get(&e, "CUDA_VISIBLE_DEVICES"), uuid1);
    d_task_env_free(&e);
    d_free_task(t);

    fakegpu_state st;
    assert_int_equal(fakegpu_parse_spec(opts.fakegpu_spec, &st, &err), 0);
    assert_int_equal(fakegpu_state_init_file(d->fakegpu_state_path, &st, &err), 0);
    d_monitor_tick(d);
    for (int g = 0; g < d->ngpus; g++)
        assert_true(d->readings[g].mem_known && d->views[g].free_known);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(launched_task_sees_its_gpus_and_env),
        cmocka_unit_test(environment_is_whole_or_refused),
        cmocka_unit_test(launch_fails_when_the_environment_cannot_be_built),
        cmocka_unit_test(empty_fake_gpu_state_leaves_gpus_unknown_not_nameless),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
