/* store_int.h — what the store's files share (store.c, store_attempts.c, store_history.c,
 * store_check.c): the database handle and format, its checks, its error message, reading rows,
 * and the schema's upgrades. Internal to src/store. */
#ifndef CARMA_STORE_STORE_INT_H
#define CARMA_STORE_STORE_INT_H

#include <sqlite3.h>

#include "store/store.h"

/* The database's format (PRAGMA user_version), raised with each change an older carma cannot
 * read; 0 = before formats were kept, 1 = histories per user and directory. A database of a
 * newer format is refused untouched rather than half understood. */
#define STORE_FORMAT 1

sqlite3 *store_db(store *s);
/* Whether the database at path, just opened, is one store_open may use: an SQLite database of
 * a format this carma reads, undamaged (quick_check), and carma's or empty. 0, or -1 with err
 * naming the file and what to do; nothing in it is written (store_check.c). */
int store_check(sqlite3 *db, const char *path, carma_err *err);
bool store_has_column(sqlite3 *db, const char *table, const char *column);

/* The memory history's table, per user and directory (store_history.c). */
#define STORE_MEM_HISTORY_TABLE(name)                                                          \
    "CREATE TABLE IF NOT EXISTS " name "("                                                     \
    " uid INTEGER NOT NULL, cwd TEXT NOT NULL, command TEXT NOT NULL, batch INTEGER NOT NULL,"  \
    " ngpus INTEGER NOT NULL, peak_mib INTEGER NOT NULL, updated_at REAL NOT NULL,"             \
    " PRIMARY KEY(uid, cwd, command, batch, ngpus))"
/* A memory history from before it was kept per user (one row per command, batch and GPU
 * count) becomes one row for each user and directory that submitted that task. 0, or -1 with
 * *msg (sqlite3_free it). */
int store_history_migrate(sqlite3 *db, char **msg);
/* "state database: WHAT: SQLite's message"; returns -1. */
int store_db_error(store *s, carma_err *err, const char *what);
/* Column i as text, "" for NULL. */
const char *store_col_text(sqlite3_stmt *st, int i);
/* An attempt row from columns i.. (n, gpus, dir, state, sup_pid, task_pid, started_at,
 * ended_at, exited, exit_code, signal, outcome, tail; NULLs read as 0), peak_col and
 * uuids_col (NULL reads as ""). */
store_attempt_row store_attempt_at(sqlite3_stmt *st, int i, int peak_col, int uuids_col,
                                   uint64_t task_id);

#endif
