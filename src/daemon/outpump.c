/* outpump.c — copying a task's output from its pipes to its log files, with the output limit
 * (outpump.h). Runs in the supervisor, which is single-threaded and waits in ppoll. */
#include "daemon/outpump.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/fsfree.h"

#define CHUNK 65536
#define CHECK_BYTES (1 << 20) /* free space looked at after this much output, */
#define CHECK_NS 1000000000LL /* or this long */

bool outpump_write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w == 0)
            errno = ENOSPC; /* nothing written, no error said: no room */
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

static void say(outpump *p, const char *line)
{
    outpump_write_all(p->file[1], line, strlen(line));
}

void outpump_open(outpump *p, int outfd, int errfd, int64_t limit, int w[2])
{
    *p = (outpump){.pipe_r = {-1, -1}, .file = {outfd, errfd}, .limit = limit > 0 ? limit : 0};
    int po[2] = {-1, -1}, pe[2];
    if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
        char line[192];
        snprintf(line, sizeof line,
                 "carma: no pipe for the task's output (%s): it writes these logs itself, with "
                 "no output limit and no free-space floor\n", strerror(errno));
        say(p, line);
        if (po[0] >= 0) {
            close(po[0]);
            close(po[1]);
        }
        w[0] = outfd, w[1] = errfd;
        return;
    }
    p->pipe_r[0] = po[0], p->pipe_r[1] = pe[0];
    w[0] = po[1], w[1] = pe[1];
}

void outpump_set_floor(outpump *p, int64_t min_free)
{
    p->min_free = min_free > 0 ? min_free : 0;
    p->free_bytes = fs_free_bytes;
    p->since_check = CHECK_BYTES; /* the first output looks */
}

void outpump_parent(outpump *p, const int w[2])
{
    if (p->pipe_r[0] < 0)
        return; /* the task writes to the files themselves */
    close(w[0]);
    close(w[1]);
}

/* Whether n more bytes must be dropped for the floor: looks at the free space after every
 * CHECK_BYTES of output or CHECK_NS, and says when dropping starts and ends. Unknown free space
 * changes nothing. */
static bool short_of_space(outpump *p, size_t n)
{
    if (p->min_free == 0)
        return false;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long ns = (long long)(now.tv_sec - p->checked.tv_sec) * 1000000000LL +
                   (now.tv_nsec - p->checked.tv_nsec);
    p->since_check += (int64_t)n;
    if (p->since_check < CHECK_BYTES && ns < CHECK_NS)
        return p->starved;
    p->since_check = 0;
    p->checked = now;
    int64_t free = p->free_bytes(p->file[1]);
    if (free < 0)
        return p->starved;
    bool low = fs_under_floor(free - (int64_t)n, p->min_free, p->starved);
    char line[256];
    if (low && !p->starved) {
        snprintf(line, sizeof line,
                 "\ncarma: the filesystem of the task's logs has less than state_min_free_mib "
                 "(%lld MiB) free; the task's output is dropped until it has more\n",
                 (long long)((p->min_free + (1 << 20) - 1) >> 20));
        say(p, line);
        p->dropped = 0;
    } else if (!low && p->starved) {
        snprintf(line, sizeof line,
                 "carma: the filesystem of the task's logs has room again; %lld bytes of the "
                 "task's output were dropped\n", (long long)p->dropped);
        say(p, line);
    }
    p->starved = low;
    return low;
}

/* Copies n bytes read from stream k, as far as the limit and the floor let them. */
static void put(outpump *p, int k, const char *buf, size_t n)
{
    if (p->over)
        return;
    if (short_of_space(p, n)) {
        p->dropped += (int64_t)n;
        return;
    }
    if (p->limit > 0 && (int64_t)n > p->limit - p->written) {
        size_t fits = (size_t)(p->limit - p->written);
        outpump_write_all(p->file[k], buf, fits);
        p->written += (int64_t)fits;
        p->over = true;
        char line[160];
        snprintf(line, sizeof line,
                 "\ncarma: the task's output passed max_output_mib (%lld MiB); the rest is "
                 "dropped and the task cancelled (unless it has ended)\n",
                 (long long)((p->limit + (1 << 20) - 1) >> 20));
        say(p, line);
        return;
    }
    outpump_write_all(p->file[k], buf, n);
    p->written += (int64_t)n;
}

/* One read from stream k; at its end (or an error) it is closed. */
static void pump_one(outpump *p, int k)
{
    char buf[CHUNK];
    ssize_t r = read(p->pipe_r[k], buf, sizeof buf);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (r <= 0) {
        close(p->pipe_r[k]);
        p->pipe_r[k] = -1;
        return;
    }
    put(p, k, buf, (size_t)r);
}

void outpump_wait(outpump *p, const struct timespec *timeout, const sigset_t *unblocked)
{
    struct pollfd pf[2];
    int which[2], n = 0;
    for (int k = 0; k < 2; k++)
        if (p->pipe_r[k] >= 0) {
            pf[n] = (struct pollfd){p->pipe_r[k], POLLIN, 0};
            which[n++] = k;
        }
    if (ppoll(pf, (nfds_t)n, timeout, unblocked) <= 0)
        return; /* a signal, or the time is up */
    for (int i = 0; i < n; i++)
        if (pf[i].revents & (POLLIN | POLLHUP | POLLERR))
            pump_one(p, which[i]);
    /* ppoll returns ready pipes without delivering the signals that came meanwhile: a task
     * that keeps its pipes full would keep a cancel, or the end of its grace, out for good.
     * They are let in here (their handlers only set flags). */
    sigset_t blocked;
    sigprocmask(SIG_SETMASK, unblocked, &blocked);
    sigprocmask(SIG_SETMASK, &blocked, NULL);
}

void outpump_close(outpump *p)
{
    for (int k = 0; k < 2; k++) {
        if (p->pipe_r[k] < 0)
            continue;
        int fl = fcntl(p->pipe_r[k], F_GETFL);
        if (fl >= 0)
            fcntl(p->pipe_r[k], F_SETFL, fl | O_NONBLOCK);
        /* what is there now, and a little more: 64 reads at most */
        for (int i = 0; i < 64 && p->pipe_r[k] >= 0; i++) {
            char buf[CHUNK];
            ssize_t r = read(p->pipe_r[k], buf, sizeof buf);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            put(p, k, buf, (size_t)r);
        }
        if (p->pipe_r[k] >= 0)
            close(p->pipe_r[k]);
        p->pipe_r[k] = -1;
    }
    if (p->starved) { /* no more output to say that the dropping ended */
        char line[192];
        snprintf(line, sizeof line,
                 "carma: the task's output ended while the filesystem of its logs was short of "
                 "space; %lld bytes of it were dropped\n", (long long)p->dropped);
        say(p, line);
        p->starved = false;
    }
}
