/* test_outpump.c — the supervisor's output pump (outpump.h) on its own: its wait lets signals
 * in while output keeps coming, and the state directory's free-space floor drops output while
 * the filesystem is short (saying when that starts and ends, or how much went when the output
 * ends first), holds until well above the floor, looks at the free space only after a MiB or a
 * second, and changes nothing when the free space is unknown. The output limit
 * and the pump inside a supervisor are test_supervisor.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/outpump.h"

static char root[64], logpath[128];

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/carma-pump-XXXXXX");
    assert_non_null(mkdtemp(root));
    snprintf(logpath, sizeof logpath, "%s/log", root);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(logpath);
    return rmdir(root);
}

/* The task's end: the pump drains and closes; then the file. */
static void end_pump(outpump *p, const int w[2], int file)
{
    outpump_parent(p, w);
    outpump_close(p);
    close(file);
}

static volatile sig_atomic_t got_usr1;
static void on_usr1(int sig)
{
    (void)sig;
    got_usr1 = 1;
}

/* The pump's wait lets in a signal that came while output was waiting: ppoll itself returns
 * the ready pipe and leaves the signal pending, so a task that keeps its pipes full would keep
 * a cancel out for good. */
static void the_pump_lets_signals_in_while_output_waits(void **state)
{
    (void)state;
    char path[200];
    snprintf(path, sizeof path, "%s/log", root);
    int file = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    assert_true(file >= 0);
    outpump p;
    int w[2];
    outpump_open(&p, file, file, 0, w);
    assert_true(p.pipe_r[0] >= 0);
    struct sigaction sa = {0}, old;
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, &old);
    sigset_t usr1, before;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, &before);
    got_usr1 = 0;
    assert_int_equal(write(w[0], "x", 1), 1);
    raise(SIGUSR1); /* pending: blocked outside the wait */
    outpump_wait(&p, NULL, &before);
    int seen = got_usr1;
    sigprocmask(SIG_SETMASK, &before, NULL);
    sigaction(SIGUSR1, &old, NULL);
    end_pump(&p, w, file);
    assert_true(seen);
}

static int64_t fake_free; /* bytes; -1: unknown */
static int free_calls;
static int64_t fake_free_bytes(int fd)
{
    (void)fd;
    free_calls++;
    return fake_free;
}

/* Writes text to the task's stdout end and lets the pump copy it. */
static void emit(outpump *p, const int w[2], const char *text)
{
    sigset_t none;
    sigemptyset(&none);
    assert_int_equal(write(w[0], text, strlen(text)), (ssize_t)strlen(text));
    outpump_wait(p, NULL, &none);
}

/* The pump looks again at its next output, as if a second had passed. */
static void look_again(outpump *p)
{
    p->checked = (struct timespec){0, 0};
}

/* A pump into the log file (both streams) with the floor given and the fake free space;
 * returns the file. */
static int floor_pump(outpump *p, int w[2], int64_t floor)
{
    int file = open(logpath, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    assert_true(file >= 0);
    outpump_open(p, file, file, 0, w);
    assert_true(p->pipe_r[0] >= 0);
    outpump_set_floor(p, floor);
    p->free_bytes = fake_free_bytes;
    free_calls = 0;
    return file;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void the_floor_drops_output_while_space_is_short(void **state)
{
    (void)state;
    outpump p;
    int w[2];
    int file = floor_pump(&p, w, 10 << 20);
    fake_free = 100 << 20;
    emit(&p, w, "a\n"); /* the first output looks */
    assert_int_equal(free_calls, 1);
    fake_free = 1 << 20;
    emit(&p, w, "early\n"); /* less than a MiB and a second since: not looked at */
    assert_int_equal(free_calls, 1);
    look_again(&p);
    emit(&p, w, "b\n"); /* short now: dropped */
    look_again(&p);
    fake_free = -1;
    emit(&p, w, "c\n"); /* unknown: still dropped */
    look_again(&p);
    fake_free = 100 << 20;
    emit(&p, w, "d\n"); /* room again */
    assert_int_equal(free_calls, 4);
    end_pump(&p, w, file);
    assert_string_equal(slurp(logpath),
                        "a\nearly\n"
                        "\ncarma: the filesystem of the task's logs has less than "
                        "state_min_free_mib (10 MiB) free; the task's output is dropped until "
                        "it has more\n"
                        "carma: the filesystem of the task's logs has room again; 4 bytes of the "
                        "task's output were dropped\n"
                        "d\n");
}

/* Under the floor, output stays dropped until the free space is a sixteenth of the floor above
 * it; a task whose output ends while it is dropped has the count said at the end. */
static void the_floor_holds_until_well_above_and_counts_at_the_end(void **state)
{
    (void)state;
    outpump p;
    int w[2];
    int file = floor_pump(&p, w, 16 << 20);
    fake_free = 15 << 20;
    emit(&p, w, "a\n"); /* under: dropped */
    look_again(&p);
    fake_free = (16 << 20) + (1 << 20) - 8; /* above the floor, not by a sixteenth */
    emit(&p, w, "b\n");
    assert_true(p.starved);
    end_pump(&p, w, file);
    assert_string_equal(slurp(logpath),
                        "\ncarma: the filesystem of the task's logs has less than "
                        "state_min_free_mib (16 MiB) free; the task's output is dropped until "
                        "it has more\n"
                        "carma: the task's output ended while the filesystem of its logs was "
                        "short of space; 4 bytes of it were dropped\n");
}

/* A MiB of output is looked at without waiting for the second. */
static void the_floor_looks_after_a_mib(void **state)
{
    (void)state;
    outpump p;
    int w[2];
    int file = floor_pump(&p, w, 10 << 20);
    fake_free = 100 << 20;
    emit(&p, w, "a\n");
    fake_free = 1 << 20;
    static char chunk[32769];
    memset(chunk, 'x', sizeof chunk - 1);
    for (int i = 0; i < 40; i++) /* 1.25 MiB */
        emit(&p, w, chunk);
    assert_int_equal(free_calls, 2);
    assert_true(p.starved);
    assert_true(p.dropped > 0 && p.dropped <= (1 << 20) / 4 + 32768);
    end_pump(&p, w, file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(the_pump_lets_signals_in_while_output_waits, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(the_floor_drops_output_while_space_is_short, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(the_floor_holds_until_well_above_and_counts_at_the_end,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(the_floor_looks_after_a_mib, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
