/* test_metrics.c — the Prometheus endpoint's parts: the exposition writer (label escaping,
 * unknown values left out, histograms), the daemon's renderer over a hand-built state (unknown
 * GPU readings omitted, never 0; counters; tasks by state), the counters' hooks, the
 * metrics_listen parser, the HTTP request parser and router on bad input, and the server on a
 * real socket: a connection cap, deadlines, replies to bad requests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config/config.h"
#include "daemon/daemon_int.h"
#include "daemon/http.h"
#include "util/clock.h"
#include "util/hostport.h"
#include "util/promtext.h"

/* ---- the exposition writer ---- */

static void label_values_are_escaped(void **state)
{
    (void)state;
    char out[64];
    promtext_escape_label("a\\b\"c\nd", out, sizeof out);
    assert_string_equal(out, "a\\\\b\\\"c\\nd");
    promtext_escape_label("x\ty\x01z\xc3\xa9", out, sizeof out);
    assert_string_equal(out, "x?y?z??");
    /* cut short, never in the middle of an escape */
    assert_int_equal(promtext_escape_label("ab\"", out, 4), 2);
    assert_string_equal(out, "ab");
}

static void samples_families_and_histograms(void **state)
{
    (void)state;
    promtext p = {0};
    promtext_family(&p, "m", "gauge", "line\none \\ two");
    promtext_sample(&p, "m", &(prom_label){"l", "q\""}, 1, 0.25);
    promtext_sample(&p, "m", &(prom_label){"l", "unknown"}, 1, NAN);
    promtext_sample(&p, "m", NULL, 0, INFINITY);
    promtext_sample(&p, "m", NULL, 0, 0.1);
    promtext_sample_u64(&p, "c_total", NULL, 0, UINT64_MAX);
    const double bounds[] = {1, 10};
    const uint64_t counts[] = {2, 0, 3};
    promtext_histogram(&p, "h", bounds, 2, counts, 42.5);
    size_t len;
    char *s = promtext_take(&p, &len);
    assert_non_null(s);
    assert_int_equal(strlen(s), len);
    assert_string_equal(s, "# HELP m line\\none \\\\ two\n# TYPE m gauge\n"
                           "m{l=\"q\\\"\"} 0.25\n"
                           "m +Inf\n"
                           "m 0.1\n"
                           "c_total 18446744073709551615\n"
                           "h_bucket{le=\"1\"} 2\nh_bucket{le=\"10\"} 2\nh_bucket{le=\"+Inf\"} 5\n"
                           "h_sum 42.5\nh_count 5\n");
    assert_null(strstr(s, "unknown"));
    free(s);
    s = promtext_take(&p, &len); /* empty again */
    assert_non_null(s);
    assert_int_equal(len, 0);
    free(s);
}

/* ---- the daemon's exposition ---- */

typedef struct fake_daemon {
    daemon_state d;
    gpu_reading readings[2];
    dtask tasks[3];
    dtask *live[3], *running[1];
} fake_daemon;

static void fake_init(fake_daemon *f)
{
    memset(f, 0, sizeof *f);
    f->d.ngpus = 2;
    f->d.readings = f->readings;
    f->d.sample_ok = true;
    f->d.started_wall = 1700000000;
    gpu_reading *r = &f->readings[0];
    snprintf(r->uuid, sizeof r->uuid, "GPU-0\"evil\\");
    snprintf(r->name, sizeof r->name, "A100\nx");
    r->mem_known = true;
    r->total_mib = 40960, r->used_mib = 1000, r->free_mib = 39960;
    r->smact = 0.5, r->smocc = 0.25, r->drama = 0.125;
    r->power_w = 250.5, r->energy_mj = 123456789.0;
    r = &f->readings[1];
    snprintf(r->uuid, sizeof r->uuid, "GPU-1");
    snprintf(r->name, sizeof r->name, "V100");
    r->mem_known = false;
    r->smact = r->smocc = r->drama = r->power_w = r->energy_mj = NAN;
    dstate states[] = {DS_QUEUED, DS_QUEUED, DS_RUNNING};
    for (int i = 0; i < 3; i++) {
        f->tasks[i].state = states[i];
        f->live[i] = &f->tasks[i];
    }
    f->tasks[2].att.ngpus = 1;
    f->tasks[2].att.gpus[0] = 0;
    f->running[0] = &f->tasks[2];
    f->d.tasks = f->live;
    f->d.ntasks = 3;
    f->d.running = f->running;
    f->d.nrunning = 1;
}

static char *render(const daemon_state *d)
{
    size_t len;
    char *s = d_metrics_render(d, &len);
    assert_non_null(s);
    assert_int_equal(strlen(s), len);
    return s;
}

/* The value of the sample whose line starts with `series` (name and labels, up to the
 * space), or NAN when there is none. */
static double value_of(const char *text, const char *series)
{
    size_t n = strlen(series);
    for (const char *line = text; line && *line;
         line = strchr(line, '\n'), line = line ? line + 1 : NULL)
        if (!strncmp(line, series, n) && line[n] == ' ')
            return strtod(line + n + 1, NULL);
    return NAN;
}

static void known_readings_and_counters_are_rendered(void **state)
{
    (void)state;
    fake_daemon f;
    fake_init(&f);
    char host[256] = "";
    gethostname(host, sizeof host);
    char *s = render(&f.d);
    char series[512];
    const char *l0 =
        "{gpu=\"0\",UUID=\"GPU-0\\\"evil\\\\\",model_name=\"A100\\nx\",Hostname=\"%s\"}";
    struct { const char *name; double v; } want[] = {
        {"DCGM_FI_DEV_FB_USED", 1000}, {"DCGM_FI_DEV_FB_FREE", 39960},
        {"carma_gpu_memory_total_mib", 40960}, {"DCGM_FI_PROF_SM_ACTIVE", 0.5},
        {"DCGM_FI_PROF_SM_OCCUPANCY", 0.25}, {"DCGM_FI_PROF_DRAM_ACTIVE", 0.125},
        {"DCGM_FI_DEV_POWER_USAGE", 250.5},
        {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", 123456789.0}, {"carma_gpu_tasks", 1},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int n = snprintf(series, sizeof series, "%s", want[i].name);
        snprintf(series + n, sizeof series - (size_t)n, l0, host);
        assert_true(value_of(s, series) == want[i].v);
        /* a HELP and a TYPE line for every family */
        snprintf(series, sizeof series, "# TYPE %s gauge\n", want[i].name);
        assert_non_null(strstr(s, series));
    }
    /* GPU 1's unknown readings are not there at all; its task count (known: 0) is */
    assert_null(strstr(s, "DCGM_FI_DEV_FB_USED{gpu=\"1\""));
    assert_null(strstr(s, "DCGM_FI_PROF_SM_ACTIVE{gpu=\"1\""));
    assert_null(strstr(s, "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\""));
    assert_null(strstr(s, "carma_gpu_memory_total_mib{gpu=\"1\""));
    assert_non_null(strstr(s, "carma_gpu_tasks{gpu=\"1\",UUID=\"GPU-1\",model_name=\"V100\""));
    assert_true(value_of(s, "carma_tasks{state=\"queued\"}") == 2);
    assert_true(value_of(s, "carma_tasks{state=\"running\"}") == 1);
    assert_true(value_of(s, "carma_oom_crashes_total") == 0);
    assert_true(value_of(s, "carma_daemon_start_time_seconds") == 1700000000);
    assert_non_null(strstr(s, "# TYPE carma_task_wait_seconds histogram\n"));
    free(s);
}

static void a_failed_sample_leaves_every_reading_out(void **state)
{
    (void)state;
    fake_daemon f;
    fake_init(&f);
    f.d.sample_ok = false;
    char *s = render(&f.d);
    assert_null(strstr(s, "DCGM_FI_DEV_FB_USED{"));
    assert_null(strstr(s, "DCGM_FI_DEV_POWER_USAGE{"));
    assert_non_null(strstr(s, "# TYPE DCGM_FI_DEV_FB_USED gauge")); /* the family stays */
    assert_non_null(strstr(s, "carma_gpu_tasks{gpu=\"0\""));
    free(s);
}

static void hooks_count_placements_crashes_recoveries_and_ends(void **state)
{
    (void)state;
    fake_daemon f;
    fake_init(&f);
    d_metrics_placed(&f.d, false, 0.5);  /* bucket le=1 */
    d_metrics_placed(&f.d, true, 1.0);   /* le=1 (inclusive) */
    d_metrics_placed(&f.d, true, 100);   /* le=300 */
    d_metrics_placed(&f.d, false, -3);   /* the clock stepped back: 0 */
    d_metrics_placed(&f.d, false, 1e6);  /* +Inf */
    dtask *t = &f.tasks[2];
    d_metrics_attempt_ended(&f.d, t, TASK_DONE);  /* done, never crashed: no recovery */
    d_metrics_attempt_ended(&f.d, t, TASK_OOM);
    d_metrics_attempt_ended(&f.d, t, TASK_OOM);
    d_metrics_attempt_ended(&f.d, t, TASK_DONE);
    t->state = DS_DONE;
    d_metrics_task_ended(&f.d, t);
    f.tasks[1].state = DS_TIMEOUT;
    d_metrics_task_ended(&f.d, &f.tasks[1]);
    d_metrics_task_ended(&f.d, &f.tasks[0]); /* queued: not an end */
    char *s = render(&f.d);
    assert_true(value_of(s, "carma_placements_total") == 5);
    assert_true(value_of(s, "carma_collocated_placements_total") == 2);
    assert_true(value_of(s, "carma_oom_crashes_total") == 2);
    assert_true(value_of(s, "carma_oom_recoveries_total") == 1);
    assert_true(value_of(s, "carma_tasks_ended_total{state=\"done\"}") == 1);
    assert_true(value_of(s, "carma_tasks_ended_total{state=\"timeout\"}") == 1);
    assert_true(value_of(s, "carma_tasks_ended_total{state=\"failed\"}") == 0);
    assert_true(value_of(s, "carma_task_wait_seconds_bucket{le=\"1\"}") == 3);
    assert_true(value_of(s, "carma_task_wait_seconds_bucket{le=\"60\"}") == 3);
    assert_true(value_of(s, "carma_task_wait_seconds_bucket{le=\"300\"}") == 4);
    assert_true(value_of(s, "carma_task_wait_seconds_bucket{le=\"86400\"}") == 4);
    assert_true(value_of(s, "carma_task_wait_seconds_bucket{le=\"+Inf\"}") == 5);
    assert_true(value_of(s, "carma_task_wait_seconds_count") == 5);
    assert_true(value_of(s, "carma_task_wait_seconds_sum") == 0.5 + 1 + 100 + 1e6);
    free(s);
}

/* ---- metrics_listen ---- */

static void listen_addresses_parse_or_say_why(void **state)
{
    (void)state;
    hostport hp;
    carma_err err;
    assert_int_equal(hostport_parse("127.0.0.1:9400", &hp, &err), 0);
    assert_string_equal(hp.host, "127.0.0.1");
    assert_int_equal(hp.port, 9400);
    assert_false(hp.ipv6);
    assert_int_equal(hostport_parse("[::1]:0", &hp, &err), 0);
    assert_string_equal(hp.host, "::1");
    assert_true(hp.ipv6);
    assert_int_equal(hp.port, 0);
    assert_int_equal(hostport_parse(":65535", &hp, &err), 0);
    assert_string_equal(hp.host, "");
    assert_int_equal(hostport_parse("localhost:1", &hp, &err), 0);
    assert_string_equal(hp.host, "127.0.0.1");
    const char *bad[] = {"9400", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", ":9x",
                         "::1:9400", "[::1:9400", "[]:9400", "example.com:80", "1.2.3:80",
                         "[127.0.0.1]:80", ": 80"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(hostport_parse(bad[i], &hp, &err), -1);
    /* the address in brackets with no port: the port is named as missing, not the brackets */
    assert_int_equal(hostport_parse("[::1]", &hp, &err), -1);
    assert_non_null(strstr(err.msg, "no port"));
    /* the config check names the key, so the daemon's start fails naming it */
    carma_config cfg;
    config_defaults(&cfg);
    assert_int_equal(config_validate(&cfg, &err), 0);
    assert_int_equal(config_set(&cfg, "metrics_listen", "nonsense", &err), 0);
    assert_int_equal(config_validate(&cfg, &err), -1);
    assert_non_null(strstr(err.msg, "metrics_listen"));
    assert_non_null(strstr(err.msg, "nonsense"));
}

/* ---- the HTTP parser and router ---- */

static http_parse_rc parse(const char *s, http_request *r)
{
    return http_parse(s, strlen(s), r);
}

static void requests_parse_and_route(void **state)
{
    (void)state;
    http_request r;
    http_page page;
    assert_int_equal(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &r), HTTP_REQUEST);
    assert_string_equal(r.method, "GET");
    assert_string_equal(r.path, "/metrics");
    assert_int_equal(http_route(&r, &page), 200);
    assert_int_equal(page, HTTP_PAGE_METRICS);
    assert_int_equal(parse("HEAD /metrics?x=1 HTTP/1.0\n\n", &r), HTTP_REQUEST);
    assert_string_equal(r.path, "/metrics");
    assert_int_equal(http_route(&r, &page), 200);
    assert_int_equal(parse("GET / HTTP/1.1\r\nHost: x\r\n\r\n", &r), HTTP_REQUEST);
    assert_int_equal(http_route(&r, &page), 200);
    assert_int_equal(page, HTTP_PAGE_INDEX);
    assert_int_equal(parse("POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &r), HTTP_REQUEST);
    assert_int_equal(http_route(&r, &page), 405);
    assert_int_equal(page, HTTP_PAGE_NONE);
    assert_int_equal(parse("DELETE /nope HTTP/1.1\r\nHost: x\r\n\r\n", &r), HTTP_REQUEST);
    assert_int_equal(http_route(&r, &page), 404);
    assert_int_equal(parse("GET /metricsx HTTP/1.1\r\nHost: x\r\n\r\n", &r), HTTP_REQUEST);
    assert_int_equal(http_route(&r, &page), 404);
    /* a method HTTP does not define, on any path, is not implemented: methods are
     * case-sensitive, so `get` is one */
    const char *unknown[] = {"get /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
                             "FOO / HTTP/1.1\r\nHost: x\r\n\r\n",
                             "Get /nope HTTP/1.1\r\nHost: x\r\n\r\n",
                             "VERYLONGMETHODNAME / HTTP/1.1\r\nHost: x\r\n\r\n"};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        assert_int_equal(parse(unknown[i], &r), HTTP_REQUEST);
        assert_int_equal(http_route(&r, &page), 501);
        assert_int_equal(page, HTTP_PAGE_NONE);
    }
    /* Host (RFC 9112 3.2): an HTTP/1.1 request needs exactly one (any case, no space before
     * its colon); HTTP/1.0 none, and at most one */
    const char *hosts[] = {"GET / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\nX-Host: a\r\n\r\n",
                           "GET / HTTP/1.1\r\nHost : a\r\n\r\n",
                           "GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n",
                           "GET / HTTP/1.0\r\nHost: a\r\nHOST: b\r\n\r\n"};
    for (size_t i = 0; i < sizeof hosts / sizeof hosts[0]; i++)
        assert_int_equal(parse(hosts[i], &r), HTTP_BAD);
    assert_int_equal(parse("GET / HTTP/1.1\nX: y\nhOsT:a\n\n", &r), HTTP_REQUEST);
    assert_int_equal(parse("GET / HTTP/1.0\r\n\r\n", &r), HTTP_REQUEST);
    /* partial: the request line, or the headers, not yet whole */
    assert_int_equal(parse("GET /metr", &r), HTTP_INCOMPLETE);
    assert_int_equal(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n", &r), HTTP_INCOMPLETE);
    assert_int_equal(parse("", &r), HTTP_INCOMPLETE);
    /* not a request: judged as soon as the first line is whole */
    const char *bad[] = {"garbage\r\n", "G(T /metrics HTTP/1.1\r\n", "GET metrics HTTP/1.1\r\n",
                         "GET /metrics HTTP/2\r\n", "GET /metrics\r\n", " / HTTP/1.1\r\n",
                         "GET  /metrics HTTP/1.1\r\n", "GET /a\x01 HTTP/1.1\r\n",
                         "GET /metrics HTTP/1.1 x\r\n", "G\x01T / HTTP/1.1\r\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(parse(bad[i], &r), HTTP_BAD);
    /* oversized: a path longer than kept, or headers that never end within HTTP_REQ_MAX */
    char big[HTTP_REQ_MAX + 1];
    memset(big, 'a', sizeof big);
    memcpy(big, "GET /", 5);
    memcpy(big + 300, " HTTP/1.1\r\n\r\n", 13);
    assert_int_equal(http_parse(big, 313, &r), HTTP_BAD);
    memset(big, 'a', sizeof big);
    memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
    assert_int_equal(http_parse(big, HTTP_REQ_MAX - 1, &r), HTTP_INCOMPLETE);
    assert_int_equal(http_parse(big, HTTP_REQ_MAX, &r), HTTP_BAD);
    memset(big, 'G', sizeof big); /* no line at all */
    assert_int_equal(http_parse(big, HTTP_REQ_MAX, &r), HTTP_BAD);
}

/* ---- the server on a real socket ---- */

static char *fixed_body(void *ctx, size_t *len)
{
    (void)ctx;
    *len = 6;
    char *s = malloc(7);
    if (s)
        memcpy(s, "hello\n", 7);
    return s;
}

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    return fd;
}

/* One turn of the server's loop at time `now`. */
static void turn(http_server *s, double now)
{
    struct pollfd fds[1 + HTTP_MAX_CONNS];
    int n = http_pollfds(s, fds, now);
    poll(fds, (nfds_t)n, 50);
    http_serve(s, fds, n, now, fixed_body, NULL);
}

/* Sends req on a new connection and serves until the reply is whole; the reply. */
static char *exchange(http_server *s, const char *req, size_t len, char *out, size_t cap)
{
    int fd = connect_to(http_bound_port(s));
    size_t got = 0;
    assert_int_equal(send(fd, req, len, MSG_NOSIGNAL), (ssize_t)len);
    for (int i = 0; i < 100; i++) {
        turn(s, clock_mono_s());
        ssize_t r = recv(fd, out + got, cap - 1 - got, MSG_DONTWAIT);
        if (r == 0)
            break;
        if (r > 0)
            got += (size_t)r;
    }
    out[got] = '\0';
    close(fd);
    return out;
}

static void the_server_answers_bounds_and_drops(void **state)
{
    (void)state;
    hostport hp;
    carma_err err;
    http_server *s;
    assert_int_equal(hostport_parse("127.0.0.1:0", &hp, &err), 0);
    assert_int_equal(http_open(&s, &hp, &err), 0);
    assert_true(http_bound_port(s) > 0);
    char want[64];
    snprintf(want, sizeof want, "127.0.0.1:%d", http_bound_port(s));
    assert_string_equal(http_bound(s), want);
    /* the same port again is an error naming why */
    hostport again = hp;
    again.port = http_bound_port(s);
    http_server *s2 = NULL;
    assert_int_equal(http_open(&s2, &again, &err), -1);
    assert_non_null(strstr(err.msg, "in use"));

    char out[4096];
    const char *get = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    exchange(s, get, strlen(get), out, sizeof out);
    assert_non_null(strstr(out, "HTTP/1.1 200 OK\r\n"));
    assert_non_null(strstr(out, "Content-Length: 6\r\n"));
    assert_non_null(strstr(out, "Connection: close\r\n"));
    assert_non_null(strstr(out, "\r\n\r\nhello\n"));
    const char *post = "POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    assert_non_null(strstr(exchange(s, post, strlen(post), out, sizeof out),
                           "HTTP/1.1 405 Method Not Allowed\r\n"));
    assert_non_null(strstr(out, "Allow: GET, HEAD\r\n"));
    const char *lower = "get /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    assert_non_null(strstr(exchange(s, lower, strlen(lower), out, sizeof out),
                           "HTTP/1.1 501 Not Implemented\r\n"));
    assert_null(strstr(out, "Allow:"));
    const char *nf = "GET /x HTTP/1.1\r\nHost: x\r\n\r\n";
    assert_non_null(strstr(exchange(s, nf, strlen(nf), out, sizeof out), "HTTP/1.1 404 "));
    const char *head = "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    exchange(s, head, strlen(head), out, sizeof out);
    assert_non_null(strstr(out, "HTTP/1.1 200 OK\r\n"));
    assert_null(strstr(out, "hello")); /* HEAD: no body */
    static char big[3 * HTTP_REQ_MAX];
    memset(big, 'a', sizeof big);
    memcpy(big, "GET /metrics HTTP/1.1\r\nX: ", 26);
    assert_non_null(strstr(exchange(s, big, sizeof big, out, sizeof out), "HTTP/1.1 400 "));
    for (int i = 0; i < 20 && http_nconns(s) > 0; i++)
        turn(s, clock_mono_s() + HTTP_LINGER_S + 0.1);
    assert_int_equal(http_nconns(s), 0);

    /* silent peers: never more than the cap, and a newcomer pushes out the oldest */
    int fds[HTTP_MAX_CONNS + 4];
    for (int i = 0; i < HTTP_MAX_CONNS + 4; i++) {
        fds[i] = connect_to(http_bound_port(s));
        turn(s, clock_mono_s());
    }
    for (int i = 0; i < 10; i++)
        turn(s, clock_mono_s());
    assert_int_equal(http_nconns(s), HTTP_MAX_CONNS);
    exchange(s, get, strlen(get), out, sizeof out); /* served all the same */
    assert_non_null(strstr(out, "HTTP/1.1 200 OK\r\n"));
    char c;
    assert_int_equal(recv(fds[0], &c, 1, 0), 0); /* the oldest was closed */
    /* past the deadline, every one of them is dropped */
    turn(s, clock_mono_s() + HTTP_DEADLINE_S + 1);
    assert_int_equal(http_nconns(s), 0);
    for (int i = 0; i < HTTP_MAX_CONNS + 4; i++)
        close(fds[i]);
    /* a partial request that never ends: dropped at its deadline, unanswered */
    int fd = connect_to(http_bound_port(s));
    assert_int_equal(send(fd, "GET /metr", 9, 0), 9);
    turn(s, clock_mono_s());
    turn(s, clock_mono_s());
    assert_int_equal(http_nconns(s), 1);
    turn(s, clock_mono_s() + HTTP_DEADLINE_S + 1);
    assert_int_equal(http_nconns(s), 0);
    assert_int_equal(recv(fd, &c, 1, 0), 0);
    close(fd);

    /* out of descriptors: the listener rests instead of waking the loop again and again */
    fd = connect_to(http_bound_port(s)); /* waiting in the backlog */
    struct rlimit was, low;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
    low = was;
    low.rlim_cur = (rlim_t)fd + 1;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    int fill[64], nfill = 0; /* the holes below fd, if any */
    while (nfill < 64 && (fill[nfill] = dup(0)) >= 0)
        nfill++;
    double now = clock_mono_s();
    struct pollfd pf[1 + HTTP_MAX_CONNS];
    int n = http_pollfds(s, pf, now);
    assert_int_equal(poll(pf, (nfds_t)n, 1000), 1);
    http_serve(s, pf, n, now, fixed_body, NULL);
    assert_int_equal(http_nconns(s), 0);
    assert_int_equal(http_pollfds(s, pf, now), 1);
    assert_int_equal(pf[0].fd, -1); /* resting */
    assert_true(http_next_deadline(s) > now && http_next_deadline(s) < now + 1);
    while (nfill > 0)
        close(fill[--nfill]);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
    double later = http_next_deadline(s);
    n = http_pollfds(s, pf, later);
    assert_true(pf[0].fd >= 0); /* rested: accepting again */
    assert_int_equal(poll(pf, (nfds_t)n, 1000), 1);
    http_serve(s, pf, n, later, fixed_body, NULL);
    assert_int_equal(http_nconns(s), 1);
    close(fd);
    http_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(label_values_are_escaped),
        cmocka_unit_test(samples_families_and_histograms),
        cmocka_unit_test(known_readings_and_counters_are_rendered),
        cmocka_unit_test(a_failed_sample_leaves_every_reading_out),
        cmocka_unit_test(hooks_count_placements_crashes_recoveries_and_ends),
        cmocka_unit_test(listen_addresses_parse_or_say_why),
        cmocka_unit_test(requests_parse_and_route),
        cmocka_unit_test(the_server_answers_bounds_and_drops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
