/* store_forget.c — what the store lets go of for good: the environment of tasks that ended
 * long ago. A submission carries the submitter's whole environment (tokens, keys), which only
 * a launch needs; an ended task is never launched again, and its row stays for `show` and
 * `history`, so the environment is dropped from its spec when its logs are purged
 * (daemon/purge.c). */
#include <stddef.h>

#include "store/store_int.h"

int store_forget_env(store *s, double ended_before, int *forgotten, carma_err *err)
{
    *forgotten = 0;
    sqlite3_stmt *st;
    const char *q = "UPDATE tasks SET spec = json_remove(spec, '$.env') WHERE ended_at > 0 AND "
                    "ended_at < ? AND state NOT IN ('queued', 'running') AND "
                    "json_type(spec, '$.env') IS NOT NULL";
    if (sqlite3_prepare_v2(store_db(s), q, -1, &st, NULL) != SQLITE_OK)
        return store_db_error(s, err, "forget old environments");
    sqlite3_bind_double(st, 1, ended_before);
    int rc =
        sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_error(s, err, "forget old environments");
    sqlite3_finalize(st);
    if (rc == 0)
        *forgotten = sqlite3_changes(store_db(s));
    return rc;
}
