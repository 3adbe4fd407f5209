/* http.h — the daemon's read-only HTTP endpoint (`metrics_listen`): a tiny HTTP/1.1 server
 * that lives in the daemon's poll loop, never blocks it and starts no thread. It answers
 * `GET /metrics` (and HEAD) with a body its caller renders, `GET /` with a link to it, 404 for
 * any other path, 405 for another method HTTP defines, 501 for a method it does not (methods
 * are case-sensitive: `get` is not GET), 400 for anything that is not a request (an HTTP/1.1
 * one without a Host field, or any with two, included); every reply closes its connection.
 * A remote peer cannot stall or exhaust the daemon: a request is at most HTTP_REQ_MAX bytes,
 * a connection lives at most HTTP_DEADLINE_S seconds, and at most HTTP_MAX_CONNS are open (a
 * new one pushes out the oldest that has not sent its request). */
#ifndef CARMA_DAEMON_HTTP_H
#define CARMA_DAEMON_HTTP_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/err.h"
#include "util/hostport.h"

#define HTTP_REQ_MAX 8192   /* request line + headers */
#define HTTP_MAX_CONNS 16
#define HTTP_DEADLINE_S 10.0 /* from accept to the last byte of the reply */
#define HTTP_LINGER_S 1.0    /* after the reply: the peer's leftover input is read and dropped */

/* ---- parsing and routing (pure: no I/O) ---- */

typedef enum http_parse_rc {
    HTTP_INCOMPLETE, /* no end of headers yet, and room left for it */
    HTTP_REQUEST,    /* a whole request line and headers */
    HTTP_BAD         /* not a request, or longer than HTTP_REQ_MAX: 400 */
} http_parse_rc;

typedef struct http_request {
    char method[16];
    char path[256]; /* without its query string */
} http_request;

/* Parses the bytes received so far (len <= HTTP_REQ_MAX). */
http_parse_rc http_parse(const char *buf, size_t len, http_request *req);

typedef enum http_page { HTTP_PAGE_NONE, HTTP_PAGE_INDEX, HTTP_PAGE_METRICS } http_page;
/* The status a parsed request gets (200, 404, 405, 501) and, for 200, which page. */
int http_route(const http_request *req, http_page *page);

/* ---- the server ---- */

/* The /metrics body, rendered when asked (heap, the server frees it); NULL: 500. */
typedef char *(*http_body_fn)(void *ctx, size_t *len);

typedef struct http_server http_server;

/* Listens on addr (a port in use, or an address not on this machine, is an error naming
 * it); the bound address, with the port chosen for port 0, is http_bound's. */
int http_open(http_server **out, const hostport *addr, carma_err *err);
void http_close(http_server *s);
/* "127.0.0.1:9400", "[::1]:9400" */
const char *http_bound(const http_server *s);
int http_bound_port(const http_server *s);

/* The poll entries the server needs at `now` (at most 1 + HTTP_MAX_CONNS): filled into fds. */
int http_pollfds(const http_server *s, struct pollfd *fds, double now);
/* Serves what poll found on the entries http_pollfds filled, and drops connections past their
 * deadline (now: clock_mono_s()). */
void http_serve(http_server *s, const struct pollfd *fds, int nfds, double now,
                http_body_fn body, void *ctx);
/* When the server next has something to do unasked: a connection's deadline, or the end of
 * the listener's rest (clock_mono_s()); INFINITY when nothing. */
double http_next_deadline(const http_server *s);
/* Connections open (tests, logs). */
int http_nconns(const http_server *s);

#endif
