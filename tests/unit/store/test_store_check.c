/* test_store_check.c — what store_open checks before it writes in a database: another
 * program's database (a table of another name, or a `tasks` of other columns) is refused and
 * left without carma's tables; one whose making a crash cut short after `tasks` is carma's,
 * and gains the rest; a damaged one is refused, naming the file and what to do. */
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

static void exec_sql(const char *q)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, q, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

static int count_tables(void)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

static void refused(const char *want)
{
    store *s = NULL;
    carma_err err = {{0}};
    assert_int_equal(store_open(&s, path, &err), -1);
    assert_non_null(strstr(err.msg, path));
    if (!strstr(err.msg, want))
        fail_msg("'%s' does not say '%s'", err.msg, want);
    assert_non_null(strstr(err.msg, "carma left it as it is"));
}

static void another_programs_database_is_refused(void **state)
{
    (void)state;
    exec_sql("CREATE TABLE notes(body TEXT); INSERT INTO notes VALUES('x');");
    refused("is an SQLite database but not carma's (it has no table tasks with a column id)");
    assert_int_equal(count_tables(), 1);
    unlink(path);
    exec_sql("CREATE TABLE tasks(id INTEGER PRIMARY KEY, title TEXT);");
    refused("no table tasks with a column uid");
    assert_int_equal(count_tables(), 1);
}

static void a_database_cut_short_after_tasks_is_carmas(void **state)
{
    (void)state;
    exec_sql("CREATE TABLE tasks(id INTEGER PRIMARY KEY, uid INTEGER NOT NULL, gid INTEGER NOT"
             " NULL, user TEXT NOT NULL, spec TEXT NOT NULL, state TEXT NOT NULL, recovery"
             " INTEGER NOT NULL DEFAULT 0, queue_seq INTEGER NOT NULL, attempts INTEGER NOT NULL"
             " DEFAULT 0, submitted_at REAL NOT NULL, ended_at REAL, outcome TEXT NOT NULL"
             " DEFAULT '');");
    store *s;
    carma_err err;
    assert_int_equal(store_open(&s, path, &err), 0);
    assert_int_equal(store_count(s, "events"), 0);
    store_close(s);
}

static void a_damaged_database_is_refused(void **state)
{
    (void)state;
    exec_sql("PRAGMA page_size=4096; CREATE TABLE tasks(id INTEGER PRIMARY KEY, uid, gid, user,"
             " spec, state, queue_seq); WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1"
             " FROM k WHERE i < 2000) INSERT INTO tasks SELECT i, 1, 1, 'u', printf('%0200d', i),"
             " 'done', i FROM k;");
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    char junk[4096];
    memset(junk, 0xab, sizeof junk);
    assert_int_equal(fseek(f, 40 * 4096, SEEK_SET), 0);
    assert_int_equal(fwrite(junk, 1, sizeof junk, f), sizeof junk);
    fclose(f);
    refused("is damaged (");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(another_programs_database_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(a_database_cut_short_after_tasks_is_carmas, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_damaged_database_is_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
