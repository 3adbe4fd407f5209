/* test_store.c — the SQLite store: rows written in a transaction are there after a reopen,
 * a rolled-back transaction leaves nothing, the load joins each task's latest attempt, and
 * queue sequence numbers keep growing across reopenings; the memory history keeps the largest
 * peak and the run history the last solo run, per (user, directory, command, batch, GPUs); a
 * database from before the history columns is upgraded, its memory history too. */
#include <math.h>
#include <sqlite3.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"

#include "tmpdb.h"

static int db_format(void)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

typedef struct seen {
    int64_t history[8], peak[8];
    int n;
    uint64_t ids[8];
    char states[8][16];
    int attempt_n[8];
    char gpus[8][16];
    int held[8], priority[8];
    char end_reason[8][64];
    char uuids[8][32];
} seen;

static int collect(void *ctx, const store_task_row *t, const store_attempt_row *a, carma_err *err)
{
    (void)err;
    seen *s = ctx;
    s->ids[s->n] = t->id;
    snprintf(s->states[s->n], sizeof s->states[0], "%s", t->state);
    s->attempt_n[s->n] = a ? a->n : 0;
    snprintf(s->gpus[s->n], sizeof s->gpus[0], "%s", a ? a->gpus : "");
    snprintf(s->uuids[s->n], sizeof s->uuids[0], "%s", a ? a->gpu_uuids : "");
    s->history[s->n] = t->history_mib;
    s->peak[s->n] = a ? a->peak_mib : -2;
    s->held[s->n] = t->held;
    s->priority[s->n] = t->priority;
    snprintf(s->end_reason[s->n], sizeof s->end_reason[0], "%s", t->end_reason);
    s->n++;
    return 0;
}

static store_task_row task(const char *state)
{
    return (store_task_row){.uid = 1000, .gid = 1000, .user = "ana",
                            .spec = "{\"command\":\"x\",\"cwd\":\"/\"}", .state = state,
                            .submitted_at = 1.0, .outcome = ""};
}

static void history_keeps_the_largest_peak(void **state)
{
    (void)state;
    store *s;
    carma_err err;
    uint64_t mib = 0;
    store_task_key k32 = {1000, "/p", "python t.py", 32, 1};
    store_task_key k64 = {1000, "/p", "python t.py", 64, 1};
    store_task_key k32x2 = {1000, "/p", "python t.py", 32, 2};
    store_task_key bob32 = {1001, "/p", "python t.py", 32, 1};
    assert_int_equal(store_open(&s, path, &err), 0);
    assert_int_equal(store_history_get(s, &k32, &mib, &err), 0);
    assert_int_equal(store_begin(s, &err), 0);
    assert_int_equal(store_history_put(s, &k32, 9000, 1.0, &err), 0);
    assert_int_equal(store_history_put(s, &k32, 7000, 2.0, &err), 0);
    assert_int_equal(store_history_put(s, &k64, 15000, 2.0, &err), 0);
    store_task_row t = task("queued");
    t.history_mib = 9000;
    assert_int_equal(store_insert_task(s, &t, &err), 0);
    store_attempt_row a = {.task_id = t.id, .n = 1, .gpus = "0", .dir = "/x", .state = "running",
                           .started_at = 1.0, .outcome = "", .tail = "", .peak_mib = -1};
    assert_int_equal(store_insert_attempt(s, &a, &err), 0);
    a.peak_mib = 8800;
    a.state = "ended";
    assert_int_equal(store_update_attempt(s, &a, &err), 0);
    store_task_row u = task("queued"); /* no history figure */
    u.history_mib = -1;
    assert_int_equal(store_insert_task(s, &u, &err), 0);
    t.attempts = 1;
    assert_int_equal(store_update_task(s, &t, &err), 0);
    assert_int_equal(store_commit(s, &err), 0);
    store_close(s);

    assert_int_equal(store_open(&s, path, &err), 0);
    assert_int_equal(store_history_get(s, &k32, &mib, &err), 1);
    assert_int_equal(mib, 9000); /* the larger of 9000 and 7000 */
    assert_int_equal(store_history_get(s, &k64, &mib, &err), 1);
    assert_int_equal(mib, 15000);
    assert_int_equal(store_history_get(s, &k32x2, &mib, &err), 0);
    assert_int_equal(store_history_get(s, &bob32, &mib, &err), 0); /* per user */
    assert_int_equal(store_count(s, "mem_history"), 2);
    seen got = {0};
    assert_int_equal(store_load(s, collect, &got, &err), 0);
    assert_int_equal(got.n, 2);
    assert_int_equal(got.history[0], 9000);
    assert_int_equal(got.peak[0], 8800);
    assert_int_equal(got.history[1], -1);
    assert_int_equal(got.peak[1], -2); /* no attempt */
    store_close(s);
}

/* A database written before the history columns existed opens, and reads them as unknown. */
/* The run history keeps the last solo run per (user, directory, command, batch, GPUs); a run
 * whose activity was not seen keeps the activity known before; unknown is NULL in the
 * database, NaN here; another user's or directory's identical command is another task. */
static void run_history_keeps_the_last_run(void **state)
{
    (void)state;
    store *s;
    carma_err err;
    store_run r = {0};
    store_task_key ana = {1000, "/home/ana/p", "python t.py", 32, 1};
    store_task_key ana2 = {1000, "/home/ana/p", "python t.py", 64, 2};
    store_task_key bob = {1001, "/home/ana/p", "python t.py", 32, 1};
    store_task_key elsewhere = {1000, "/home/ana/q", "python t.py", 32, 1};
    assert_int_equal(store_open(&s, path, &err), 0);
    assert_int_equal(store_run_get(s, &ana, &r, &err), 0);
    assert_int_equal(store_begin(s, &err), 0);
    assert_int_equal(store_run_put(s, &ana, &(store_run){600, 0.8, 0.3, 0.9}, 1.0, &err), 0);
    assert_int_equal(store_run_put(s, &ana, &(store_run){500, NAN, NAN, NAN}, 2.0, &err), 0);
    assert_int_equal(store_run_put(s, &ana2, &(store_run){900, NAN, NAN, 0.5}, 2.0, &err), 0);
    assert_int_equal(store_run_put(s, &bob, &(store_run){5, 0.1, 0.1, 0.2}, 3.0, &err), 0);
    assert_int_equal(store_commit(s, &err), 0);
    store_close(s);

    assert_int_equal(store_open(&s, path, &err), 0);
    assert_int_equal(store_run_get(s, &ana, &r, &err), 1);
    assert_true(r.runtime_s == 500 && r.smact == 0.8 && r.drama == 0.3 && r.util == 0.9);
    assert_int_equal(store_run_get(s, &ana2, &r, &err), 1);
    assert_true(r.runtime_s == 900 && isnan(r.smact) && isnan(r.drama) && r.util == 0.5);
    assert_int_equal(store_run_get(s, &bob, &r, &err), 1);
    assert_true(r.runtime_s == 5);
    assert_int_equal(store_run_get(s, &elsewhere, &r, &err), 0);
    assert_int_equal(store_count(s, "run_history"), 3);
    store_close(s);
}

static void old_database_gains_the_new_columns(void **state)
{
    (void)state;
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    const char *old =
        "CREATE TABLE tasks(id INTEGER PRIMARY KEY, uid INTEGER NOT NULL, gid INTEGER NOT NULL,"
        " user TEXT NOT NULL, spec TEXT NOT NULL, state TEXT NOT NULL, recovery INTEGER NOT NULL"
        " DEFAULT 0, queue_seq INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,"
        " submitted_at REAL NOT NULL, ended_at REAL, outcome TEXT NOT NULL DEFAULT '');"
        "CREATE TABLE attempts(task_id INTEGER NOT NULL REFERENCES tasks(id), n INTEGER NOT NULL,"
        " gpus TEXT NOT NULL, dir TEXT NOT NULL, state TEXT NOT NULL, sup_pid INTEGER,"
        " task_pid INTEGER, started_at REAL NOT NULL, ended_at REAL, exited INTEGER,"
        " exit_code INTEGER, signal INTEGER, outcome TEXT NOT NULL DEFAULT '',"
        " tail TEXT NOT NULL DEFAULT '', PRIMARY KEY(task_id, n));"
        "INSERT INTO tasks VALUES(1, 1000, 1000, 'ana', '{}', 'running', 0, 1, 1, 1.0, NULL, '');"
        "INSERT INTO attempts VALUES(1, 1, '0', '/x', 'running', 0, 0, 1.0, NULL, NULL, NULL,"
        " NULL, '', '');"
        /* the memory history before it was kept per user: ana and bob submitted the task */
        "CREATE TABLE mem_history(command TEXT NOT NULL, batch INTEGER NOT NULL,"
        " ngpus INTEGER NOT NULL, peak_mib INTEGER NOT NULL, updated_at REAL NOT NULL,"
        " PRIMARY KEY(command, batch, ngpus));"
        "INSERT INTO mem_history VALUES('python t.py', 32, 1, 9000, 1.0);"
        "INSERT INTO mem_history VALUES('python u.py', 0, 1, 5000, 1.0);"
        "INSERT INTO mem_history VALUES('python gone.py', 0, 1, 7000, 1.0);"
        "INSERT INTO tasks VALUES(2, 1000, 1000, 'ana', '{\"command\":\"python t.py\","
        "\"cwd\":\"/a\",\"ngpus\":1,\"batch\":32}', 'done', 0, 2, 1, 1.0, 2.0, 'done');"
        "INSERT INTO tasks VALUES(3, 1001, 1001, 'bob', '{\"command\":\"python t.py\","
        "\"cwd\":\"/b\",\"ngpus\":1,\"batch\":32}', 'done', 0, 3, 1, 1.0, 2.0, 'done');"
        "INSERT INTO tasks VALUES(4, 1001, 1001, 'bob', '{\"command\":\"python u.py\","
        "\"cwd\":\"/b\",\"ngpus\":1}', 'done', 0, 4, 1, 1.0, 2.0, 'done');";
    assert_int_equal(sqlite3_exec(db, old, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    store *s;
    carma_err err;
    assert_int_equal(store_open(&s, path, &err), 0);
    seen got = {0};
    assert_int_equal(store_load(s, collect, &got, &err), 0);
    assert_int_equal(got.n, 4);
    assert_int_equal(got.history[0], -1);
    uint64_t mib = 0;
    assert_int_equal(store_history_get(s, &(store_task_key){1000, "/a", "python t.py", 32, 1},
                                       &mib, &err), 1);
    assert_int_equal(mib, 9000);
    assert_int_equal(store_history_get(s, &(store_task_key){1001, "/b", "python t.py", 32, 1},
                                       &mib, &err), 1);
    assert_int_equal(store_history_get(s, &(store_task_key){1001, "/b", "python u.py", 0, 1},
                                       &mib, &err), 1);
    assert_int_equal(mib, 5000);
    assert_int_equal(store_history_get(s, &(store_task_key){1000, "/b", "python u.py", 0, 1},
                                       &mib, &err), 0);
    assert_int_equal(store_count(s, "mem_history"), 3); /* gone.py: no task explains it */
    assert_int_equal(got.peak[0], -1);
    assert_int_equal(got.held[0], 0); /* the queue controls' columns: their defaults */
    assert_int_equal(got.priority[0], 0);
    assert_string_equal(got.end_reason[0], "");
    store_close(s);
    assert_int_equal(db_format(), 1); /* migrated: marked with the current format */
    assert_int_equal(store_open(&s, path, &err), 0); /* a second open adds nothing twice */
    store_close(s);
}

static void durable_tasks_attempts_events(void **state)
{
    (void)state;
    store *s;
    carma_err err;
    assert_int_equal(store_open(&s, path, &err), 0);
    assert_int_equal(store_begin(s, &err), 0);
    store_task_row a = task("queued"), b = task("queued");
    assert_int_equal(store_insert_task(s, &a, &err), 0);
    assert_int_equal(store_insert_task(s, &b, &err), 0);
    assert_int_equal(a.id, 1);
    assert_int_equal(b.id, 2);
    assert_true(b.queue_seq > a.queue_seq);
    store_attempt_row at = {.task_id = 2, .n = 1, .gpus = "0,1", .dir = "/x", .state = "starting",
                            .started_at = 2.0, .outcome = "", .tail = ""};
    assert_int_equal(store_insert_attempt(s, &at, &err), 0);
    b.state = "running";
    b.attempts = 1;
    assert_int_equal(store_update_task(s, &b, &err), 0);
    assert_int_equal(store_event(s, 2, 2.0, "launch", "attempt 1", &err), 0);
    assert_int_equal(store_commit(s, &err), 0);
    /* A rolled-back transaction leaves nothing behind. */
    assert_int_equal(store_begin(s, &err), 0);
    store_task_row c = task("queued");
    assert_int_equal(store_insert_task(s, &c, &err), 0);
    store_rollback(s);
    store_close(s);

    assert_int_equal(store_open(&s, path, &err), 0);
    assert_int_equal(store_count(s, "tasks"), 2);
    assert_int_equal(store_count(s, "attempts"), 1);
    assert_int_equal(store_count(s, "events"), 1);
    assert_int_equal(store_count(s, "sqlite_master"), -1);
    seen got = {0};
    assert_int_equal(store_load(s, collect, &got, &err), 0);
    assert_int_equal(got.n, 2);
    assert_string_equal(got.states[0], "queued");
    assert_int_equal(got.attempt_n[0], 0);
    assert_string_equal(got.states[1], "running");
    assert_int_equal(got.attempt_n[1], 1);
    assert_string_equal(got.gpus[1], "0,1");
    /* Sequence numbers continue past every one already used. */
    assert_true(store_next_seq(s) > b.queue_seq);
    store_close(s);
}

static int collect_attempt(void *ctx, const store_attempt_row *a, carma_err *err)
{
    (void)err;
    seen *s = ctx;
    s->attempt_n[s->n] = a->n;
    s->peak[s->n] = a->peak_mib;
    snprintf(s->gpus[s->n], sizeof s->gpus[0], "%s", a->gpus);
    snprintf(s->uuids[s->n], sizeof s->uuids[0], "%s", a->gpu_uuids);
    s->n++;
    return 0;
}

/* An attempt keeps the UUIDs it was launched on (none: read back as ""); an update may
 * renumber its GPUs (a restarted daemon's numbers) and leaves the UUIDs as they were. */
static void attempt_gpu_uuids(void **state)
{
    (void)state;
    store *s;
    carma_err err;
    assert_int_equal(store_open(&s, path, &err), 0);
    assert_int_equal(store_begin(s, &err), 0);
    store_task_row a = task("running"), b = task("running");
    assert_int_equal(store_insert_task(s, &a, &err), 0);
    assert_int_equal(store_insert_task(s, &b, &err), 0);
    a.attempts = b.attempts = 1;
    assert_int_equal(store_update_task(s, &a, &err), 0);
    assert_int_equal(store_update_task(s, &b, &err), 0);
    store_attempt_row at = {.task_id = a.id, .n = 1, .gpus = "1,2", .dir = "/x",
                            .state = "running", .started_at = 1, .outcome = "", .tail = "",
                            .peak_mib = -1, .gpu_uuids = "GPU-b,GPU-c"};
    assert_int_equal(store_insert_attempt(s, &at, &err), 0);
    store_attempt_row bt = at;
    bt.task_id = b.id;
    bt.gpu_uuids = NULL;
    assert_int_equal(store_insert_attempt(s, &bt, &err), 0);
    at.gpus = "0,1";
    at.gpu_uuids = "GPU-other";
    assert_int_equal(store_update_attempt(s, &at, &err), 0);
    assert_int_equal(store_commit(s, &err), 0);
    seen got = {0};
    assert_int_equal(store_select(s, &(store_filter){.live = true}, collect, &got, &err), 0);
    assert_int_equal(got.n, 2);
    assert_string_equal(got.gpus[0], "0,1");
    assert_string_equal(got.uuids[0], "GPU-b,GPU-c");
    assert_string_equal(got.uuids[1], "");
    got = (seen){0};
    assert_int_equal(store_attempts(s, a.id, collect_attempt, &got, &err), 0);
    assert_int_equal(got.n, 1);
    assert_string_equal(got.uuids[0], "GPU-b,GPU-c");
    store_close(s);
}

/* Every attempt of a task in order; ended tasks only; tasks submitted or ended since a time. */
static void attempts_ended_and_since(void **state)
{
    (void)state;
    store *s;
    carma_err err;
    assert_int_equal(store_open(&s, path, &err), 0);
    assert_int_equal(store_begin(s, &err), 0);
    store_task_row a = task("done"), b = task("queued");
    a.submitted_at = 100;
    a.ended_at = 500;
    assert_int_equal(store_insert_task(s, &a, &err), 0);
    a.attempts = 2;
    assert_int_equal(store_update_task(s, &a, &err), 0);
    assert_int_equal(store_insert_task(s, &b, &err), 0);
    for (int n = 1; n <= 2; n++) {
        store_attempt_row at = {.task_id = a.id, .n = n, .gpus = n == 1 ? "0" : "1,2",
                                .dir = "/x", .state = "ended", .started_at = 100.0 * n,
                                .ended_at = 100.0 * n + 50, .outcome = "", .tail = "",
                                .peak_mib = 1000 * n};
        assert_int_equal(store_insert_attempt(s, &at, &err), 0);
    }
    assert_int_equal(store_commit(s, &err), 0);
    seen got = {0};
    assert_int_equal(store_attempts(s, a.id, collect_attempt, &got, &err), 0);
    assert_int_equal(got.n, 2);
    assert_int_equal(got.attempt_n[0], 1);
    assert_int_equal(got.attempt_n[1], 2);
    assert_string_equal(got.gpus[1], "1,2");
    assert_int_equal(got.peak[1], 2000);
    got = (seen){0};
    assert_int_equal(store_select(s, &(store_filter){.ended = true}, collect, &got, &err), 0);
    assert_int_equal(got.n, 1);
    assert_int_equal(got.ids[0], a.id);
    got = (seen){0}; /* a: submitted 100, ended 500; b: submitted 1 */
    assert_int_equal(store_select(s, &(store_filter){.since = 400}, collect, &got, &err), 0);
    assert_int_equal(got.n, 1);
    got = (seen){0};
    assert_int_equal(store_select(s, &(store_filter){.since = 600}, collect, &got, &err), 0);
    assert_int_equal(got.n, 0);
    store_close(s);
}

static void bad_database_is_a_clear_error(void **state)
{
    (void)state;
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("this is not a database, just text that is long enough to look like a header....", f);
    fclose(f);
    store *s = NULL;
    carma_err err = {{0}};
    assert_int_equal(store_open(&s, path, &err), -1);
    assert_non_null(strstr(err.msg, path));
    unlink(path);
}

/* A database is marked with its format; one a newer carma wrote is refused, untouched. */
static void newer_database_is_refused(void **state)
{
    (void)state;
    store *s;
    carma_err err = {{0}};
    assert_int_equal(store_open(&s, path, &err), 0);
    store_close(s);
    assert_int_equal(db_format(), 1);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version=7; DROP INDEX tasks_by_state;", NULL,
                                  NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(store_open(&s, path, &err), -1);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "format 7, newer than this carma reads (1)"));
    assert_int_equal(db_format(), 7);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK); /* nothing was created in it */
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE"
                                        " name='tasks_by_state'", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* The queue controls' columns: held and priority written with the task and by an update,
 * the reason carma ended it by an update; all read back after a reopen. */
static void queue_controls_are_stored(void **state)
{
    (void)state;
    store *s;
    carma_err err;
    assert_int_equal(store_open(&s, path, &err), 0);
    assert_int_equal(store_begin(s, &err), 0);
    store_task_row a = task("queued"), b = task("queued");
    a.held = true;
    a.priority = -3;
    assert_int_equal(store_insert_task(s, &a, &err), 0);
    assert_int_equal(store_insert_task(s, &b, &err), 0);
    b.state = "cancelled";
    b.priority = 7;
    b.end_reason = "dependency 1 ended failed (--afterok)";
    assert_int_equal(store_update_task(s, &b, &err), 0);
    assert_int_equal(store_commit(s, &err), 0);
    store_close(s);
    assert_int_equal(store_open(&s, path, &err), 0);
    seen got = {0};
    assert_int_equal(store_load(s, collect, &got, &err), 0);
    assert_int_equal(got.n, 2);
    assert_int_equal(got.held[0], 1);
    assert_int_equal(got.priority[0], -3);
    assert_int_equal(got.held[1], 0);
    assert_int_equal(got.priority[1], 7);
    assert_string_equal(got.end_reason[1], "dependency 1 ended failed (--afterok)");
    store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(durable_tasks_attempts_events, setup, teardown),
        cmocka_unit_test_setup_teardown(history_keeps_the_largest_peak, setup, teardown),
        cmocka_unit_test_setup_teardown(run_history_keeps_the_last_run, setup, teardown),
        cmocka_unit_test_setup_teardown(old_database_gains_the_new_columns, setup, teardown),
        cmocka_unit_test_setup_teardown(queue_controls_are_stored, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_database_is_a_clear_error, setup, teardown),
        cmocka_unit_test_setup_teardown(newer_database_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(attempts_ended_and_since, setup, teardown),
        cmocka_unit_test_setup_teardown(attempt_gpu_uuids, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
