/* test_daemon_protocol.c — protocol garbage against a live daemon (run in a child process on
 * a temporary socket): invalid JSON, non-object requests, unknown verbs, bad arguments and
 * oversized lines get error replies, a client that connects and hangs (or sends half a line)
 * blocks nobody, an invalid submission stores nothing, and a submission repeated with its
 * idempotency key makes no second task. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "daemon/connect.h"
#include "daemon/daemon.h"
#include "daemon/proto.h"
#include "daemon_fixture.h"

static char root[64], sock[128], state_dir[128];
static pid_t daemon_pid;

static int start_daemon(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/carma-proto-XXXXXX");
    assert_non_null(mkdtemp(root));
    snprintf(sock, sizeof sock, "%s/s", root);
    snprintf(state_dir, sizeof state_dir, "%s/state", root);
    daemon_pid = fork_test_daemon(sock, state_dir, 0.1, NULL);
    return daemon_pid > 0 ? 0 : -1;
}

static int stop_daemon(void **state)
{
    (void)state;
    int status = 0;
    kill(daemon_pid, SIGTERM);
    waitpid(daemon_pid, &status, 0);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd))
        return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int raw_connect(void)
{
    carma_err err;
    int fd = daemon_connect(sock, &err);
    assert_true(fd >= 0);
    struct timeval tv = {5, 0}; /* a broken daemon fails the test instead of hanging it */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

static void send_raw(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t w = send(fd, data, len, MSG_NOSIGNAL);
        if (w <= 0)
            return; /* the daemon may close on us (oversized line) */
        data += w;
        len -= (size_t)w;
    }
}

/* Reads one reply line; NULL on EOF. */
static json_t *read_reply(int fd)
{
    static char buf[1 << 16];
    size_t n = 0;
    while (n < sizeof buf - 1) {
        ssize_t r = recv(fd, buf + n, 1, 0);
        if (r <= 0)
            return NULL;
        if (buf[n++] == '\n')
            break;
    }
    json_error_t jerr;
    json_t *j = json_loadb(buf, n, 0, &jerr);
    assert_non_null(j);
    return j;
}

static void expect_error(int fd, const char *request, const char *needle)
{
    send_raw(fd, request, strlen(request));
    json_t *r = read_reply(fd);
    assert_non_null(r);
    assert_true(json_is_false(json_object_get(r, "ok")));
    const char *e = json_string_value(json_object_get(r, "error"));
    assert_non_null(e);
    if (!strstr(e, needle))
        fail_msg("error '%s' does not contain '%s'", e, needle);
    json_decref(r);
}

static void ping(void)
{
    carma_err err;
    int fd = daemon_connect(sock, &err);
    assert_true(fd >= 0);
    json_t *r = daemon_call(fd, json_pack("{ss}", "verb", "ping"), &err);
    assert_non_null(r);
    assert_int_equal(json_integer_value(json_object_get(r, "uid")), getuid());
    json_decref(r);
    close(fd);
}

static void garbage_gets_errors_and_the_connection_lives(void **state)
{
    (void)state;
    int fd = raw_connect();
    expect_error(fd, "this is not json\n", "invalid JSON");
    expect_error(fd, "{\"verb\": \n", "invalid JSON");
    expect_error(fd, "[1,2,3]\n", "JSON object with a \"verb\"");
    expect_error(fd, "{\"verb\": 7}\n", "JSON object with a \"verb\"");
    expect_error(fd, "{\"verb\":\"explode\"}\n", "unknown verb 'explode'");
    expect_error(fd, "{\"verb\":\"show\"}\n", "'id' must be a positive integer");
    expect_error(fd, "{\"verb\":\"show\",\"id\":999}\n", "no task 999");
    expect_error(fd, "{\"verb\":\"cancel\",\"id\":-1}\n", "'id' must be a positive integer");
    expect_error(fd, "{\"verb\":\"logs\",\"id\":1,\"stream\":\"x\"}\n", "no task 1");
    expect_error(fd, "{\"verb\":\"a\",\"verb\":\"b\"}\n", "invalid JSON"); /* duplicate key */
    expect_error(fd, "\xff\xfe{}\n", "invalid JSON");
    expect_error(fd, "{\"verb\":\"submit\",\"task\":{\"command\":\"true\",\"cwd\":\"rel\"}}\n",
                 "task.cwd: expected an absolute path");
    expect_error(fd, "{\"verb\":\"submit\",\"task\":{\"command\":\"true\",\"cwd\":\"/\","
                     "\"ngpus\":2}}\n", "asks for 2 GPUs but this server has 1");
    expect_error(fd, "{\"verb\":\"submit\"}\n", "task: expected an object");
    /* Blank lines are ignored; the connection still answers. */
    send_raw(fd, "\n\n", 2);
    send_raw(fd, "{\"verb\":\"queue\",\"all\":true}\n", 28);
    json_t *r = read_reply(fd);
    assert_non_null(r);
    assert_true(json_is_true(json_object_get(r, "ok")));
    /* None of the refused submissions was stored. */
    assert_int_equal(json_array_size(json_object_get(r, "tasks")), 0);
    json_decref(r);
    close(fd);
}

static void oversized_line_is_refused_and_closed(void **state)
{
    (void)state;
    int fd = raw_connect();
    size_t n = PROTO_MAX_LINE + 100000;
    char *big = malloc(n);
    memset(big, 'a', n);
    send_raw(fd, big, n);
    free(big);
    json_t *r = read_reply(fd);
    assert_non_null(r);
    assert_non_null(strstr(json_string_value(json_object_get(r, "error")), "longer than"));
    json_decref(r);
    assert_null(read_reply(fd)); /* then the daemon hangs up */
    close(fd);
    ping();
}

static void hanging_clients_block_nobody(void **state)
{
    (void)state;
    int silent = raw_connect();          /* connects and says nothing */
    int half = raw_connect();            /* sends half a request and stops */
    send_raw(half, "{\"verb\":\"pi", 11);
    int deaf = raw_connect();            /* asks a lot and never reads */
    for (int i = 0; i < 2000; i++)
        send_raw(deaf, "{\"verb\":\"gpus\"}\n", 16);
    for (int i = 0; i < 20; i++)
        ping();
    /* A valid submission from another client goes through meanwhile. */
    carma_err err;
    int fd = daemon_connect(sock, &err);
    json_t *task = json_pack("{ssss}", "command", "true", "cwd", "/");
    json_t *r = daemon_call(fd, json_pack("{ssso}", "verb", "submit", "task", task), &err);
    assert_non_null(r);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 1);
    json_decref(r);
    close(fd);
    /* The half request completes later and is answered. */
    send_raw(half, "ng\"}\n", 5);
    r = read_reply(half);
    assert_non_null(r);
    assert_true(json_is_true(json_object_get(r, "ok")));
    json_decref(r);
    close(silent);
    close(half);
    close(deaf);
    ping();
}

/* The id a submit request got (asserting it was accepted); *repeat from the reply. */
static json_int_t submitted_id(int fd, bool *repeat)
{
    json_t *r = read_reply(fd);
    assert_non_null(r);
    assert_true(json_is_true(json_object_get(r, "ok")));
    *repeat = json_is_true(json_object_get(r, "repeat"));
    json_int_t id = json_integer_value(json_object_get(r, "id"));
    json_decref(r);
    return id;
}

/* A client that lost the reply retries with the same key: one task, the same id, whether the
 * repeat comes in the same batch of requests or later on another connection. Old clients
 * (no key) still work; a malformed key is refused. */
static void a_repeated_submit_key_makes_one_task(void **state)
{
    (void)state;
    static const char with_key[] =
        "{\"verb\":\"submit\",\"key\":\"00112233445566778899aabbccddeeff\","
        "\"task\":{\"command\":\"sleep 30\",\"cwd\":\"/\"}}\n";
    int fd = raw_connect();
    char twice[2 * sizeof with_key];
    snprintf(twice, sizeof twice, "%s%s", with_key, with_key);
    send_raw(fd, twice, strlen(twice)); /* both in one read: one transaction */
    bool repeat;
    json_int_t id = submitted_id(fd, &repeat);
    assert_false(repeat);
    assert_int_equal(submitted_id(fd, &repeat), id);
    assert_true(repeat);
    close(fd);
    fd = raw_connect();
    send_raw(fd, with_key, strlen(with_key));
    assert_int_equal(submitted_id(fd, &repeat), id);
    assert_true(repeat);
    static const char no_key[] =
        "{\"verb\":\"submit\",\"task\":{\"command\":\"sleep 30\",\"cwd\":\"/\"}}\n";
    send_raw(fd, no_key, strlen(no_key));
    json_int_t id2 = submitted_id(fd, &repeat);
    assert_true(id2 > id);
    send_raw(fd, no_key, strlen(no_key)); /* without a key, a repeat is a new task */
    assert_int_equal(submitted_id(fd, &repeat), id2 + 1);
    static const char other_key[] =
        "{\"verb\":\"submit\",\"key\":\"ffeeddccbbaa99887766554433221100\","
        "\"task\":{\"command\":\"sleep 30\",\"cwd\":\"/\"}}\n";
    send_raw(fd, other_key, strlen(other_key));
    assert_int_equal(submitted_id(fd, &repeat), id2 + 2);
    assert_false(repeat);
    expect_error(fd, "{\"verb\":\"submit\",\"key\":\"not hex\",\"task\":{\"command\":"
                     "\"true\",\"cwd\":\"/\"}}\n", "'key' must be a string of 16 to 64 hex");
    expect_error(fd, "{\"verb\":\"submit\",\"key\":7,\"task\":{}}\n", "'key' must be");
    /* One task for the key: the daemon holds id..id2+2 and nothing else new. */
    send_raw(fd, "{\"verb\":\"queue\",\"all\":true}\n", 28);
    json_t *r = read_reply(fd);
    assert_non_null(r);
    size_t n = 0, i;
    json_t *t;
    json_array_foreach(json_object_get(r, "tasks"), i, t) n += json_integer_value(
        json_object_get(t, "id")) >= id;
    assert_int_equal(n, 4);
    json_decref(r);
    for (json_int_t k = id; k <= id2 + 2; k++) {
        char cancel[64];
        snprintf(cancel, sizeof cancel, "{\"verb\":\"cancel\",\"id\":%lld}\n", (long long)k);
        send_raw(fd, cancel, strlen(cancel));
        json_decref(read_reply(fd));
    }
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(garbage_gets_errors_and_the_connection_lives),
        cmocka_unit_test(oversized_line_is_refused_and_closed),
        cmocka_unit_test(hanging_clients_block_nobody),
        cmocka_unit_test(a_repeated_submit_key_makes_one_task),
    };
    return cmocka_run_group_tests(tests, start_daemon, stop_daemon);
}
