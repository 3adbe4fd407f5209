/* server.c — the daemon's side of its Unix socket, once peers are connected (listener.c
 * accepts them): reading newline-framed requests with a size limit, and writing replies
 * without ever blocking the loop. All requests read in one iteration are handled in one
 * transaction, which is committed before any reply goes out (group commit).
 *
 * Idle peers (silent, or whose replies wait unread: none of them sent) are dropped after
 * conn_idle_timeout_s, sooner as the table fills.
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
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon/journal.h"
#include "util/array.h"
#include "util/nbsend.h"

#define MAX_OUTPUT (64u << 20)  /* a single peer's pending replies: past it, dropped */
#define OUTPUT_BACKLOG (1u << 20) /* pending replies above which a peer's requests wait */
#define MAX_REQUESTS_PER_TURN 512

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
    /* Only an unfinished line this long is one too long: complete requests left for the next
     * turn (a pipelining client's, behind the turn's limit or its backlog) may fill more. */
    if (p->in_len > PROTO_MAX_LINE && !p->lines_left) {
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
            d_drop_peer(d, i);
    }
    if (fds[0].revents & POLLIN)
        d_accept_peers(d, now);
    d_metrics_serve(d, fds + n + 1, nm);
    free(fds);
    free(gone);
    return 0;
}
