/* store_runs.c — the run history: each task's (user, directory, command, batch, GPU count) last
 * run that ended done with its GPUs to itself, its run time and mean activity. The daemon fills a later
 * identical task's runtime estimate and solo profile from it, as the simulator does from the
 * workload catalog, so the carma policy's backfill, longest-first order and interference model
 * work from measurements rather than from none. */
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

static sqlite3_stmt *prepare(store *s, const char *q, carma_err *err, const char *what)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s), q, -1, &st, NULL) != SQLITE_OK) {
        store_db_error(s, err, what);
        return NULL;
    }
    return st;
}

/* Binds the key to parameters 1..5. */
static void bind_key(sqlite3_stmt *st, const store_run_key *k)
{
    sqlite3_bind_int64(st, 1, k->uid);
    sqlite3_bind_text(st, 2, k->cwd, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, k->command, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, k->batch);
    sqlite3_bind_int(st, 5, k->ngpus);
}

int store_run_put(store *s, const store_run_key *k, const store_run *r, double at,
                  carma_err *err)
{
    static const char q[] =
        "INSERT INTO run_history(uid, cwd, command, batch, ngpus, runtime_s, smact, drama,"
        " updated_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT(uid, cwd, command, batch, ngpus) DO UPDATE SET"
        " runtime_s = excluded.runtime_s, smact = ifnull(excluded.smact, smact),"
        " drama = ifnull(excluded.drama, drama), updated_at = excluded.updated_at";
    sqlite3_stmt *st = prepare(s, q, err, "record a solo run");
    if (!st)
        return -1;
    bind_key(st, k);
    sqlite3_bind_double(st, 6, r->runtime_s);
    bind_or_null(st, 7, r->smact);
    bind_or_null(st, 8, r->drama);
    sqlite3_bind_double(st, 9, at);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_error(s, err, "record a solo run");
    sqlite3_finalize(st);
    return rc;
}

int store_run_get(store *s, const store_run_key *k, store_run *r, carma_err *err)
{
    static const char q[] =
        "SELECT runtime_s, smact, drama FROM run_history"
        " WHERE uid = ? AND cwd = ? AND command = ? AND batch = ? AND ngpus = ?";
    sqlite3_stmt *st = prepare(s, q, err, "read a solo run");
    if (!st)
        return -1;
    bind_key(st, k);
    int step = sqlite3_step(st), found = 0;
    if (step == SQLITE_ROW) {
        *r = (store_run){sqlite3_column_double(st, 0), col_or_nan(st, 1), col_or_nan(st, 2)};
        found = 1;
    } else if (step != SQLITE_DONE) {
        found = store_db_error(s, err, "read a solo run");
    }
    sqlite3_finalize(st);
    return found;
}
