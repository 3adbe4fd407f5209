/* store_int.h — what the store's files share (store.c, store_attempts.c, store_runs.c): the
 * database handle, its error message, and reading rows. Internal to src/store. */
#ifndef CARMA_STORE_STORE_INT_H
#define CARMA_STORE_STORE_INT_H

#include <sqlite3.h>

#include "store/store.h"

sqlite3 *store_db(store *s);
/* "state database: WHAT: SQLite's message"; returns -1. */
int store_db_error(store *s, carma_err *err, const char *what);
/* Column i as text, "" for NULL. */
const char *store_col_text(sqlite3_stmt *st, int i);
/* An attempt row from columns i.. (n, gpus, dir, state, sup_pid, task_pid, started_at,
 * ended_at, exited, exit_code, signal, outcome, tail; NULLs read as 0) and peak_col. */
store_attempt_row store_attempt_at(sqlite3_stmt *st, int i, int peak_col, uint64_t task_id);

#endif
