/* server.c — the daemon's Unix socket: accepting peers (the connected clients), learning each
 * one's identity from the kernel (SO_PEERCRED), reading newline-framed requests with a size
 * limit, and writing replies without ever blocking the loop. All requests read in one
 * iteration are handled in one transaction, which is committed before any reply goes out
 * (group commit).
 *
 * No local user can lock the others out: each user holds at most max_conns_per_uid
 * connections, some are kept for root and the daemon's own user, idle peers (silent, or
 * whose replies wait unread: none of them sent) are dropped after conn_idle_timeout_s, sooner
 * as the table fills, and running out of file descriptors drops the longest-idle
 * peer to make room, or else rests the listener (a readable listener that cannot be accepted
 * from would make the loop spin).
 *
 * No peer holds the loop or the daemon's memory: a turn handles at most MAX_REQUESTS_PER_TURN
 * of a peer's requests (the rest are served on the next turn, which then does not wait for
 * input), and a peer whose unread replies pass OUTPUT_BACKLOG is neither read nor served until
 * it reads them, so that a client pipelining requests without reading holds about that much,
 * and that only until it has read nothing for the idle limit.
 *
 * The same poll also waits on the metrics endpoint's sockets when metrics_listen is set
 * (metrics.c, http.c): its entries follow the peers', and its connections' deadlines shorten
 * the wait. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/journal.h"
#include "util/array.h"
#include "util/nbsend.h"

#define MAX_PEERS 1024
#define RESERVED_PEERS 32  /* of the table, kept for root and the daemon's own user */
#define FD_RESERVE 64      /* descriptors kept for the database, supervisors, logs */
#define ACCEPT_PAUSE_S 0.1 /* out of descriptors: how long the listener rests */
#define MAX_OUTPUT (64u << 20)  /* a single peer's pending replies: past it, dropped */
#define OUTPUT_BACKLOG (1u << 20) /* pending replies above which a peer's requests wait */
#define MAX_REQUESTS_PER_TURN 512

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
 * what a thousand idle connections exhaust), and sizes the peer table to what it leaves. */
static void size_peer_table(daemon_state *d)
{
    struct rlimit rl;
    d->max_peers = MAX_PEERS;
    if (getrlimit(RLIMIT_NOFILE, &rl))
        return;
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

/* Binds and listens on d->sock_path. */
static int listen_on(daemon_state *d, carma_err *err)
{
    const char *path = d->sock_path;
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
    /* A socket file nobody answers on is a leftover of a crash: remove it. */
    int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof sa) == 0) {
        close(probe);
        return carma_err_set(err, "another daemon is serving %s", path);
    }
    if (probe >= 0)
        close(probe);
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

static void drop_peer(daemon_state *d, int i)
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
        drop_peer(d, d->npeers - 1);
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

/* How long a peer may stay silent, or leave its replies waiting without reading any of them:
 * conn_idle_timeout_s (ten minutes) while the table is at most half full, then less and less,
 * so that idle connections cannot keep the slots (and the replies' memory) from those who
 * ask. A client waiting for something polls on new connections (carma wait, logs --follow):
 * none leaves its replies unread. */
static double idle_limit(const daemon_state *d)
{
    double full = d->max_peers > 0 ? (double)d->npeers / d->max_peers : 0;
    double cap = full <= 0.5 ? INFINITY : full <= 0.75 ? 60.0 : full <= 0.9 ? 15.0 : 5.0;
    return fmin(d->cfg.daemon.conn_idle_timeout_s, cap);
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
        drop_peer(d, oldest);
        return true;
    }
    d->accept_paused_until = now + ACCEPT_PAUSE_S;
    return false;
}

static void accept_peers(daemon_state *d, double now)
{
    for (;;) {
        int fd = accept4(d->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            /* each peer dropped makes room for one accept: the loop ends when none is left
             * to drop (those accepted now are not idle long enough) */
            if ((errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) &&
                out_of_descriptors(d, now))
                continue;
            return;
        }
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

static void queue_reply(peer *p, json_t *reply)
{
    if (p->out_len <= p->out_off) /* nothing was waiting: the wait for progress starts now */
        p->out_moved = clock_mono_s();
    size_t len;
    char *line = proto_encode_line(reply, &len);
    json_decref(reply);
    if (!line || p->out_len + len > MAX_OUTPUT) {
        free(line); /* a peer that never reads its replies is dropped */
        p->closing = true;
        p->out_len = p->out_off = 0;
        return;
    }
    char *out = array_grow(p->out, &p->out_cap, p->out_len + len, 1, 4096);
    if (!out) {
        free(line);
        p->closing = true;
        return;
    }
    p->out = out;
    memcpy(p->out + p->out_len, line, len);
    p->out_len += len;
    free(line);
}

/* Replies waiting beyond OUTPUT_BACKLOG: the peer's requests wait until it reads them. */
static bool backlogged(const peer *p)
{
    return p->out_len - p->out_off > OUTPUT_BACKLOG;
}

/* Reads what the peer sent (unless it is backlogged) and handles the complete lines, as many
 * as one turn allows. Returns false on EOF/error. */
static bool read_peer(daemon_state *d, peer *p)
{
    int handled = 0;
    while (!p->eof && !backlogged(p)) {
        if (p->in_cap - p->in_len < 4096) {
            /* Doubling that stops at one line's limit (array_grow has no ceiling). */
            size_t cap = p->in_cap ? p->in_cap * 2 : 8192;
            if (cap > PROTO_MAX_LINE + 8192)
                cap = PROTO_MAX_LINE + 8192;
            if (cap <= p->in_cap)
                break;
            char *n = realloc(p->in, cap);
            if (!n)
                return false;
            p->in = n;
            p->in_cap = cap;
        }
        ssize_t r = recv(p->fd, p->in + p->in_len, p->in_cap - p->in_len, 0);
        if (r == 0) { /* a client that shut its side down still gets what it asked for */
            p->eof = true;
            break;
        }
        if (r < 0)
            break;
        p->in_len += (size_t)r;
        p->last_active = clock_mono_s();
        if (p->in_len >= p->in_cap)
            break;
    }
    size_t start = 0;
    p->lines_left = false;
    for (;;) {
        char *nl = memchr(p->in + start, '\n', p->in_len - start);
        if (!nl)
            break;
        if (handled >= MAX_REQUESTS_PER_TURN || backlogged(p)) {
            p->lines_left = true; /* served on the next turn, input or not */
            break;
        }
        size_t len = (size_t)(nl - (p->in + start));
        if (len > PROTO_MAX_LINE) {
            queue_reply(p, proto_error("request line longer than %d bytes", PROTO_MAX_LINE));
            p->closing = true;
            p->in_len = 0;
            return true;
        }
        if (len > 0 && !p->closing)
            queue_reply(p, d_handle(d, p, p->in + start, len));
        start += len + 1;
        handled++;
    }
    memmove(p->in, p->in + start, p->in_len - start);
    p->in_len -= start;
    if (p->in_len > PROTO_MAX_LINE) {
        queue_reply(p, proto_error("request line longer than %d bytes", PROTO_MAX_LINE));
        p->closing = true;
        p->in_len = 0;
    }
    if (p->eof && !p->lines_left) { /* answered all it sent: close once the replies are out */
        if (p->out_len <= p->out_off)
            return false;
        p->closing = true;
    }
    return true;
}

/* Sends pending output; returns false when the peer is gone. What is left unsent moves to the
 * buffer's start, so that a peer reading as it goes never reaches MAX_OUTPUT by what it read.
 * A byte sent is progress (out_moved): a peer reading slowly is not idle. */
static bool flush_peer(peer *p, double now)
{
    size_t before = p->out_off;
    if (!nb_send(p->fd, p->out, p->out_len, &p->out_off))
        return false;
    if (p->out_off > before)
        p->out_moved = now;
    if (p->out_off < p->out_len) {
        memmove(p->out, p->out + p->out_off, p->out_len - p->out_off);
        p->out_len -= p->out_off;
        p->out_off = 0;
        return true;
    }
    p->out_off = p->out_len = 0;
    return !p->closing;
}

/* A peer with complete requests left over from an earlier turn, which it may be served now. */
static bool serve_again(const peer *p)
{
    return p->lines_left && !p->closing && !backlogged(p);
}

int d_serve_once(daemon_state *d, int timeout_ms)
{
    int n = d->npeers;
    struct pollfd *fds = calloc((size_t)n + 1 + D_METRICS_MAX_FDS, sizeof *fds);
    if (!fds)
        return -1;
    double now0 = clock_mono_s(), rest = d->accept_paused_until - now0, deadline = INFINITY;
    if (rest > 0 && timeout_ms > (int)(rest * 1000) + 1)
        timeout_ms = (int)(rest * 1000) + 1;
    /* the metrics endpoint's entries follow the peers' */
    int nm = d_metrics_pollfds(d, fds + n + 1, &deadline);
    if (deadline - now0 < timeout_ms / 1000.0)
        timeout_ms = deadline <= now0 ? 0 : (int)((deadline - now0) * 1000) + 1;
    /* a negative fd is skipped by poll: the listener resting */
    fds[0] = (struct pollfd){rest > 0 ? -1 : d->listen_fd, POLLIN, 0};
    for (int i = 0; i < n; i++) {
        peer *p = d->peers[i];
        /* a backlogged peer is not read: its socket fills and its client's writes block */
        bool reading = !p->closing && !p->eof && !backlogged(p);
        fds[i + 1] = (struct pollfd){p->fd, (short)((reading ? POLLIN : 0) |
                                                    (p->out_len > p->out_off ? POLLOUT : 0)), 0};
        if (serve_again(p))
            timeout_ms = 0;
    }
    int r = poll(fds, (nfds_t)(n + 1 + nm), timeout_ms);
    if (r < 0) {
        free(fds);
        return errno == EINTR ? 0 : -1;
    }
    bool *gone = calloc((size_t)n + 1, sizeof *gone);
    if (!gone) {
        free(fds);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if ((fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR)) || serve_again(d->peers[i]))
            gone[i] = !read_peer(d, d->peers[i]);
    /* Group commit: everything those requests changed is durable before any reply leaves. */
    if (d->in_txn)
        d_commit(d);
    if (d->failed) { /* nothing may be acknowledged that is not stored */
        free(fds);
        free(gone);
        return 0;
    }
    double now = clock_mono_s(), idle_s = idle_limit(d);
    for (int i = n - 1; i >= 0; i--) {
        peer *p = d->peers[i];
        if (!gone[i])
            gone[i] = !flush_peer(p, now);
        if (!gone[i] && p->out_len == 0 && now - p->last_active > idle_s)
            gone[i] = true;
        if (!gone[i] && p->out_len > 0 && now - p->out_moved > idle_s) {
            /* it stopped reading: its slot and its replies are not kept for it */
            dlog(d, "dropped a connection of uid %u (pid %d): %zu bytes of replies unread, "
                 "none taken for %.0f s", (unsigned)p->uid, (int)p->pid, p->out_len,
                 now - p->out_moved);
            gone[i] = true;
        }
        if (gone[i])
            drop_peer(d, i);
    }
    if (fds[0].revents & POLLIN)
        accept_peers(d, now);
    d_metrics_serve(d, fds + n + 1, nm);
    free(fds);
    free(gone);
    return 0;
}
