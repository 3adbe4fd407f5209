/* test_daemon_store_failure.c — a daemon whose store fails acknowledges nothing it did not
 * store. A live daemon (in a child process, on a temporary socket) has its database sabotaged
 * from outside through SQLite itself: a trigger makes the next submission's insert fail, or
 * makes the transaction of a submission or of a cancel fail at COMMIT (a deferred foreign key
 * that cannot hold). The request is never answered (the connection just ends), the daemon
 * exits with the store's error, the database holds nothing of the failed request, and a
 * daemon started again on it serves on as if the request had never been made. A task's end
 * whose commit fails runs no on_finish hook; the daemon started again ends it again and runs
 * the hook once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "daemon/connect.h"
#include "daemon/daemon.h"
#include "daemon_fixture.h"

static char root[64], sock[128], state_dir[128], db_path[160], err_path[160];
static pid_t daemon_pid;

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/carma-storefail-XXXXXX");
    assert_non_null(mkdtemp(root));
    snprintf(sock, sizeof sock, "%s/s", root);
    snprintf(state_dir, sizeof state_dir, "%s/state", root);
    snprintf(db_path, sizeof db_path, "%s/carma.db", state_dir);
    snprintf(err_path, sizeof err_path, "%s/daemon.err", root);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    /* Supervisors a failed test left running (their lock file names them); their tasks die
     * with them. */
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "for f in '%s'/attempts/*/lock; do [ -f \"$f\" ] && [ ! -f \"${f%%/lock}/result\" ]"
             " && kill -KILL $(cat \"$f\") 2>/dev/null; done; rm -rf '%s'", state_dir, root);
    return system(cmd) ? -1 : 0;
}

/* Ends a daemon a failed test left behind (it would serve, or hold the database, forever). */
static int kill_daemon(void **state)
{
    (void)state;
    if (daemon_pid > 0 && waitpid(daemon_pid, NULL, WNOHANG) == 0) {
        kill(daemon_pid, SIGKILL);
        waitpid(daemon_pid, NULL, 0);
    }
    daemon_pid = 0;
    return 0;
}

/* A daemon on one sim GPU, policy exclusive; its fatal error goes to err_path. */
static void start_daemon(void)
{
    kill_daemon(NULL);
    unlink(err_path);
    daemon_pid = fork_test_daemon(sock, state_dir, 0.05, err_path);
    if (daemon_pid < 0) {
        char msg[600] = "(no error written)";
        FILE *f = fopen(err_path, "r");
        if (f && !fgets(msg, sizeof msg, f))
            snprintf(msg, sizeof msg, "(no error written)");
        if (f)
            fclose(f);
        fail_msg("the daemon did not start: %s", msg);
    }
}

/* Waits for the daemon to exit on its own; returns its exit status. */
static int daemon_exit_status(void)
{
    int status = 0;
    for (int i = 0; i < 1000; i++) {
        pid_t r = waitpid(daemon_pid, &status, WNOHANG);
        if (r == daemon_pid) {
            daemon_pid = 0;
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        sleep_ms(10);
    }
    fail_msg("the daemon did not exit after its store failed");
    return -1;
}

static void stop_daemon(void)
{
    int status = 0;
    kill(daemon_pid, SIGTERM);
    waitpid(daemon_pid, &status, 0);
    daemon_pid = 0;
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* One request; the reply, or NULL when the connection ends without one. */
static json_t *call_raw(const char *request)
{
    carma_err err;
    int fd = daemon_connect(sock, &err);
    assert_true(fd >= 0);
    struct timeval tv = {20, 0}; /* a daemon that neither answers nor exits fails the test */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    assert_int_equal(send(fd, request, strlen(request), MSG_NOSIGNAL), (ssize_t)strlen(request));
    char buf[1 << 16];
    size_t n = 0;
    ssize_t r = 0;
    while (n < sizeof buf - 1 && (r = recv(fd, buf + n, 1, 0)) == 1 && buf[n] != '\n')
        n++;
    bool timed_out = r < 0;
    close(fd);
    if (timed_out)
        fail_msg("no reply and no end of the connection: the daemon hangs");
    if (r != 1)
        return NULL;
    json_error_t jerr;
    json_t *j = json_loadb(buf, n, 0, &jerr);
    assert_non_null(j);
    return j;
}

/* A request that must succeed: its reply. */
static json_t *call_ok(const char *request)
{
    json_t *r = call_raw(request);
    assert_non_null(r);
    if (!json_is_true(json_object_get(r, "ok")))
        fail_msg("'%s' failed: %s", request, json_string_value(json_object_get(r, "error")));
    return r;
}

static uint64_t submit_ok(const char *command)
{
    char req[512];
    snprintf(req, sizeof req,
             "{\"verb\":\"submit\",\"task\":{\"command\":\"%s\",\"cwd\":\"/\"}}\n", command);
    json_t *r = call_ok(req);
    uint64_t id = (uint64_t)json_integer_value(json_object_get(r, "id"));
    json_decref(r);
    return id;
}

static const char *task_state(uint64_t id, char *buf, size_t cap)
{
    char req[96];
    snprintf(req, sizeof req, "{\"verb\":\"show\",\"id\":%llu}\n", (unsigned long long)id);
    json_t *r = call_ok(req);
    snprintf(buf, cap, "%s",
             json_string_value(json_object_get(json_object_get(r, "task"), "state")));
    json_decref(r);
    return buf;
}

static void wait_state(uint64_t id, const char *want)
{
    char s[32] = "";
    for (int i = 0; i < 500 && strcmp(task_state(id, s, sizeof s), want); i++)
        sleep_ms(20);
    assert_string_equal(s, want);
}

/* Runs SQL on the daemon's database from another connection (as an operator's sqlite3
 * would), waiting out the daemon's own transactions. */
static void db_exec(const char *sql)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 10000);
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
    sqlite3_close(db);
}

static int64_t db_count(const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    int64_t n = -1;
    assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 10000);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

static void expect_daemon_error(const char *needle)
{
    assert_int_equal(daemon_exit_status(), 1);
    char msg[600] = "";
    FILE *f = fopen(err_path, "r");
    assert_non_null(f);
    if (!fgets(msg, sizeof msg, f))
        msg[0] = '\0';
    fclose(f);
    if (!strstr(msg, needle))
        fail_msg("daemon error '%s' does not contain '%s'", msg, needle);
}

/* A deferred foreign key that no row satisfies: any transaction that writes to `trap` fails
 * at COMMIT (the daemon's connection enforces foreign keys). */
static const char *const trap_sql =
    "CREATE TABLE trap_parent(id INTEGER PRIMARY KEY);"
    "CREATE TABLE trap(x INTEGER REFERENCES trap_parent(id) DEFERRABLE INITIALLY DEFERRED);";
static const char *const untrap_sql =
    "DROP TRIGGER IF EXISTS trap_fire; DROP TABLE IF EXISTS trap; "
    "DROP TABLE IF EXISTS trap_parent;";

static void failed_commit_of_a_submission_is_never_acknowledged(void **state)
{
    (void)state;
    start_daemon();
    uint64_t first = submit_ok("true");
    assert_int_equal(first, 1);
    wait_state(first, "done");
    db_exec(trap_sql);
    db_exec("CREATE TRIGGER trap_fire AFTER INSERT ON tasks"
            " BEGIN INSERT INTO trap VALUES(1); END;");

    /* The insert succeeds, the commit fails: no reply leaves, the daemon stops. */
    json_t *r =
        call_raw("{\"verb\":\"submit\",\"task\":{\"command\":\"echo lost\",\"cwd\":\"/\"}}\n");
    if (r)
        fail_msg("a submission whose commit failed was answered: %s",
                 json_dumps(r, JSON_COMPACT));
    expect_daemon_error("state database: commit: FOREIGN KEY constraint failed");

    /* Nothing of it is in the database: no task, no event. */
    assert_int_equal(db_count("SELECT count(*) FROM tasks"), 1);
    assert_int_equal(db_count("SELECT count(*) FROM tasks WHERE spec LIKE '%echo lost%'"), 0);
    assert_int_equal(db_count("SELECT count(*) FROM events WHERE task_id <> 1"), 0);

    /* Started again, the daemon knows only what it acknowledged; the next task is task 2. */
    db_exec(untrap_sql);
    start_daemon();
    json_t *q = call_ok("{\"verb\":\"queue\",\"all\":true}\n");
    assert_int_equal(json_array_size(json_object_get(q, "tasks")), 1);
    json_decref(q);
    assert_int_equal(submit_ok("true"), 2);
    wait_state(2, "done");
    stop_daemon();
}

static void failed_insert_of_a_submission_is_never_acknowledged(void **state)
{
    (void)state;
    start_daemon();
    db_exec("CREATE TRIGGER trap_fire BEFORE INSERT ON tasks"
            " BEGIN SELECT RAISE(ABORT, 'disk on fire'); END;");
    json_t *r =
        call_raw("{\"verb\":\"submit\",\"task\":{\"command\":\"echo lost\",\"cwd\":\"/\"}}\n");
    if (r)
        fail_msg("a submission that was not stored was answered: %s",
                 json_dumps(r, JSON_COMPACT));
    expect_daemon_error("state database: insert task: disk on fire");
    assert_int_equal(db_count("SELECT count(*) FROM tasks WHERE spec LIKE '%echo lost%'"), 0);
    db_exec(untrap_sql);
    start_daemon();
    assert_int_equal(submit_ok("true"), 3);
    stop_daemon();
}

static void failed_commit_of_a_cancel_is_never_acknowledged(void **state)
{
    (void)state;
    start_daemon();
    /* A task that holds the only GPU (its process never shows on it, so the GPU stays
     * launching), and one queued behind it. */
    uint64_t holder = submit_ok("sleep 30");
    uint64_t queued = submit_ok("echo never");
    wait_state(holder, "running");
    sleep_ms(200);
    char s[32];
    assert_string_equal(task_state(queued, s, sizeof s), "queued");
    db_exec(trap_sql);
    db_exec("CREATE TRIGGER trap_fire AFTER UPDATE OF state ON tasks"
            " WHEN NEW.state = 'cancelled' BEGIN INSERT INTO trap VALUES(1); END;");

    char req[96];
    snprintf(req, sizeof req, "{\"verb\":\"cancel\",\"id\":%llu}\n", (unsigned long long)queued);
    json_t *r = call_raw(req);
    if (r)
        fail_msg("a cancel whose commit failed was answered: %s", json_dumps(r, JSON_COMPACT));
    expect_daemon_error("state database: commit: FOREIGN KEY constraint failed");
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM tasks WHERE id=%llu AND state='queued'",
             (unsigned long long)queued);
    assert_int_equal(db_count(sql), 1);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM events WHERE task_id=%llu AND kind='cancelled'",
             (unsigned long long)queued);
    assert_int_equal(db_count(sql), 0);

    /* Started again: the task is still queued, the holder still runs (adopted); both can be
     * cancelled now. */
    db_exec(untrap_sql);
    start_daemon();
    assert_string_equal(task_state(queued, s, sizeof s), "queued");
    assert_string_equal(task_state(holder, s, sizeof s), "running");
    json_decref(call_ok(req));
    wait_state(queued, "cancelled");
    snprintf(req, sizeof req, "{\"verb\":\"cancel\",\"id\":%llu}\n", (unsigned long long)holder);
    json_decref(call_ok(req));
    wait_state(holder, "cancelled");
    stop_daemon();
}

/* Lines in a file; 0 when it does not exist. */
static int lines_in(const char *path)
{
    FILE *f = fopen(path, "r");
    int n = 0, c;
    while (f && (c = fgetc(f)) != EOF)
        n += c == '\n';
    if (f)
        fclose(f);
    return n;
}

static void on_finish_runs_only_after_the_end_is_stored(void **state)
{
    (void)state;
    char hook[200], log[200], script[400];
    snprintf(hook, sizeof hook, "%s/hook.sh", root);
    snprintf(log, sizeof log, "%s/hook.log", root);
    snprintf(script, sizeof script, "#!/bin/sh\necho \"$CARMA_TASK_ID $CARMA_TASK_STATE\" >>'%s'\n",
             log);
    FILE *f = fopen(hook, "w");
    assert_non_null(f);
    fputs(script, f);
    fclose(f);
    assert_int_equal(chmod(hook, 0700), 0);
    fixture_on_finish = hook;
    start_daemon();
    db_exec(trap_sql);
    db_exec("CREATE TRIGGER trap_fire AFTER UPDATE OF state ON tasks"
            " WHEN NEW.state = 'done' BEGIN INSERT INTO trap VALUES(1); END;");
    uint64_t id = submit_ok("true");
    expect_daemon_error("state database: commit: FOREIGN KEY constraint failed");
    sleep_ms(500); /* a hook started before the commit would have written by now */
    assert_int_equal(lines_in(log), 0);

    db_exec(untrap_sql);
    start_daemon(); /* ends the attempt again, from its result file */
    wait_state(id, "done");
    for (int i = 0; i < 500 && lines_in(log) < 1; i++)
        sleep_ms(10);
    sleep_ms(300);
    assert_int_equal(lines_in(log), 1);
    stop_daemon();
    fixture_on_finish = NULL;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(failed_commit_of_a_submission_is_never_acknowledged,
                                  kill_daemon),
        cmocka_unit_test_teardown(failed_insert_of_a_submission_is_never_acknowledged,
                                  kill_daemon),
        cmocka_unit_test_teardown(failed_commit_of_a_cancel_is_never_acknowledged, kill_daemon),
        cmocka_unit_test_teardown(on_finish_runs_only_after_the_end_is_stored, kill_daemon),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
