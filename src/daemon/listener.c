/* listener.c — the daemon's Unix socket and its peer table: binding and listening (a leftover
 * socket file removed, the path checked), serving again when the socket file is gone,
 * accepting peers (the connected clients) and learning each one's identity from the kernel
 * (SO_PEERCRED), and the limits that keep any local user from locking the others out.
 * Reading requests and writing replies is server.c's.
 *
 * No local user can lock the others out: each user holds at most max_conns_per_uid
 * connections, some are kept for root and the daemon's own user, and running out of file
 * descriptors drops the longest-idle peer to make room, or else rests the listener (a readable
 * listener that cannot be accepted from would make the loop spin). (Idle peers are dropped by
 * server.c, sooner as the table fills.) Nor can one hold the loop by connecting: a turn
 * accepts at most D_MAX_ACCEPTS_PER_TURN connections, the rest wait for the next turn, after
 * the peers already connected are served. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/journal.h"
#include "util/array.h"

#define MAX_PEERS 1024
#define RESERVED_PEERS 32  /* of the table, kept for root and the daemon's own user */
#define FD_RESERVE 64      /* descriptors kept for the database, supervisors, logs */
#define ACCEPT_PAUSE_S 0.1 /* out of descriptors: how long the listener rests */

int d_socket_addr(struct sockaddr_un *sa, const char *path, carma_err *err)
{
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof sa->sun_path)
        return carma_err_set(err, "socket path '%s' is longer than %zu bytes", path,
                             sizeof sa->sun_path - 1);
    strcpy(sa->sun_path, path);
    return 0;
}

/* Raises the soft descriptor limit to the hard one (systemd's default soft limit, 1024, is
 * what a thousand idle connections exhaust), keeping the one it had for the tasks, and sizes
 * the peer table to what it leaves. */
static void size_peer_table(daemon_state *d)
{
    struct rlimit rl;
    d->max_peers = MAX_PEERS;
    d->task_nofile = -1;
    if (getrlimit(RLIMIT_NOFILE, &rl))
        return;
    /* the tasks get it back: a program using select(2) fails past 1024 */
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur <= INT64_MAX)
        d->task_nofile = (int64_t)rl.rlim_cur;
    if (rl.rlim_cur < rl.rlim_max) {
        rlim_t was = rl.rlim_cur;
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl))
            rl.rlim_cur = was;
    }
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)MAX_PEERS + FD_RESERVE)
        d->max_peers = rl.rlim_cur > 2 * FD_RESERVE ? (int)(rl.rlim_cur - FD_RESERVE)
                                                    : (int)(rl.rlim_cur / 2);
    if (d->max_peers < RESERVED_PEERS + 8)
        dlog(d, "warning: a descriptor limit of %llu leaves room for %d connections only",
             (unsigned long long)rl.rlim_cur, d->max_peers);
}

int d_socket_available(const char *path, carma_err *err)
{
    struct sockaddr_un sa;
    if (d_socket_addr(&sa, path, err))
        return -1;
    /* In a sticky directory (/tmp) another user can take the name first: say so, rather than
     * "address in use" or "another daemon is serving" it. */
    struct stat sb;
    if (lstat(path, &sb) == 0 && sb.st_uid != geteuid())
        return carma_err_set(err, "%s exists and belongs to uid %u, not to this daemon's user: "
                                  "another user's; serve another path (--socket), or give "
                                  "yourself a private $XDG_RUNTIME_DIR (carma.sock there is "
                                  "used first)",
                             path, (unsigned)sb.st_uid);
    /* a socket file nobody answers on is a crash's leftover: listen_on removes it */
    int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof sa) == 0) {
        close(probe);
        return carma_err_set(err, "another daemon is serving %s", path);
    }
    if (probe >= 0)
        close(probe);
    return 0;
}

/* Binds and listens on d->sock_path. */
static int listen_on(daemon_state *d, carma_err *err)
{
    const char *path = d->sock_path;
    struct sockaddr_un sa;
    struct stat sb;
    if (d_socket_addr(&sa, path, err) || d_socket_available(path, err))
        return -1;
    /* A socket file nobody answers on is a leftover of a crash: remove it. */
    unlink(path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return carma_err_set(err, "socket: %s", strerror(errno));
    /* Root serves every user (each task runs as its submitter); others serve only
     * themselves, so their socket is theirs alone. */
    mode_t mode = geteuid() == 0 ? 0666 : 0600;
    mode_t old = umask(0777 & ~mode);
    int rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
    umask(old);
    if (rc || chmod(path, mode) || listen(fd, 512) || lstat(path, &sb)) {
        carma_err_set(err, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    d->listen_fd = fd;
    d->sock_dev = sb.st_dev;
    d->sock_ino = sb.st_ino;
    return 0;
}

int d_listen(daemon_state *d, carma_err *err)
{
    size_peer_table(d);
    snprintf(d->sock_path, sizeof d->sock_path, "%s", d->opts->socket_path);
    return listen_on(d, err);
}

/* Whether the socket file at sock_path is still the one listen_fd was bound to. */
static bool socket_still_there(const daemon_state *d)
{
    struct stat sb;
    return lstat(d->sock_path, &sb) == 0 && sb.st_dev == d->sock_dev && sb.st_ino == d->sock_ino;
}

void d_check_socket(daemon_state *d)
{
    if (d->listen_fd >= 0 && socket_still_there(d))
        return;
    if (d->listen_fd >= 0) { /* just found gone: nobody can connect to it any more */
        snprintf(d->sock_lost, sizeof d->sock_lost, "%s", d->sock_path);
        close(d->listen_fd);
        d->listen_fd = -1;
    }
    if (d->opts->socket_default)
        daemon_default_socket(d->sock_path, sizeof d->sock_path);
    carma_err err;
    if (listen_on(d, &err)) {
        if (strcmp(d->sock_fail_msg, err.msg)) /* once per reason, not every tick */
            dlog(d, "the socket %s is gone, and serving again failed: %s; trying again",
                 d->sock_lost, err.msg);
        snprintf(d->sock_fail_msg, sizeof d->sock_fail_msg, "%s", err.msg);
        return;
    }
    d->sock_fail_msg[0] = '\0';
    dlog(d, "the socket %s is gone (its directory removed, as a login session's runtime "
            "directory is at logout); serving %s", d->sock_lost, d->sock_path);
}

void d_drop_peer(daemon_state *d, int i)
{
    peer *p = d->peers[i];
    close(p->fd);
    free(p->in);
    free(p->out);
    free(p);
    d->peers[i] = d->peers[--d->npeers];
}

void d_server_close(daemon_state *d)
{
    while (d->npeers > 0)
        d_drop_peer(d, d->npeers - 1);
    free(d->peers);
    d->peers = NULL;
    d->peers_cap = 0;
    if (d->listen_fd >= 0) {
        close(d->listen_fd);
        if (socket_still_there(d)) /* ours: not a file someone made there since */
            unlink(d->sock_path);
        d->listen_fd = -1;
    }
}

static bool privileged(uid_t uid)
{
    return uid == 0 || uid == geteuid();
}

/* Why a new peer of this uid is turned away, or NULL when it is let in. */
static const char *refusal(const daemon_state *d, uid_t uid, char *buf, size_t cap)
{
    if (d->npeers >= d->max_peers) {
        snprintf(buf, cap, "the daemon is holding its maximum of %d connections; try again",
                 d->max_peers);
        return buf;
    }
    if (privileged(uid))
        return NULL;
    if (d->npeers >= d->max_peers - RESERVED_PEERS) {
        snprintf(buf, cap, "every connection open to users is in use (%d of %d; the rest are "
                 "kept for root); try again", d->npeers, d->max_peers);
        return buf;
    }
    int mine = 0;
    for (int i = 0; i < d->npeers; i++)
        mine += d->peers[i]->uid == uid;
    if (mine < d->cfg.daemon.max_conns_per_uid)
        return NULL;
    snprintf(buf, cap, "too many connections from uid %u: %d open (max_conns_per_uid = %d)",
             (unsigned)uid, mine, d->cfg.daemon.max_conns_per_uid);
    return buf;
}

/* Out of descriptors: drop the peer idle longest (a second at least: a newer one may not
 * have been read yet) to make room, and say so (true: accepting may go on at once); with none
 * to drop, rest the listener (it stays readable, and polling it at once again would spin). */
static bool out_of_descriptors(daemon_state *d, double now)
{
    int oldest = -1;
    for (int i = 0; i < d->npeers; i++) {
        const peer *p = d->peers[i];
        if (p->out_len == 0 && now - p->last_active >= 1.0 &&
            (oldest < 0 || p->last_active < d->peers[oldest]->last_active))
            oldest = i;
    }
    if (now - d->fd_warned_at >= 60.0 || d->fd_warned_at == 0) {
        d->fd_warned_at = now;
        dlog(d, "out of file descriptors with %d connections: dropping the longest idle, "
             "else accepting rests %.0f ms", d->npeers, ACCEPT_PAUSE_S * 1000);
    }
    if (oldest >= 0) {
        d_drop_peer(d, oldest);
        return true;
    }
    d->accept_paused_until = now + ACCEPT_PAUSE_S;
    return false;
}

void d_accept_peers(daemon_state *d, double now)
{
    /* Capped: a user connecting as fast as they are accepted (or refused) would otherwise keep
     * the loop here, and the peers already connected would wait for their replies. Every
     * connection taken counts, refused ones too: those are what a flood is made of. */
    for (int taken = 0; taken < D_MAX_ACCEPTS_PER_TURN;) {
        int fd = accept4(d->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            /* each peer dropped makes room for one accept: the loop ends when none is left
             * to drop (those accepted now are not idle long enough) */
            if ((errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) &&
                out_of_descriptors(d, now))
                continue;
            return;
        }
        taken++;
        struct ucred cred;
        socklen_t len = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
            close(fd);
            continue;
        }
        char why[160];
        if (refusal(d, cred.uid, why, sizeof why)) {
            /* said once, without waiting: a client that reads gets the reason */
            size_t n;
            json_t *e = proto_error("%s", why);
            char *line = proto_encode_line(e, &n);
            json_decref(e);
            if (line)
                send(fd, line, n, MSG_DONTWAIT | MSG_NOSIGNAL); /* closed either way */
            free(line);
            close(fd);
            continue;
        }
        peer *p = calloc(1, sizeof *p);
        peer **grown = p ? array_grow(d->peers, &d->peers_cap, (size_t)d->npeers + 1,
                                      sizeof *grown, 16)
                         : NULL;
        if (!p || !grown) {
            free(p);
            close(fd);
            continue;
        }
        d->peers = grown;
        p->fd = fd;
        p->uid = cred.uid;
        p->gid = cred.gid;
        p->pid = cred.pid;
        p->last_active = clock_mono_s();
        d->peers[d->npeers++] = p;
    }
}
