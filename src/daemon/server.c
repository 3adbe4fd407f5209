/* server.c — the daemon's Unix socket: accepting clients, learning each one's identity from
 * the kernel (SO_PEERCRED), reading newline-framed requests with a size limit, and writing
 * replies without ever blocking the loop. All requests read in one iteration are handled in
 * one transaction, which is committed before any reply goes out (group commit). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/journal.h"

#define MAX_CLIENTS 1024
#define CLIENT_IDLE_S 600.0
#define MAX_OUTPUT (64u << 20)
#define MAX_REQUESTS_PER_TURN 512

static int fill_addr(struct sockaddr_un *sa, const char *path, carma_err *err)
{
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof sa->sun_path)
        return carma_err_set(err, "socket path '%s' is longer than %zu bytes", path,
                             sizeof sa->sun_path - 1);
    strcpy(sa->sun_path, path);
    return 0;
}

int d_listen(daemon_state *d, carma_err *err)
{
    const char *path = d->opts->socket_path;
    struct sockaddr_un sa;
    if (fill_addr(&sa, path, err))
        return -1;
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
    if (rc || chmod(path, mode) || listen(fd, 512)) {
        carma_err_set(err, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    d->listen_fd = fd;
    return 0;
}

static void drop_client(daemon_state *d, int i)
{
    client *c = d->clients[i];
    close(c->fd);
    free(c->in);
    free(c->out);
    free(c);
    d->clients[i] = d->clients[--d->nclients];
}

void d_server_close(daemon_state *d)
{
    while (d->nclients > 0)
        drop_client(d, d->nclients - 1);
    free(d->clients);
    d->clients = NULL;
    if (d->listen_fd >= 0) {
        close(d->listen_fd);
        unlink(d->opts->socket_path);
        d->listen_fd = -1;
    }
}

static void accept_clients(daemon_state *d)
{
    for (;;) {
        int fd = accept4(d->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        struct ucred cred;
        socklen_t len = sizeof cred;
        client *c = d->nclients < MAX_CLIENTS ? calloc(1, sizeof *c) : NULL;
        client **grown = c ? realloc(d->clients, (size_t)(d->nclients + 1) * sizeof *grown) : NULL;
        if (!c || !grown || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
            free(c);
            close(fd);
            continue;
        }
        d->clients = grown;
        c->fd = fd;
        c->uid = cred.uid;
        c->gid = cred.gid;
        c->pid = cred.pid;
        c->last_active = daemon_mono_now();
        d->clients[d->nclients++] = c;
    }
}

static void queue_reply(client *c, json_t *reply)
{
    size_t len;
    char *line = proto_encode_line(reply, &len);
    json_decref(reply);
    if (!line || c->out_len + len > MAX_OUTPUT) {
        free(line); /* a client that never reads its replies is dropped */
        c->closing = true;
        c->out_len = c->out_off = 0;
        return;
    }
    if (c->out_len + len > c->out_cap) {
        size_t cap = c->out_cap ? c->out_cap : 4096;
        while (cap < c->out_len + len)
            cap *= 2;
        char *n = realloc(c->out, cap);
        if (!n) {
            free(line);
            c->closing = true;
            return;
        }
        c->out = n;
        c->out_cap = cap;
    }
    memcpy(c->out + c->out_len, line, len);
    c->out_len += len;
    free(line);
}

/* Reads what the client sent and handles each complete line. Returns false on EOF/error. */
static bool read_client(daemon_state *d, client *c)
{
    int handled = 0;
    for (;;) {
        if (c->in_cap - c->in_len < 4096) {
            size_t cap = c->in_cap ? c->in_cap * 2 : 8192;
            if (cap > PROTO_MAX_LINE + 8192)
                cap = PROTO_MAX_LINE + 8192;
            if (cap <= c->in_cap)
                break;
            char *n = realloc(c->in, cap);
            if (!n)
                return false;
            c->in = n;
            c->in_cap = cap;
        }
        ssize_t r = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
        if (r == 0)
            return c->out_len > c->out_off ? (c->closing = true) : false;
        if (r < 0)
            break;
        c->in_len += (size_t)r;
        c->last_active = daemon_mono_now();
        if (c->in_len >= c->in_cap)
            break;
    }
    size_t start = 0;
    for (;;) {
        char *nl = memchr(c->in + start, '\n', c->in_len - start);
        if (!nl || handled >= MAX_REQUESTS_PER_TURN)
            break;
        size_t len = (size_t)(nl - (c->in + start));
        if (len > PROTO_MAX_LINE) {
            queue_reply(c, proto_error("request line longer than %d bytes", PROTO_MAX_LINE));
            c->closing = true;
            c->in_len = 0;
            return true;
        }
        if (len > 0 && !c->closing)
            queue_reply(c, d_handle(d, c, c->in + start, len));
        start += len + 1;
        handled++;
    }
    memmove(c->in, c->in + start, c->in_len - start);
    c->in_len -= start;
    if (c->in_len > PROTO_MAX_LINE) {
        queue_reply(c, proto_error("request line longer than %d bytes", PROTO_MAX_LINE));
        c->closing = true;
        c->in_len = 0;
    }
    return true;
}

/* Sends pending output; returns false when the client is gone. */
static bool flush_client(client *c)
{
    while (c->out_off < c->out_len) {
        ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
        c->out_off += (size_t)w;
    }
    c->out_off = c->out_len = 0;
    return !c->closing;
}

int d_serve_once(daemon_state *d, int timeout_ms)
{
    int n = d->nclients;
    struct pollfd *fds = calloc((size_t)n + 1, sizeof *fds);
    if (!fds)
        return -1;
    fds[0] = (struct pollfd){d->listen_fd, POLLIN, 0};
    for (int i = 0; i < n; i++) {
        client *c = d->clients[i];
        fds[i + 1] = (struct pollfd){c->fd, (short)((c->closing ? 0 : POLLIN) |
                                                    (c->out_len > c->out_off ? POLLOUT : 0)), 0};
    }
    int r = poll(fds, (nfds_t)n + 1, timeout_ms);
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
        if (fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR))
            gone[i] = !read_client(d, d->clients[i]);
    /* Group commit: everything those requests changed is durable before any reply leaves. */
    if (d->in_txn)
        d_commit(d);
    if (d->failed) { /* nothing may be acknowledged that is not stored */
        free(fds);
        free(gone);
        return 0;
    }
    double now = daemon_mono_now();
    for (int i = n - 1; i >= 0; i--) {
        client *c = d->clients[i];
        if (!gone[i])
            gone[i] = !flush_client(c);
        if (!gone[i] && c->out_len == 0 && now - c->last_active > CLIENT_IDLE_S)
            gone[i] = true;
        if (gone[i])
            drop_client(d, i);
    }
    if (fds[0].revents & POLLIN)
        accept_clients(d);
    free(fds);
    free(gone);
    return 0;
}
