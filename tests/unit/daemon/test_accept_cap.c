/* test_accept_cap.c — a turn of the socket server accepts at most D_MAX_ACCEPTS_PER_TURN
 * connections, refused ones counted, so that a user connecting without pause cannot keep the
 * loop accepting while the peers already connected wait; the rest are accepted on the turns
 * after. Drives d_serve_once on a hand-built daemon state and a real socket, the connections
 * made beforehand (they wait in the listen backlog): counts, no timing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "config/config.h"
#include "daemon/daemon_int.h"

/* More than two turns' worth, within the listen backlog (512) so that every connect succeeds
 * before the daemon accepts any. */
#define FLOOD (2 * D_MAX_ACCEPTS_PER_TURN + 5)

typedef struct fixture {
    char dir[64], sock[128];
    daemon_options opts;
    daemon_state d;
    int clients[FLOOD + 1];
    int nclients;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/carma-accept-XXXXXX");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    snprintf(f->sock, sizeof f->sock, "%s/carma.sock", f->dir);
    f->opts.socket_path = f->sock;
    f->d.opts = &f->opts;
    config_defaults(&f->d.cfg); /* the idle limit: zeroed, every peer would be dropped */
    f->d.listen_fd = f->d.state_fd = f->d.lock_fd = f->d.attempts_fd = -1;
    carma_err err;
    if (d_listen(&f->d, &err)) {
        fprintf(stderr, "d_listen: %s\n", err.msg);
        rmdir(f->dir);
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < f->nclients; i++)
        close(f->clients[i]);
    d_server_close(&f->d); /* removes the socket file */
    rmdir(f->dir);
    free(f);
    return 0;
}

/* A client connected to the daemon's socket (waiting in its backlog until accepted). */
static int connect_client(fixture *f)
{
    struct sockaddr_un sa;
    carma_err err;
    assert_int_equal(d_socket_addr(&sa, f->sock, &err), 0);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    f->clients[f->nclients++] = fd;
    return fd;
}

/* Waiting connections are taken D_MAX_ACCEPTS_PER_TURN a turn, and a peer connected before
 * them is answered on the first of those turns; the listener, still readable, ends each
 * following turn's wait (a long timeout here, which a listener left out of the poll would
 * sit through, accepting nothing). */
static void accepts_are_capped_per_turn(void **state)
{
    fixture *f = *state;
    int early = connect_client(f);
    assert_int_equal(d_serve_once(&f->d, 0), 0);
    assert_int_equal(f->d.npeers, 1);

    for (int i = 0; i < FLOOD; i++)
        connect_client(f);
    const char ping[] = "{\"verb\":\"ping\"}\n";
    assert_int_equal(send(early, ping, sizeof ping - 1, 0), (ssize_t)(sizeof ping - 1));
    assert_int_equal(d_serve_once(&f->d, 0), 0);
    assert_int_equal(f->d.npeers, 1 + D_MAX_ACCEPTS_PER_TURN);
    char reply[512];
    ssize_t n = recv(early, reply, sizeof reply - 1, MSG_DONTWAIT);
    assert_true(n > 0);
    reply[n] = '\0';
    assert_non_null(strstr(reply, "\"ok\":true"));

    assert_int_equal(d_serve_once(&f->d, 30000), 0);
    assert_int_equal(f->d.npeers, 1 + 2 * D_MAX_ACCEPTS_PER_TURN);
    assert_int_equal(d_serve_once(&f->d, 30000), 0);
    assert_int_equal(f->d.npeers, 1 + FLOOD);
}

/* A flood is mostly refused connections (past the user's or the table's limit): each refused
 * one counts as one taken, else refusing could still hold the loop. With room for 2 peers, one
 * turn lets 2 in and refuses D_MAX_ACCEPTS_PER_TURN - 2 (each told why and closed); the others
 * still wait, neither told nor closed. */
static void refused_connections_count_too(void **state)
{
    fixture *f = *state;
    f->d.max_peers = 2;
    for (int i = 0; i < FLOOD; i++)
        connect_client(f);
    assert_int_equal(d_serve_once(&f->d, 0), 0);
    assert_int_equal(f->d.npeers, 2);
    int refused = 0;
    for (int i = 0; i < f->nclients; i++) {
        char buf[512];
        ssize_t n = recv(f->clients[i], buf, sizeof buf - 1, MSG_DONTWAIT);
        if (n > 0) {
            buf[n] = '\0';
            assert_non_null(strstr(buf, "maximum of 2 connections"));
            refused++;
        }
    }
    assert_int_equal(refused, D_MAX_ACCEPTS_PER_TURN - 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(accepts_are_capped_per_turn, setup, teardown),
        cmocka_unit_test_setup_teardown(refused_connections_count_too, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
