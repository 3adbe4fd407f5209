/* test_store.c — the SQLite store: rows written in a transaction are there after a reopen,
 * a rolled-back transaction leaves nothing, the load joins each task's latest attempt, and
 * queue sequence numbers keep growing across reopenings. */
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

static char dir[64], path[128];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/carma-store-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/carma.db", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd);
}

typedef struct seen {
    int n;
    uint64_t ids[8];
    char states[8][16];
    int attempt_n[8];
    char gpus[8][16];
} seen;

static int collect(void *ctx, const store_task_row *t, const store_attempt_row *a, carma_err *err)
{
    (void)err;
    seen *s = ctx;
    s->ids[s->n] = t->id;
    snprintf(s->states[s->n], sizeof s->states[0], "%s", t->state);
    s->attempt_n[s->n] = a ? a->n : 0;
    snprintf(s->gpus[s->n], sizeof s->gpus[0], "%s", a ? a->gpus : "");
    s->n++;
    return 0;
}

static store_task_row task(const char *state)
{
    return (store_task_row){.uid = 1000, .gid = 1000, .user = "ana",
                            .spec = "{\"command\":\"x\",\"cwd\":\"/\"}", .state = state,
                            .submitted_at = 1.0, .outcome = ""};
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(durable_tasks_attempts_events, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_database_is_a_clear_error, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
