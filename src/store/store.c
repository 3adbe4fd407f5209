/* store.c — SQLite persistence of tasks, attempts and events. */
#include "store/store.h"
#include "store/store_int.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { Q_INS_TASK, Q_UPD_TASK, Q_INS_ATT, Q_UPD_ATT, Q_DEL_ATT, Q_EVENT, Q_BEGIN, Q_COMMIT,
       Q_KEY_GET, NQ };

static const char *const sql[NQ] = {
    [Q_INS_TASK] = "INSERT INTO tasks(uid, gid, user, spec, state, recovery, queue_seq, attempts,"
                   " submitted_at, ended_at, outcome, history_mib, submit_key, held, priority)"
                   " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [Q_UPD_TASK] = "UPDATE tasks SET state=?, recovery=?, queue_seq=?, attempts=?, ended_at=?,"
                   " outcome=?, learned_mib=?, held=?, priority=?, end_reason=? WHERE id=?",
    [Q_INS_ATT] = "INSERT INTO attempts(task_id, n, gpus, dir, state, sup_pid, task_pid,"
                  " started_at, ended_at, exited, exit_code, signal, outcome, tail, peak_mib,"
                  " gpu_uuids) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [Q_UPD_ATT] = "UPDATE attempts SET state=?, sup_pid=?, task_pid=?, ended_at=?, exited=?,"
                  " exit_code=?, signal=?, outcome=?, tail=?, peak_mib=?, gpus=?13"
                  " WHERE task_id=?11 AND n=?12",
    [Q_DEL_ATT] = "DELETE FROM attempts WHERE task_id=? AND n=?",
    [Q_EVENT] = "INSERT INTO events(task_id, at, kind, detail) VALUES(?,?,?,?)",
    [Q_BEGIN] = "BEGIN IMMEDIATE",
    [Q_COMMIT] = "COMMIT",
    [Q_KEY_GET] = "SELECT id FROM tasks WHERE uid=? AND submit_key=?",
};

static const char *const schema =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=FULL;"
    "PRAGMA foreign_keys=ON;"
    "CREATE TABLE IF NOT EXISTS tasks("
    " id INTEGER PRIMARY KEY, uid INTEGER NOT NULL, gid INTEGER NOT NULL, user TEXT NOT NULL,"
    " spec TEXT NOT NULL, state TEXT NOT NULL, recovery INTEGER NOT NULL DEFAULT 0,"
    " queue_seq INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,"
    " submitted_at REAL NOT NULL, ended_at REAL, outcome TEXT NOT NULL DEFAULT '');"
    "CREATE TABLE IF NOT EXISTS attempts("
    " task_id INTEGER NOT NULL REFERENCES tasks(id), n INTEGER NOT NULL, gpus TEXT NOT NULL,"
    " dir TEXT NOT NULL, state TEXT NOT NULL, sup_pid INTEGER, task_pid INTEGER,"
    " started_at REAL NOT NULL, ended_at REAL, exited INTEGER, exit_code INTEGER,"
    " signal INTEGER, outcome TEXT NOT NULL DEFAULT '', tail TEXT NOT NULL DEFAULT '',"
    " PRIMARY KEY(task_id, n));"
    "CREATE TABLE IF NOT EXISTS events("
    " seq INTEGER PRIMARY KEY, task_id INTEGER NOT NULL, at REAL NOT NULL, kind TEXT NOT NULL,"
    " detail TEXT NOT NULL DEFAULT '');"
    STORE_MEM_HISTORY_TABLE("mem_history") ";"
    "CREATE TABLE IF NOT EXISTS run_history("
    " uid INTEGER NOT NULL, cwd TEXT NOT NULL, command TEXT NOT NULL, batch INTEGER NOT NULL,"
    " ngpus INTEGER NOT NULL, runtime_s REAL NOT NULL, smact REAL, drama REAL, util REAL,"
    " updated_at REAL NOT NULL, PRIMARY KEY(uid, cwd, command, batch, ngpus));";

/* Columns added after the first release: added to an older database when missing. */
static const char *const added_columns[][2] = {
    {"tasks", "history_mib INTEGER"},
    {"attempts", "peak_mib INTEGER"},
    {"tasks", "submit_key TEXT"},
    {"tasks", "learned_mib INTEGER"},
    {"tasks", "held INTEGER NOT NULL DEFAULT 0"},
    {"tasks", "priority INTEGER NOT NULL DEFAULT 0"},
    {"tasks", "end_reason TEXT NOT NULL DEFAULT ''"},
    {"attempts", "gpu_uuids TEXT"},
};

/* After the added columns: a submission key is one task per submitting uid; the live tasks
 * (queued, running) are found among all the ended ones by state. */
static const char *const indexes =
    "CREATE UNIQUE INDEX IF NOT EXISTS tasks_by_submit_key ON tasks(uid, submit_key)"
    " WHERE submit_key IS NOT NULL;"
    "CREATE INDEX IF NOT EXISTS tasks_by_state ON tasks(state);";

bool store_has_column(sqlite3 *db, const char *table, const char *column)
{
    char q[128];
    snprintf(q, sizeof q, "SELECT 1 FROM pragma_table_info('%s') WHERE name=?", table);
    sqlite3_stmt *st;
    bool found = false;
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, column, -1, SQLITE_STATIC);
        found = sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
    }
    return found;
}

static int add_missing_columns(sqlite3 *db, char **msg)
{
    for (size_t i = 0; i < sizeof added_columns / sizeof added_columns[0]; i++) {
        char column[64], q[160];
        snprintf(column, sizeof column, "%.*s", (int)strcspn(added_columns[i][1], " "),
                 added_columns[i][1]);
        if (store_has_column(db, added_columns[i][0], column))
            continue;
        snprintf(q, sizeof q, "ALTER TABLE %s ADD COLUMN %s", added_columns[i][0],
                 added_columns[i][1]);
        if (sqlite3_exec(db, q, NULL, NULL, msg) != SQLITE_OK)
            return -1;
    }
    return 0;
}

struct store {
    sqlite3 *db;
    sqlite3_stmt *q[NQ];
    int64_t next_seq;
};

sqlite3 *store_db(store *s)
{
    return s->db;
}

int store_db_error(store *s, carma_err *err, const char *what)
{
    return carma_err_set(err, "state database: %s: %s", what, sqlite3_errmsg(s->db));
}

int store_open(store **out, const char *path, carma_err *err)
{
    store *s = calloc(1, sizeof *s);
    if (!s)
        return carma_err_set(err, "out of memory");
    /* Never through a symlink: the database holds what the daemon runs, and as whom. */
    if (sqlite3_open_v2(path, &s->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW,
                        NULL) != SQLITE_OK) {
        carma_err_set(err, "state database %s: %s", path,
                      s->db ? sqlite3_errmsg(s->db) : "cannot open");
        store_close(s);
        return -1;
    }
    sqlite3_busy_timeout(s->db, 5000);
    if (store_check(s->db, path, err)) { /* before anything is written in it */
        store_close(s);
        return -1;
    }
    char *msg = NULL, set_format[40];
    snprintf(set_format, sizeof set_format, "PRAGMA user_version=%d", STORE_FORMAT);
    if (sqlite3_exec(s->db, schema, NULL, NULL, &msg) != SQLITE_OK ||
        add_missing_columns(s->db, &msg) || store_history_migrate(s->db, &msg) ||
        sqlite3_exec(s->db, indexes, NULL, NULL, &msg) != SQLITE_OK ||
        sqlite3_exec(s->db, set_format, NULL, NULL, &msg) != SQLITE_OK) {
        carma_err_set(err, "state database %s: %s", path, msg ? msg : "schema failed");
        sqlite3_free(msg);
        store_close(s);
        return -1;
    }
    for (int i = 0; i < NQ; i++)
        if (sqlite3_prepare_v3(s->db, sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->q[i], NULL)) {
            store_db_error(s, err, "prepare");
            store_close(s);
            return -1;
        }
    sqlite3_stmt *st;
    s->next_seq = 1;
    if (sqlite3_prepare_v2(s->db, "SELECT max(max(queue_seq), max(id)) FROM tasks", -1, &st,
                           NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            s->next_seq = sqlite3_column_int64(st, 0) + 1;
        sqlite3_finalize(st);
    }
    *out = s;
    return 0;
}

void store_close(store *s)
{
    if (!s)
        return;
    for (int i = 0; i < NQ; i++)
        sqlite3_finalize(s->q[i]);
    sqlite3_close(s->db);
    free(s);
}

static int run(store *s, int q, carma_err *err, const char *what)
{
    int rc = sqlite3_step(s->q[q]);
    sqlite3_reset(s->q[q]);
    sqlite3_clear_bindings(s->q[q]);
    return rc == SQLITE_DONE ? 0 : store_db_error(s, err, what);
}

int store_begin(store *s, carma_err *err)
{
    return run(s, Q_BEGIN, err, "begin");
}

int store_commit(store *s, carma_err *err)
{
    return run(s, Q_COMMIT, err, "commit");
}

void store_rollback(store *s)
{
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
    sqlite3_bind_text(st, i, v ? v : "", -1, SQLITE_STATIC);
}

static void bind_mib(sqlite3_stmt *st, int i, int64_t mib)
{
    if (mib >= 0)
        sqlite3_bind_int64(st, i, mib);
    else
        sqlite3_bind_null(st, i);
}

static void bind_time(sqlite3_stmt *st, int i, double t)
{
    if (t > 0)
        sqlite3_bind_double(st, i, t);
    else
        sqlite3_bind_null(st, i);
}

int store_insert_task(store *s, store_task_row *t, carma_err *err)
{
    sqlite3_stmt *st = s->q[Q_INS_TASK];
    sqlite3_bind_int64(st, 1, t->uid);
    sqlite3_bind_int64(st, 2, t->gid);
    bind_text(st, 3, t->user);
    bind_text(st, 4, t->spec);
    bind_text(st, 5, t->state);
    sqlite3_bind_int(st, 6, t->recovery);
    t->queue_seq = s->next_seq++;
    sqlite3_bind_int64(st, 7, t->queue_seq);
    sqlite3_bind_int(st, 8, t->attempts);
    sqlite3_bind_double(st, 9, t->submitted_at);
    bind_time(st, 10, t->ended_at);
    bind_text(st, 11, t->outcome);
    bind_mib(st, 12, t->history_mib);
    if (t->submit_key)
        sqlite3_bind_text(st, 13, t->submit_key, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 13);
    sqlite3_bind_int(st, 14, t->held);
    sqlite3_bind_int(st, 15, t->priority);
    if (run(s, Q_INS_TASK, err, "insert task"))
        return -1;
    t->id = (uint64_t)sqlite3_last_insert_rowid(s->db);
    return 0;
}

int store_update_task(store *s, const store_task_row *t, carma_err *err)
{
    sqlite3_stmt *st = s->q[Q_UPD_TASK];
    bind_text(st, 1, t->state);
    sqlite3_bind_int(st, 2, t->recovery);
    sqlite3_bind_int64(st, 3, t->queue_seq);
    sqlite3_bind_int(st, 4, t->attempts);
    bind_time(st, 5, t->ended_at);
    bind_text(st, 6, t->outcome);
    bind_mib(st, 7, t->learned_mib);
    sqlite3_bind_int(st, 8, t->held);
    sqlite3_bind_int(st, 9, t->priority);
    bind_text(st, 10, t->end_reason);
    sqlite3_bind_int64(st, 11, (sqlite3_int64)t->id);
    return run(s, Q_UPD_TASK, err, "update task");
}

static void bind_attempt_result(sqlite3_stmt *st, int i, const store_attempt_row *a)
{
    bind_time(st, i, a->ended_at);
    if (!strcmp(a->state, "ended")) {
        sqlite3_bind_int(st, i + 1, a->exited);
        sqlite3_bind_int(st, i + 2, a->exit_code);
        sqlite3_bind_int(st, i + 3, a->term_signal);
    } else {
        sqlite3_bind_null(st, i + 1);
        sqlite3_bind_null(st, i + 2);
        sqlite3_bind_null(st, i + 3);
    }
    bind_text(st, i + 4, a->outcome);
    bind_text(st, i + 5, a->tail);
    bind_mib(st, i + 6, a->peak_mib);
}

int store_insert_attempt(store *s, const store_attempt_row *a, carma_err *err)
{
    sqlite3_stmt *st = s->q[Q_INS_ATT];
    sqlite3_bind_int64(st, 1, (sqlite3_int64)a->task_id);
    sqlite3_bind_int(st, 2, a->n);
    bind_text(st, 3, a->gpus);
    bind_text(st, 4, a->dir);
    bind_text(st, 5, a->state);
    sqlite3_bind_int(st, 6, a->sup_pid);
    sqlite3_bind_int(st, 7, a->task_pid);
    sqlite3_bind_double(st, 8, a->started_at);
    bind_attempt_result(st, 9, a);
    if (a->gpu_uuids && a->gpu_uuids[0])
        sqlite3_bind_text(st, 16, a->gpu_uuids, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 16);
    return run(s, Q_INS_ATT, err, "insert attempt");
}

int store_update_attempt(store *s, const store_attempt_row *a, carma_err *err)
{
    sqlite3_stmt *st = s->q[Q_UPD_ATT];
    bind_text(st, 1, a->state);
    sqlite3_bind_int(st, 2, a->sup_pid);
    sqlite3_bind_int(st, 3, a->task_pid);
    bind_attempt_result(st, 4, a);
    sqlite3_bind_int64(st, 11, (sqlite3_int64)a->task_id);
    sqlite3_bind_int(st, 12, a->n);
    bind_text(st, 13, a->gpus);
    return run(s, Q_UPD_ATT, err, "update attempt");
}

int store_delete_attempt(store *s, uint64_t task_id, int n, carma_err *err)
{
    sqlite3_stmt *st = s->q[Q_DEL_ATT];
    sqlite3_bind_int64(st, 1, (sqlite3_int64)task_id);
    sqlite3_bind_int(st, 2, n);
    return run(s, Q_DEL_ATT, err, "delete attempt");
}

int store_event(store *s, uint64_t task_id, double at, const char *kind, const char *detail,
                carma_err *err)
{
    sqlite3_stmt *st = s->q[Q_EVENT];
    sqlite3_bind_int64(st, 1, (sqlite3_int64)task_id);
    sqlite3_bind_double(st, 2, at);
    bind_text(st, 3, kind);
    bind_text(st, 4, detail);
    return run(s, Q_EVENT, err, "insert event");
}

int store_find_submit_key(store *s, uint32_t uid, const char *key, uint64_t *id,
                          carma_err *err)
{
    sqlite3_stmt *st = s->q[Q_KEY_GET];
    sqlite3_bind_int64(st, 1, uid);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    int found = 0;
    if (rc == SQLITE_ROW) {
        *id = (uint64_t)sqlite3_column_int64(st, 0);
        found = 1;
    } else if (rc != SQLITE_DONE) {
        found = store_db_error(s, err, "look up a submission key");
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return found;
}

int64_t store_next_seq(store *s)
{
    return s->next_seq++;
}

const char *store_col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *v = sqlite3_column_text(st, i);
    return v ? (const char *)v : "";
}

store_attempt_row store_attempt_at(sqlite3_stmt *st, int i, int peak_col, int uuids_col,
                                   uint64_t task_id)
{
    return (store_attempt_row){
        .task_id = task_id,
        .n = sqlite3_column_int(st, i),
        .gpus = store_col_text(st, i + 1),
        .dir = store_col_text(st, i + 2),
        .state = store_col_text(st, i + 3),
        .sup_pid = (pid_t)sqlite3_column_int(st, i + 4),
        .task_pid = (pid_t)sqlite3_column_int(st, i + 5),
        .started_at = sqlite3_column_double(st, i + 6),
        .ended_at = sqlite3_column_double(st, i + 7),
        .exited = sqlite3_column_int(st, i + 8) != 0,
        .exit_code = sqlite3_column_int(st, i + 9),
        .term_signal = sqlite3_column_int(st, i + 10),
        .outcome = store_col_text(st, i + 11),
        .tail = store_col_text(st, i + 12),
        .peak_mib = sqlite3_column_int64(st, peak_col),
        .gpu_uuids = store_col_text(st, uuids_col),
    };
}

int store_load(store *s, store_task_fn fn, void *ctx, carma_err *err)
{
    return store_select(s, &(store_filter){0}, fn, ctx, err);
}

int store_select(store *s, const store_filter *f, store_task_fn fn, void *ctx, carma_err *err)
{
    char q[1536];
    int len = snprintf(q, sizeof q, "%s",
        "SELECT t.id, t.uid, t.gid, t.user, t.spec, t.state, t.recovery, t.queue_seq,"
        " t.attempts, t.submitted_at, ifnull(t.ended_at, 0), t.outcome,"
        " a.n, a.gpus, a.dir, a.state, ifnull(a.sup_pid, 0), ifnull(a.task_pid, 0),"
        " a.started_at, ifnull(a.ended_at, 0), ifnull(a.exited, 0), ifnull(a.exit_code, 0),"
        " ifnull(a.signal, 0), a.outcome, a.tail, ifnull(t.history_mib, -1),"
        " ifnull(a.peak_mib, -1), ifnull(t.learned_mib, -1), t.held, t.priority, t.end_reason,"
        " a.gpu_uuids"
        " FROM tasks t LEFT JOIN attempts a ON a.task_id = t.id AND a.n = t.attempts"
        " WHERE t.id > ?1");
    /* each condition only when asked for; the parameters keep their numbers either way */
    if (f->id)
        len += snprintf(q + len, sizeof q - (size_t)len, " AND t.id = ?2");
    if (f->state)
        len += snprintf(q + len, sizeof q - (size_t)len, " AND t.state = ?3");
    if (f->live)
        len += snprintf(q + len, sizeof q - (size_t)len, " AND t.state IN ('queued', 'running')");
    if (f->user)
        len += snprintf(q + len, sizeof q - (size_t)len, " AND t.user = ?4");
    if (f->ended)
        len += snprintf(q + len, sizeof q - (size_t)len,
                        " AND t.state NOT IN ('queued', 'running')");
    if (f->since > 0)
        len += snprintf(q + len, sizeof q - (size_t)len,
                        " AND (t.submitted_at >= ?6 OR t.ended_at >= ?6)");
    snprintf(q + len, sizeof q - (size_t)len, " ORDER BY t.id LIMIT ?5");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, q, -1, &st, NULL) != SQLITE_OK)
        return store_db_error(s, err, "load");
    sqlite3_bind_int64(st, 1, (sqlite3_int64)f->after);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)f->id);
    sqlite3_bind_text(st, 3, f->state ? f->state : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, f->user ? f->user : "", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, f->limit > 0 ? f->limit : -1); /* SQLite: -1 is no limit */
    sqlite3_bind_double(st, 6, f->since);
    int rc = 0, step;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        store_task_row t = {
            .id = (uint64_t)sqlite3_column_int64(st, 0),
            .uid = (uint32_t)sqlite3_column_int64(st, 1),
            .gid = (uint32_t)sqlite3_column_int64(st, 2),
            .user = store_col_text(st, 3),
            .spec = store_col_text(st, 4),
            .state = store_col_text(st, 5),
            .recovery = sqlite3_column_int(st, 6) != 0,
            .queue_seq = sqlite3_column_int64(st, 7),
            .attempts = sqlite3_column_int(st, 8),
            .submitted_at = sqlite3_column_double(st, 9),
            .ended_at = sqlite3_column_double(st, 10),
            .outcome = store_col_text(st, 11),
            .history_mib = sqlite3_column_int64(st, 25),
            .learned_mib = sqlite3_column_int64(st, 27),
            .held = sqlite3_column_int(st, 28) != 0,
            .priority = sqlite3_column_int(st, 29),
            .end_reason = store_col_text(st, 30),
        };
        store_attempt_row a, *ap = NULL;
        if (sqlite3_column_type(st, 12) != SQLITE_NULL) {
            a = store_attempt_at(st, 12, 26, 31, t.id);
            ap = &a;
        }
        rc = fn(ctx, &t, ap, err);
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = store_db_error(s, err, "load");
    sqlite3_finalize(st);
    return rc;
}

int64_t store_count(store *s, const char *table)
{
    char q[96];
    if (strcmp(table, "tasks") && strcmp(table, "attempts") && strcmp(table, "events") &&
        strcmp(table, "mem_history") && strcmp(table, "run_history"))
        return -1;
    snprintf(q, sizeof q, "SELECT count(*) FROM %s", table);
    sqlite3_stmt *st;
    int64_t n = -1;
    if (sqlite3_prepare_v2(s->db, q, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    return n;
}
