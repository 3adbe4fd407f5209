/* store_attempts.c — every attempt of one task, for `show`'s attempt list and `history`'s
 * sums over attempts (the task listings of store.c join only the latest attempt); whether an
 * attempt's cancel was asked for (its event), for a restart. */
#include <stddef.h>

#include "store/store_int.h"

int store_attempts(store *s, uint64_t task_id, store_attempt_fn fn, void *ctx, carma_err *err)
{
    static const char q[] =
        "SELECT n, gpus, dir, state, ifnull(sup_pid, 0), ifnull(task_pid, 0), started_at,"
        " ifnull(ended_at, 0), ifnull(exited, 0), ifnull(exit_code, 0), ifnull(signal, 0),"
        " outcome, tail, ifnull(peak_mib, -1), gpu_uuids FROM attempts WHERE task_id = ?"
        " ORDER BY n";
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s), q, -1, &st, NULL) != SQLITE_OK)
        return store_db_error(s, err, "attempts");
    sqlite3_bind_int64(st, 1, (sqlite3_int64)task_id);
    int rc = 0, step;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        store_attempt_row a = store_attempt_at(st, 0, 13, 14, task_id);
        rc = fn(ctx, &a, err);
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = store_db_error(s, err, "attempts");
    sqlite3_finalize(st);
    return rc;
}

/* Runs q (task id, kind, then `since` when since_at) for whether it finds a row. */
static int event_found(store *s, const char *q, uint64_t task_id, const char *kind,
                       bool since_at, double since, carma_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s), q, -1, &st, NULL) != SQLITE_OK)
        return store_db_error(s, err, "events");
    sqlite3_bind_int64(st, 1, (sqlite3_int64)task_id);
    sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
    if (since_at)
        sqlite3_bind_double(st, 3, since);
    int step = sqlite3_step(st);
    int rc = step == SQLITE_ROW ? 1 : step == SQLITE_DONE ? 0 : store_db_error(s, err, "events");
    sqlite3_finalize(st);
    return rc;
}

int store_event_since(store *s, uint64_t task_id, const char *kind, double since,
                      carma_err *err)
{
    return event_found(s, "SELECT 1 FROM events WHERE task_id = ?1 AND kind = ?2 AND at >= ?3 "
                          "LIMIT 1", task_id, kind, true, since, err);
}

int store_event_since_launch(store *s, uint64_t task_id, const char *kind, carma_err *err)
{
    return event_found(s, "SELECT 1 FROM events WHERE task_id = ?1 AND kind = ?2 AND seq > "
                          "ifnull((SELECT max(seq) FROM events WHERE task_id = ?1 AND "
                          "kind = 'launch'), 0) LIMIT 1", task_id, kind, false, 0, err);
}
