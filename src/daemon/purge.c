/* purge.c — removing old task logs: the attempt directories (STATE/attempts/ID.N: stdout,
 * stderr, result) of tasks that ended more than `keep_attempt_logs_days` ago, so that a
 * long-lived daemon's disk use stays bounded. Live tasks' directories are never touched; the
 * task's row, attempts and events stay in the database (show and history keep working), and
 * an event says when its logs went. The environment a task was submitted with (tokens, keys:
 * only a launch needs it) goes from its row at the same age. Run at start and hourly
 * (daemon.c). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/journal.h"
#include "daemon/registry.h"
#include "util/array.h"
#include "util/safefs.h"

#define PURGE_INTERVAL_S 3600.0

typedef struct purge_list {
    daemon_state *d;
    double cutoff;
    struct old_task {
        uint64_t id;
        int attempts;
    } *v;
    size_t n, cap;
} purge_list;

static int collect(void *ctx, const store_task_row *t, const store_attempt_row *a, carma_err *err)
{
    (void)a;
    purge_list *l = ctx;
    /* ended by its row (the query's filter); in memory means live, or its end not yet
     * committed: its files may still be written */
    if (t->ended_at <= 0 || t->ended_at >= l->cutoff || t->attempts < 1 ||
        d_task(l->d, t->id))
        return 0;
    struct old_task *v = array_grow(l->v, &l->cap, l->n + 1, sizeof *v, 64);
    if (!v)
        return carma_err_set(err, "out of memory");
    l->v = v;
    l->v[l->n++] = (struct old_task){t->id, t->attempts};
    return 0;
}

/* Removes attempt directory `name` of attempts_fd and the files in it, never following a
 * link (unlinkat removes a link itself). 1 when it was removed, 0 when there was none, -1 on
 * failure (errno set). */
static int remove_attempt_dir(int attempts_fd, const char *name)
{
    int fd = safefs_openat(attempts_fd, name, O_RDONLY | O_DIRECTORY, 0);
    if (fd < 0)
        return errno == ENOENT ? 0 : -1;
    DIR *dir = fdopendir(fd);
    if (!dir) {
        close(fd);
        return -1;
    }
    struct dirent *e;
    while ((e = readdir(dir)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlinkat(fd, e->d_name, 0); /* a file the rmdir below finds left says so */
    closedir(dir);
    return unlinkat(attempts_fd, name, AT_REMOVEDIR) == 0 ? 1 : -1;
}

void d_purge_logs(daemon_state *d, double now_mono)
{
    int days = d->cfg.daemon.keep_attempt_logs_days;
    if (now_mono < d->next_purge || days <= 0 || d->failed)
        return;
    d->next_purge = now_mono + PURGE_INTERVAL_S;
    purge_list l = {.d = d, .cutoff = daemon_wall_now() - days * 86400.0};
    carma_err err;
    if (store_select(d->db, &(store_filter){.ended = true}, collect, &l, &err)) {
        dlog(d, "purging old task logs: %s", err.msg);
        free(l.v);
        return;
    }
    int removed = 0;
    for (size_t i = 0; i < l.n; i++) {
        int gone = 0;
        for (int n = 1; n <= l.v[i].attempts; n++) {
            char name[64];
            snprintf(name, sizeof name, "%llu.%d", (unsigned long long)l.v[i].id, n);
            int r = remove_attempt_dir(d->attempts_fd, name);
            if (r < 0)
                dlog(d, "purging old task logs: attempts/%s: %s", name, strerror(errno));
            gone += r > 0;
        }
        if (gone && d_txn(d)) {
            char detail[96];
            snprintf(detail, sizeof detail, "logs of %d attempt(s) removed after %d day(s)",
                     gone, days);
            if (store_event(d->db, l.v[i].id, daemon_wall_now(), "logs-purged", detail, &err))
                d_fail(d, &err);
            removed++;
        }
    }
    if (removed)
        dlog(d, "removed the logs of %d task(s) ended over %d day(s) ago", removed, days);
    free(l.v);
    int forgotten = 0;
    if (d_txn(d) && store_forget_env(d->db, l.cutoff, &forgotten, &err))
        d_fail(d, &err);
    else if (forgotten > 0)
        dlog(d, "dropped the environment of %d task(s) ended over %d day(s) ago", forgotten, days);
}
