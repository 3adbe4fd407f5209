/* connect.c — blocking request/reply over the daemon's Unix socket. Only a daemon run by root
 * or by the caller is talked to: a user's own daemon's socket may lie in /tmp (with no private
 * $XDG_RUNTIME_DIR), where anyone can take its name first and read what is sent there (a
 * task's whole environment). */
#include "daemon/connect.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/proto.h"
#include "util/clock.h"
#include "util/array.h"

#define ENO_TOO_LONG -1
#define ENO_FOREIGN -2 /* served by another user: foreign_uid */

typedef struct conn_fail {
    int eno;
    unsigned foreign_uid;
} conn_fail;

/* Whose process serves fd: 0 when root or the caller, else -1 with f set. */
static int check_server(int fd, conn_fail *f)
{
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
        f->eno = errno;
        return -1;
    }
    if (cred.uid != 0 && cred.uid != geteuid()) {
        f->eno = ENO_FOREIGN;
        f->foreign_uid = (unsigned)cred.uid;
        return -1;
    }
    return 0;
}

/* One connection attempt: the fd, or -1 with f the reason. timeout_ms > 0 bounds the connect
 * (a full backlog blocks it) and every later send and recv. */
static int try_connect(const char *socket_path, int timeout_ms, conn_fail *f)
{
    int *eno = &f->eno;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(socket_path) >= sizeof sa.sun_path) {
        *eno = ENO_TOO_LONG;
        return -1;
    }
    strcpy(sa.sun_path, socket_path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *eno = errno;
        return -1;
    }
    if (timeout_ms > 0) {
        struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
        if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) ||
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv)) {
            *eno = errno;
            close(fd);
            return -1;
        }
    }
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa)) {
        *eno = errno;
        close(fd);
        return -1;
    }
    if (check_server(fd, f)) {
        close(fd);
        return -1;
    }
    return fd;
}

static const char *reason(const conn_fail *f, char *buf, size_t cap)
{
    if (f->eno == ENO_FOREIGN)
        snprintf(buf, cap, "it is served by uid %u, neither root nor you: not talking to it "
                 "(another user's socket)", f->foreign_uid);
    else
        snprintf(buf, cap, "%s", f->eno == ENO_TOO_LONG ? "socket path too long"
                                                        : strerror(f->eno));
    return buf;
}

int daemon_connect(const char *socket_path, carma_err *err)
{
    return daemon_connect_first(&socket_path, 1, NULL, err);
}

int daemon_connect_timed(const char *socket_path, int timeout_ms, carma_err *err)
{
    conn_fail f = {0, 0};
    char why[160];
    int fd = try_connect(socket_path, timeout_ms, &f);
    if (fd < 0)
        carma_err_set(err, "cannot reach the daemon at %s: %s%s", socket_path,
                      f.eno == EAGAIN || f.eno == EINPROGRESS ? "timed out"
                                                              : reason(&f, why, sizeof why),
                      f.eno == ENO_FOREIGN ? "" : " (is `carma daemon` running?)");
    return fd;
}

int daemon_connect_first(const char *const *paths, int n, int *used, carma_err *err)
{
    conn_fail f[DAEMON_MAX_SOCKETS] = {{0, 0}};
    char why[160];
    if (n > DAEMON_MAX_SOCKETS)
        n = DAEMON_MAX_SOCKETS;
    for (int i = 0; i < n; i++) {
        int fd = try_connect(paths[i], 0, &f[i]);
        if (fd >= 0) {
            if (used)
                *used = i;
            return fd;
        }
    }
    if (n == 1)
        return carma_err_set(err, "cannot reach the daemon at %s: %s%s", paths[0],
                             reason(&f[0], why, sizeof why),
                             f[0].eno == ENO_FOREIGN ? "" : " (is `carma daemon` running?)");
    /* "at A (why), at B (why) nor at C (why)" */
    char tried[CARMA_ERR_MAX] = "";
    for (int i = 0, len = 0; i < n && len >= 0 && (size_t)len < sizeof tried; i++)
        len += snprintf(tried + len, sizeof tried - (size_t)len, "%s %s (%s)",
                        i == 0 ? "at" : i == n - 1 ? " nor at" : ", at", paths[i],
                        reason(&f[i], why, sizeof why));
    return carma_err_set(err,
                         "cannot reach the daemon %s: is `carma daemon` running? (--socket or "
                         "$CARMA_SOCKET names its socket)",
                         tried);
}

#define INTERRUPT_GRACE_S 3.0 /* how long a call waits on for its reply after a signal */

static volatile sig_atomic_t *interrupts; /* daemon_calls_interruptible's */

static sig_atomic_t interrupts_at_start;

void daemon_calls_interruptible(volatile sig_atomic_t *signals)
{
    interrupts = signals;
    interrupts_at_start = signals ? *signals : 0;
}

bool daemon_calls_interrupted(void)
{
    return interrupts && *interrupts != interrupts_at_start;
}

/* Whether a signal came since a call began with *seen (its count then). */
static bool interrupted(sig_atomic_t seen)
{
    return interrupts && *interrupts != seen;
}

json_t *daemon_call(int fd, json_t *req, carma_err *err)
{
    bool answered;
    return daemon_call_answered(fd, req, &answered, err);
}

static json_t *call(int fd, json_t *req, double deadline, size_t max_reply, bool *answered,
                    carma_err *err);

json_t *daemon_call_answered(int fd, json_t *req, bool *answered, carma_err *err)
{
    return call(fd, req, INFINITY, SIZE_MAX, answered, err);
}

json_t *daemon_call_within(int fd, json_t *req, double deadline, size_t max_reply,
                           bool *answered, carma_err *err)
{
    bool a;
    return call(fd, req, deadline, max_reply, answered ? answered : &a, err);
}

/* Waits until fd is ready for `events`, or the end: the deadline (clock_mono_s(), INFINITY:
 * none) or, once a signal has come since the call began with *seen, the grace after it
 * (*grace_end, set then). True when ready (or poll fails: the I/O says what is wrong); false
 * at the end, *by_grace telling which. An interruptible call polls in short slices: a signal
 * that came just before poll (or before a blocking send or recv) would go unseen until the
 * next one. */
static bool ready_by(int fd, short events, double deadline, double *grace_end, sig_atomic_t seen,
                     bool *by_grace)
{
    for (;;) {
        if (interrupted(seen) && !isfinite(*grace_end))
            *grace_end = clock_mono_s() + INTERRUPT_GRACE_S;
        double by = fmin(deadline, *grace_end), left = by - clock_mono_s();
        *by_grace = by == *grace_end;
        if (left <= 0)
            return false;
        double slice = fmin(left, interrupts ? 0.25 : 3600.0); /* in int milliseconds */
        struct pollfd p = {.fd = fd, .events = events};
        int r = poll(&p, 1, (int)(slice * 1000) + 1);
        if (r > 0)
            return true;
        if (r < 0 && errno != EINTR)
            return true;
    }
}

/* Sends req, reads one reply line: within the deadline (INFINITY: none but the socket's own
 * timeout on each send and read) and max_reply bytes. */
static json_t *call(int fd, json_t *req, double deadline, size_t max_reply, bool *answered,
                    carma_err *err)
{
    *answered = false;
    const sig_atomic_t seen = interrupts ? *interrupts : 0;
    /* bounded: never blocked in send or recv, each waited for (ready_by) */
    const bool bounded = interrupts || isfinite(deadline);
    double grace_end = INFINITY;
    bool by_grace;
    size_t len;
    char *line = proto_encode_line(req, &len);
    json_decref(req);
    if (!line) {
        carma_err_set(err, "cannot encode the request");
        return NULL;
    }
    int send_errno = 0;
    for (size_t off = 0; off < len;) {
        /* a long request to a daemon that does not read it: a send cut short by a signal
         * returns what it sent, and the next would block for good */
        if (bounded && !ready_by(fd, POLLOUT, deadline, &grace_end, seen, &by_grace)) {
            if (by_grace)
                carma_err_set(err, "interrupted: the daemon did not take the request within "
                              "%.0f s of the signal", INTERRUPT_GRACE_S);
            else
                carma_err_set(err, "the daemon did not take the request in time");
            free(line);
            return NULL;
        }
        ssize_t w = send(fd, line + off, len - off, MSG_NOSIGNAL | (bounded ? MSG_DONTWAIT : 0));
        if (w < 0 && (errno == EINTR || (bounded && (errno == EAGAIN || errno == EWOULDBLOCK))))
            continue;
        if (w < 0) {
            send_errno = errno; /* the daemon may have said why it hung up: read on */
            break;
        }
        off += (size_t)w;
    }
    free(line);
    size_t cap = 0, n = 0;
    char *buf = NULL;
    for (;;) {
        if (n > 0 && buf[n - 1] == '\n')
            break;
        if (n >= max_reply) {
            carma_err_set(err, "the daemon's reply is longer than %zu bytes", max_reply);
            free(buf);
            return NULL;
        }
        if (n == cap) {
            char *g = array_grow(buf, &cap, n + 1, 1, 65536);
            if (!g) {
                free(buf);
                carma_err_set(err, "out of memory");
                return NULL;
            }
            buf = g;
        }
        /* After a signal the reply has INTERRUPT_GRACE_S more: a daemon that answers (a
         * cancel sent as the command stops) is heard, a stopped or hung one ends the call.
         * A deadline bounds the whole reply: a socket timeout, each read only (a daemon that
         * sent a byte at a time would hold the caller as long as it went on). */
        if (bounded && !ready_by(fd, POLLIN, deadline, &grace_end, seen, &by_grace)) {
            if (by_grace)
                carma_err_set(err, "interrupted: no reply from the daemon within %.0f s of the "
                              "signal", INTERRUPT_GRACE_S);
            else
                carma_err_set(err, "no whole reply in time");
            free(buf);
            return NULL;
        }
        ssize_t r = recv(fd, buf + n, cap - n, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            carma_err_set(err, "no reply from the daemon in time");
            free(buf);
            return NULL;
        }
        if (r <= 0 && send_errno) {
            carma_err_set(err, "sending to the daemon: %s", strerror(send_errno));
            free(buf);
            return NULL;
        }
        if (r <= 0) {
            carma_err_set(err, "the daemon closed the connection without a reply");
            free(buf);
            return NULL;
        }
        n += (size_t)r;
    }
    json_error_t jerr;
    json_t *reply = json_loadb(buf, n, 0, &jerr);
    free(buf);
    if (!reply || !json_is_object(reply)) {
        json_decref(reply);
        carma_err_set(err, "unreadable reply from the daemon");
        return NULL;
    }
    *answered = true;
    if (!json_is_true(json_object_get(reply, "ok"))) {
        const char *e = json_string_value(json_object_get(reply, "error"));
        carma_err_set(err, "%s", e ? e : "the daemon refused the request");
        json_decref(reply);
        return NULL;
    }
    return reply;
}
