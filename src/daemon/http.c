/* http.c — the tiny read-only HTTP server of the metrics endpoint (http.h): non-blocking
 * accept, a bounded request buffer per connection, one reply, then close. Nothing here blocks
 * or allocates without a bound: HTTP_MAX_CONNS connections of HTTP_REQ_MAX bytes each, a reply
 * the size of the rendered body, and a deadline on each connection. */
#include "daemon/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/nbsend.h"

#define ACCEPTS_PER_TURN 64
#define ACCEPT_PAUSE_S 0.1 /* out of descriptors: how long the listener rests */

/* ---- parsing ---- */

/* What a method is made of (RFC 9110's tchar) */
static bool is_token_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* How many Host fields the header lines from `from` to the empty line hold (the name is
 * case-insensitive; RFC 9112 allows no space before its colon). */
static int host_fields(const char *buf, size_t from, size_t len)
{
    int n = 0;
    for (size_t start = from; start < len;) {
        const char *nl = memchr(buf + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - buf) : len, line = end - start;
        if (line > 0 && buf[end - 1] == '\r')
            line--;
        if (line == 0)
            break;
        n += line >= 5 && !strncasecmp(buf + start, "host:", 5);
        start = end + 1;
    }
    return n;
}

http_parse_rc http_parse(const char *buf, size_t len, http_request *req)
{
    memset(req, 0, sizeof *req);
    /* the request line, once it is whole, is judged at once: garbage waits for nothing */
    const char *eol = memchr(buf, '\n', len);
    if (!eol)
        return len >= HTTP_REQ_MAX ? HTTP_BAD : HTTP_INCOMPLETE;
    size_t line = (size_t)(eol - buf);
    if (line > 0 && buf[line - 1] == '\r')
        line--;
    const char *sp1 = memchr(buf, ' ', line);
    if (!sp1 || sp1 == buf)
        return HTTP_BAD;
    for (const char *c = buf; c < sp1; c++)
        if (!is_token_char(*c))
            return HTTP_BAD;
    const char *target = sp1 + 1;
    const char *sp2 = memchr(target, ' ', line - (size_t)(target - buf));
    if (!sp2 || *target != '/')
        return HTTP_BAD;
    size_t tlen = (size_t)(sp2 - target);
    const char *version = sp2 + 1;
    size_t vlen = line - (size_t)(version - buf);
    if (vlen != 8 || (memcmp(version, "HTTP/1.1", 8) && memcmp(version, "HTTP/1.0", 8)))
        return HTTP_BAD;
    for (size_t i = 0; i < tlen; i++)
        if ((unsigned char)target[i] <= 0x20 || (unsigned char)target[i] >= 0x7f)
            return HTTP_BAD;
    const char *q = memchr(target, '?', tlen);
    size_t plen = q ? (size_t)(q - target) : tlen;
    if (plen >= sizeof req->path)
        return HTTP_BAD;
    /* the headers end with an empty line */
    bool done = false;
    for (size_t i = (size_t)(eol - buf); i < len && !done; i++)
        done = buf[i] == '\n' && ((i + 1 < len && buf[i + 1] == '\n') ||
                                  (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n'));
    if (!done)
        return len >= HTTP_REQ_MAX ? HTTP_BAD : HTTP_INCOMPLETE;
    /* RFC 9112 3.2: an HTTP/1.1 request without exactly one Host field, or any with more than
     * one, is answered 400 */
    int hosts = host_fields(buf, (size_t)(eol - buf) + 1, len);
    if (hosts > 1 || (hosts == 0 && !memcmp(version, "HTTP/1.1", 8)))
        return HTTP_BAD;
    /* a longer method is none this server knows: cut short, it stays unknown (501) */
    size_t mlen = (size_t)(sp1 - buf);
    memcpy(req->method, buf, mlen < sizeof req->method ? mlen : sizeof req->method - 1);
    memcpy(req->path, target, plen);
    return HTTP_REQUEST;
}

/* The methods HTTP defines (RFC 9110, and PATCH); they are case-sensitive: `get` is none. */
static bool is_known_method(const char *m)
{
    static const char *const known[] = {"GET",     "HEAD",    "POST",  "PUT",  "DELETE",
                                        "CONNECT", "OPTIONS", "TRACE", "PATCH"};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (!strcmp(m, known[i]))
            return true;
    return false;
}

int http_route(const http_request *req, http_page *page)
{
    if (!is_known_method(req->method)) {
        *page = HTTP_PAGE_NONE;
        return 501;
    }
    *page = !strcmp(req->path, "/metrics") ? HTTP_PAGE_METRICS
            : !strcmp(req->path, "/")      ? HTTP_PAGE_INDEX
                                           : HTTP_PAGE_NONE;
    if (*page == HTTP_PAGE_NONE)
        return 404;
    if (strcmp(req->method, "GET") && strcmp(req->method, "HEAD")) {
        *page = HTTP_PAGE_NONE;
        return 405;
    }
    return 200;
}

/* ---- the server ---- */

typedef enum conn_state { C_READ, C_WRITE, C_DRAIN } conn_state;

typedef struct conn {
    int fd;
    conn_state st;
    double opened, deadline;
    size_t in_len;
    char in[HTTP_REQ_MAX];
    char *out;
    size_t out_len, out_off;
} conn;

struct http_server {
    int fd;
    char bound[HOSTPORT_HOST_MAX + 16];
    int port;
    conn *conns[HTTP_MAX_CONNS];
    int nconns;
    double paused_until; /* out of descriptors: a readable listener that cannot be accepted
                            from would make the loop spin, so it rests until then */
};

/* Listens on a's address in this family: 0, or the errno that stopped it (err says it). */
static int listen_on(int family, const hostport *a, int *fd_out, carma_err *err)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t len;
    if (family == AF_INET6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)a->port);
        s6->sin6_addr = in6addr_any;
        if (a->host[0] && inet_pton(AF_INET6, a->host, &s6->sin6_addr) != 1) {
            carma_err_set(err, "'%s' is not an IPv6 address", a->host);
            return EINVAL;
        }
        len = sizeof *s6;
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)a->port);
        s4->sin_addr.s_addr = htonl(INADDR_ANY);
        if (a->host[0] && inet_pton(AF_INET, a->host, &s4->sin_addr) != 1) {
            carma_err_set(err, "'%s' is not an IPv4 address", a->host);
            return EINVAL;
        }
        len = sizeof *s4;
    }
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        carma_err_set(err, "socket: %s", strerror(e));
        return e;
    }
    int one = 1, zero = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (family == AF_INET6 && !a->host[0]) /* ":PORT": IPv4 too, through the same socket */
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 64)) {
        int e = errno;
        close(fd);
        carma_err_set(err, "%s", strerror(e));
        return e;
    }
    *fd_out = fd;
    return 0;
}

int http_open(http_server **out, const hostport *addr, carma_err *err)
{
    http_server *s = calloc(1, sizeof *s);
    if (!s)
        return carma_err_set(err, "out of memory");
    int rc;
    if (addr->host[0])
        rc = listen_on(addr->ipv6 ? AF_INET6 : AF_INET, addr, &s->fd, err);
    else if ((rc = listen_on(AF_INET6, addr, &s->fd, err)) == EAFNOSUPPORT)
        rc = listen_on(AF_INET, addr, &s->fd, err); /* no IPv6 here: every IPv4 address */
    if (rc) {
        free(s);
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    char host[INET6_ADDRSTRLEN] = "?";
    if (getsockname(s->fd, (struct sockaddr *)&ss, &len) == 0) {
        if (ss.ss_family == AF_INET6) {
            const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;
            inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof host);
            s->port = ntohs(s6->sin6_port);
        } else {
            const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;
            inet_ntop(AF_INET, &s4->sin_addr, host, sizeof host);
            s->port = ntohs(s4->sin_port);
        }
    }
    snprintf(s->bound, sizeof s->bound, ss.ss_family == AF_INET6 ? "[%s]:%d" : "%s:%d", host,
             s->port);
    *out = s;
    return 0;
}

static void drop(http_server *s, int i)
{
    conn *c = s->conns[i];
    close(c->fd);
    free(c->out);
    free(c);
    s->conns[i] = s->conns[--s->nconns];
}

void http_close(http_server *s)
{
    if (!s)
        return;
    while (s->nconns > 0)
        drop(s, s->nconns - 1);
    close(s->fd);
    free(s);
}

const char *http_bound(const http_server *s)
{
    return s->bound;
}

int http_bound_port(const http_server *s)
{
    return s->port;
}

int http_nconns(const http_server *s)
{
    return s->nconns;
}

int http_pollfds(const http_server *s, struct pollfd *fds, double now)
{
    fds[0] = (struct pollfd){now < s->paused_until ? -1 : s->fd, POLLIN, 0};
    for (int i = 0; i < s->nconns; i++) {
        const conn *c = s->conns[i];
        fds[i + 1] = (struct pollfd){c->fd, c->st == C_WRITE ? POLLOUT : POLLIN, 0};
    }
    return s->nconns + 1;
}

double http_next_deadline(const http_server *s)
{
    double t = s->paused_until > 0 ? s->paused_until : INFINITY;
    for (int i = 0; i < s->nconns; i++)
        t = fmin(t, s->conns[i]->deadline);
    return t;
}

static const char *reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 501: return "Not Implemented";
    default: return "Internal Server Error";
    }
}

static const char index_page[] =
    "<html><head><title>carma</title></head><body><h1>carma daemon</h1>"
    "<p><a href=\"/metrics\">Metrics</a></p></body></html>\n";

/* The reply to what the connection sent (req NULL: a bad request). */
static void reply(conn *c, const http_request *req, http_body_fn body_fn, void *ctx)
{
    http_page page = HTTP_PAGE_NONE;
    int status = req ? http_route(req, &page) : 400;
    char *rendered = NULL;
    const char *body, *type = "text/plain; charset=utf-8";
    size_t blen;
    if (page == HTTP_PAGE_METRICS) {
        rendered = body_fn(ctx, &blen);
        if (rendered)
            type = "text/plain; version=0.0.4; charset=utf-8";
        else
            status = 500;
    } else if (page == HTTP_PAGE_INDEX) {
        type = "text/html; charset=utf-8";
    }
    char msg[64];
    if (page == HTTP_PAGE_INDEX) {
        body = index_page;
        blen = sizeof index_page - 1;
    } else if (rendered) {
        body = rendered;
    } else {
        snprintf(msg, sizeof msg, "%d %s\n", status, reason(status));
        body = msg;
        blen = strlen(msg);
    }
    char head[320];
    int hlen = snprintf(head, sizeof head,
                        "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                        "%sConnection: close\r\n\r\n",
                        status, reason(status), type, blen,
                        status == 405 ? "Allow: GET, HEAD\r\n" : "");
    bool head_only = req && !strcmp(req->method, "HEAD");
    size_t total = (size_t)hlen + (head_only ? 0 : blen);
    c->out = malloc(total);
    if (c->out) {
        memcpy(c->out, head, (size_t)hlen);
        if (!head_only)
            memcpy(c->out + hlen, body, blen);
        c->out_len = total;
    }
    free(rendered);
    c->out_off = 0;
    c->st = C_WRITE; /* out of memory: nothing to write, the connection just closes */
}

/* Writes what it can, and once all is sent starts the lingering close; false when the
 * connection is broken. */
static bool flush(conn *c, double now)
{
    if (!nb_send(c->fd, c->out, c->out_len, &c->out_off))
        return false;
    if (c->out_off < c->out_len)
        return true; /* the rest when the socket takes it */
    /* Sent: the peer's leftover input is read and dropped for a moment, so that closing with
     * unread bytes does not reset the connection before the reply is read. */
    shutdown(c->fd, SHUT_WR);
    free(c->out);
    c->out = NULL;
    c->st = C_DRAIN;
    c->deadline = fmin(c->deadline, now + HTTP_LINGER_S);
    return true;
}

/* Reads from a connection; false when it is to be dropped. */
static bool readable(conn *c, double now, http_body_fn body, void *ctx)
{
    if (c->st == C_DRAIN) {
        char scratch[4096];
        for (;;) {
            ssize_t r = recv(c->fd, scratch, sizeof scratch, 0);
            if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
                return false;
            if (r < 0)
                return true;
        }
    }
    ssize_t r = recv(c->fd, c->in + c->in_len, sizeof c->in - c->in_len, 0);
    if (r == 0)
        return false; /* the peer gave up before a whole request: no reply */
    if (r < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    c->in_len += (size_t)r;
    http_request req;
    http_parse_rc rc = http_parse(c->in, c->in_len, &req);
    if (rc == HTTP_INCOMPLETE)
        return true;
    reply(c, rc == HTTP_REQUEST ? &req : NULL, body, ctx);
    return flush(c, now);
}

static void accept_conns(http_server *s, double now)
{
    for (int k = 0; k < ACCEPTS_PER_TURN; k++) {
        int fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                s->paused_until = now + ACCEPT_PAUSE_S;
            return;
        }
        if (s->nconns == HTTP_MAX_CONNS) {
            /* full: the oldest connection still silent makes room, else the new one goes */
            int oldest = -1;
            for (int i = 0; i < s->nconns; i++)
                if (s->conns[i]->st == C_READ &&
                    (oldest < 0 || s->conns[i]->opened < s->conns[oldest]->opened))
                    oldest = i;
            if (oldest < 0) {
                close(fd);
                continue;
            }
            drop(s, oldest);
        }
        conn *c = calloc(1, sizeof *c);
        if (!c) {
            close(fd);
            continue;
        }
        c->fd = fd;
        c->st = C_READ;
        c->opened = now;
        c->deadline = now + HTTP_DEADLINE_S;
        s->conns[s->nconns++] = c;
    }
}

void http_serve(http_server *s, const struct pollfd *fds, int nfds, double now,
                http_body_fn body, void *ctx)
{
    /* from the end: a dropped connection's place is taken by the last, already served */
    for (int i = s->nconns - 1; i >= 0; i--) {
        conn *c = s->conns[i];
        bool keep = true;
        if (i + 1 < nfds && fds[i + 1].fd == c->fd && fds[i + 1].revents) {
            short ev = fds[i + 1].revents;
            if (c->st == C_WRITE)
                keep = !(ev & (POLLERR | POLLHUP)) && flush(c, now);
            else
                keep = readable(c, now, body, ctx);
        }
        if (keep && now >= c->deadline)
            keep = false; /* too slow: dropped, whatever it was doing */
        if (!keep)
            drop(s, i);
    }
    if (s->paused_until > 0 && now >= s->paused_until)
        s->paused_until = 0;
    if (nfds > 0 && fds[0].fd == s->fd && (fds[0].revents & POLLIN))
        accept_conns(s, now);
}
