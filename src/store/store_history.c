/* store_history.c — what earlier runs of a task measured, per user and directory (command,
 * batch, GPU count too: store_task_key). The memory history keeps the largest peak of the runs
 * that ended done: a later identical task without --mem is placed with it. The run history
 * keeps the last run that ended done with its GPUs to itself: its run time and mean activity,
 * which the daemon gives the carma policy as the task's runtime estimate and solo profile, and
 * horus as its profiled utilization (as the simulator does from the workload catalog). Per user,
 * because another user's runs of the same command must not steer how this user's tasks are placed:
 * a peak recorded by someone else could hold them to idle GPUs. */
#include <math.h>
#include <stddef.h>

#include "store/store_int.h"

static void bind_or_null(sqlite3_stmt *st, int i, double v)
{
    if (isnan(v))
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_double(st, i, v);
}

static double col_or_nan(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* The statement q with the key bound to parameters 1..5; NULL (err set) on failure. */
static sqlite3_stmt *keyed(store *s, const char *q, const store_task_key *k, carma_err *err,
                           const char *what)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s), q, -1, &st, NULL) != SQLITE_OK) {
        store_db_error(s, err, what);
        return NULL;
    }
    sqlite3_bind_int64(st, 1, k->uid);
    sqlite3_bind_text(st, 2, k->cwd, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, k->command, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, k->batch);
    sqlite3_bind_int(st, 5, k->ngpus);
    return st;
}

/* Steps a write to its end; 0 or -1 (err set). Finalizes it. */
static int write_done(store *s, sqlite3_stmt *st, carma_err *err, const char *what)
{
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_error(s, err, what);
    sqlite3_finalize(st);
    return rc;
}

/* Steps a read: 1 on a row (read it, then finalize), 0 on none, -1 (err set) on an error. */
static int read_row(store *s, sqlite3_stmt *st, carma_err *err, const char *what)
{
    int step = sqlite3_step(st);
    return step == SQLITE_ROW ? 1 : step == SQLITE_DONE ? 0 : store_db_error(s, err, what);
}

#define KEY_WHERE " WHERE uid = ? AND cwd = ? AND command = ? AND batch = ? AND ngpus = ?"
#define KEY_COLS "uid, cwd, command, batch, ngpus"

int store_history_put(store *s, const store_task_key *k, uint64_t peak_mib, double at,
                      carma_err *err)
{
    static const char q[] =
        "INSERT INTO mem_history(" KEY_COLS ", peak_mib, updated_at) VALUES(?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT(" KEY_COLS ") DO UPDATE SET peak_mib = max(peak_mib, excluded.peak_mib),"
        " updated_at = excluded.updated_at";
    sqlite3_stmt *st = keyed(s, q, k, err, "record peak memory");
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 6, (sqlite3_int64)peak_mib);
    sqlite3_bind_double(st, 7, at);
    return write_done(s, st, err, "record peak memory");
}

int store_history_get(store *s, const store_task_key *k, uint64_t *peak_mib, carma_err *err)
{
    sqlite3_stmt *st = keyed(s, "SELECT peak_mib FROM mem_history" KEY_WHERE, k, err,
                             "read peak memory");
    if (!st)
        return -1;
    int found = read_row(s, st, err, "read peak memory");
    if (found > 0)
        *peak_mib = (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return found;
}

int store_run_put(store *s, const store_task_key *k, const store_run *r, double at,
                  carma_err *err)
{
    static const char q[] =
        "INSERT INTO run_history(" KEY_COLS ", runtime_s, smact, drama, util, updated_at)"
        " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(" KEY_COLS ") DO UPDATE SET"
        " runtime_s = excluded.runtime_s, smact = ifnull(excluded.smact, smact),"
        " drama = ifnull(excluded.drama, drama), util = ifnull(excluded.util, util),"
        " updated_at = excluded.updated_at";
    sqlite3_stmt *st = keyed(s, q, k, err, "record a solo run");
    if (!st)
        return -1;
    sqlite3_bind_double(st, 6, r->runtime_s);
    bind_or_null(st, 7, r->smact);
    bind_or_null(st, 8, r->drama);
    bind_or_null(st, 9, r->util);
    sqlite3_bind_double(st, 10, at);
    return write_done(s, st, err, "record a solo run");
}

int store_run_get(store *s, const store_task_key *k, store_run *r, carma_err *err)
{
    sqlite3_stmt *st = keyed(s, "SELECT runtime_s, smact, drama, util FROM run_history" KEY_WHERE,
                             k, err, "read a solo run");
    if (!st)
        return -1;
    int found = read_row(s, st, err, "read a solo run");
    if (found > 0)
        *r = (store_run){sqlite3_column_double(st, 0), col_or_nan(st, 1), col_or_nan(st, 2),
                         col_or_nan(st, 3)};
    sqlite3_finalize(st);
    return found;
}

int store_history_migrate(sqlite3 *db, char **msg)
{
    if (store_has_column(db, "mem_history", "uid"))
        return 0;
    /* Each old row goes to every user and directory that submitted that command with that
     * batch and GPU count (they were all placed with it before); rows no task explains go. */
    static const char q[] =
        "BEGIN IMMEDIATE;" STORE_MEM_HISTORY_TABLE("mem_history_by_user") ";"
        "INSERT OR IGNORE INTO mem_history_by_user(" KEY_COLS ", peak_mib, updated_at)"
        " SELECT t.uid, t.cwd, h.command, h.batch, h.ngpus, h.peak_mib, h.updated_at"
        " FROM mem_history h JOIN (SELECT DISTINCT uid, json_extract(spec, '$.cwd') AS cwd,"
        "  json_extract(spec, '$.command') AS command,"
        "  ifnull(json_extract(spec, '$.batch'), 0) AS batch,"
        "  json_extract(spec, '$.ngpus') AS ngpus FROM tasks WHERE json_valid(spec)) t"
        " ON t.command = h.command AND t.batch = h.batch AND t.ngpus = h.ngpus"
        " WHERE t.cwd IS NOT NULL;"
        "DROP TABLE mem_history;"
        "ALTER TABLE mem_history_by_user RENAME TO mem_history;"
        "COMMIT;";
    if (sqlite3_exec(db, q, NULL, NULL, msg) == SQLITE_OK)
        return 0;
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}
