/* top.c — `carma top`: a live view of the daemon in the terminal, as nvtop or htop give: each
 * GPU with its memory, activity and the tasks it holds, then the queue with each task's
 * reason, redrawn every N seconds with plain ANSI sequences (home, clear) until q or Ctrl-C.
 * Into a pipe or a file, frames follow one another with no escape sequence, as `top -b`'s.
 * --once prints one frame and exits (for scripts and tests). The tables are `gpus`' and
 * `queue`'s own (views.h), which escape what users chose. */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/request.h"
#include "cli/views.h"
#include "util/clock.h"
#include "util/strutil.h"
#include "util/timefmt.h"

static const char usage[] =
    "usage: carma top [--interval SECONDS] [--once] [--socket PATH] [--json]\n\n"
    "A live view of the daemon: each GPU's memory in use and SM activity as bars; each GPU\n"
    "in detail (memory, activity, power, grace state, what the carma ledger has committed,\n"
    "and the tasks on it, one line each); then the queued and running tasks with the reason\n"
    "each queued one waits. Redrawn every SECONDS (2) until q or Ctrl-C; the queue is cut\n"
    "to the terminal's height. When stdout is not a terminal (a pipe, a file), frames\n"
    "follow one another whole, each after a blank line, with no escape sequence (as\n"
    "top -b), until Ctrl-C or SIGTERM, or the reader goes. q is read from the terminal\n"
    "while the view is on it, and from a piped input always (its end does not stop top).\n\n"
    "  --interval S    seconds between frames (0.2..3600)\n"
    "  --once          print one frame and exit (with --json: {\"gpus\", \"tasks\"});\n"
    "                  --json needs --once\n"
    REQUEST_USAGE;

static volatile sig_atomic_t stop;
/* While a request is out: a daemon that does not answer (stopped, hung) would hold it past a
 * Ctrl-C, whose flag nothing looks at until the reply, so the signal ends top there. */
static volatile sig_atomic_t requesting;
/* The terminal's settings to put back (raw_on: top changed them). */
static struct termios saved;
static volatile sig_atomic_t raw_on;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
    if (!requesting)
        return;
    if (raw_on)
        tcsetattr(STDIN_FILENO, TCSANOW, &saved); /* async-signal-safe, as _exit is */
    _exit(0); /* as a Ctrl-C between frames ends it */
}

/* request_send, a Ctrl-C while it waits ending top (on_signal); -1, sending nothing, after
 * one that came just before. */
static int ask(request_args *a, json_t *req, json_t **reply)
{
    requesting = 1;
    if (stop) {
        requesting = 0;
        json_decref(req);
        *reply = NULL;
        return -1;
    }
    int rc = request_send(a, req, reply);
    requesting = 0;
    return rc;
}

/* The terminal's height, 0 when stdout is not one. */
static int terminal_rows(void)
{
    struct winsize w;
    return isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 ? w.ws_row : 0;
}

/* A bar of `width` cells filled to fraction f ("?" throughout when unknown). */
static void bar(double f, int width)
{
    putchar('[');
    for (int i = 0; i < width; i++)
        putchar(!(f >= 0) ? '?' : i < (int)(f * width + 0.5) ? '#' : '.');
    putchar(']');
}

/* Each GPU's memory in use and SM activity at a glance, as nvtop draws them. */
static void print_bars(const json_t *gpus)
{
    size_t i;
    json_t *g;
    json_array_foreach(gpus, i, g) {
        const json_t *used = json_object_get(g, "mem_used_mib"),
                     *total = json_object_get(g, "mem_total_mib"),
                     *act = json_object_get(g, "smact");
        double m = json_is_integer(used) && json_integer_value(total) > 0
                       ? (double)json_integer_value(used) / (double)json_integer_value(total)
                       : -1;
        double a = json_is_number(act) ? json_number_value(act) : -1;
        printf("GPU %-3lld mem ", (long long)json_integer_value(json_object_get(g, "index")));
        bar(m, 20);
        printf(m >= 0 ? " %3.0f%%   SM " : "   ?   SM ", m * 100);
        bar(a, 20);
        printf(a >= 0 ? " %3.0f%%\n" : "   ?\n", a * 100);
    }
    putchar('\n');
}

/* How frames are shown: live (again and again) on a terminal (clear: at its top, the queue
 * cut to its height) or not; keys: q is read from the terminal, the header says so. */
typedef struct view {
    bool live, clear, keys;
    double interval;
} view;

/* One frame: the GPUs, then as much of the queue as fits. */
static int frame(request_args *a, const view *v)
{
    json_t *gpus, *queue, *tasks;
    int rc = ask(a, json_pack("{ss}", "verb", "gpus"), &gpus);
    if (rc)
        return rc;
    json_t *req = json_pack("{sssb}", "verb", "queue", "all", 0);
    int rows = terminal_rows(), used = 5;
    size_t i, fit = 0; /* the rows of the queue that fit; 0: all of it */
    json_t *g;
    json_array_foreach(json_object_get(gpus, "gpus"), i, g) used +=
        2 + (int)json_array_size(json_object_get(g, "holds"));
    if (v->clear && rows > used + 2) { /* one more than fits: to know whether the queue was cut */
        fit = (size_t)(rows - used - 2);
        json_object_set_new(req, "limit", json_integer((json_int_t)fit + 1));
    }
    /* request_send takes req (and frees it): fit remembers the limit */
    if ((rc = ask(a, req, &queue))) {
        json_decref(gpus);
        return rc;
    }
    tasks = json_object_get(queue, "tasks");
    if (a->opts.json) {
        json_t *both = json_pack("{sosO}", "gpus", gpus_json(gpus), "tasks", tasks);
        cli_print_json(both);
        json_decref(both);
    } else {
        char now[32];
        time_local_text((double)time(NULL), now, sizeof now);
        if (v->clear)
            fputs("\033[H\033[2J", stdout); /* home, clear */
        char *backend = str_escape_controls(json_string_value(json_object_get(gpus, "backend")));
        printf("carma top   %s   backend %s", now, backend ? backend : "?");
        free(backend);
        if (v->live)
            printf("   every %gs%s", v->interval, v->keys ? ", q quits" : "");
        printf("\n\n");
        print_bars(json_object_get(gpus, "gpus"));
        gpus_print_table(json_object_get(gpus, "gpus"));
        size_t queued = 0, n = json_array_size(tasks);
        bool cut = fit > 0 && n > fit;
        if (cut)
            n = fit;
        for (i = 0; i < n; i++) { /* a reply's missing state is not "queued" */
            const char *state = json_string_value(json_object_get(json_array_get(tasks, i),
                                                                  "state"));
            queued += state && !strcmp(state, "queued");
        }
        /* cut, the counts are of the tasks shown only (running ones are listed last) */
        printf("\n%zu queued, %zu running%s\n", queued, n - queued,
               cut ? " shown (cut to the terminal)" : "");
        queue_print_header();
        for (i = 0; i < n; i++)
            queue_print_task(json_array_get(tasks, i));
    }
    fflush(stdout);
    json_decref(gpus);
    json_decref(queue);
    return 0;
}

/* Waits up to `seconds` for q on the input when *keys (or a signal); true when it is time to
 * stop. An input that ended is not read again (*keys false): the wait goes on. Another key
 * on a terminal (tty) redraws at once; a pipe's other bytes are no keys, and are passed over:
 * each would otherwise draw a frame at once, and a piped file flood the daemon with them. */
static bool wait_key(double seconds, bool *keys, bool tty)
{
    struct pollfd p = {STDIN_FILENO, POLLIN, 0};
    double end = clock_mono_s() + seconds;
    for (;;) {
        double left = end - clock_mono_s();
        char c = 0;
        if (stop || left <= 0 || poll(&p, *keys ? 1 : 0, (int)(left * 1000)) <= 0)
            return stop;
        if (read(STDIN_FILENO, &c, 1) != 1)
            *keys = false;
        else if (c == 'q' || c == 'Q' || tty)
            return c == 'q' || c == 'Q' || stop;
    }
}

static const struct option longopts[] = {
    {"interval", required_argument, NULL, 'i'},
    {"once", no_argument, NULL, '1'},
    {NULL, 0, NULL, 0},
};

static int run(request_args *a)
{
    double interval = 2.0;
    bool once = false;
    int opt, rc;
    while ((opt = request_next_option(a)) > 0) {
        if (opt == 'i' && (parse_double(a->arg, &interval) || !(interval >= 0.2) ||
                           interval > 3600))
            return cli_usage_error("top", "--interval: expected 0.2..3600 seconds, got '%s'",
                                   a->arg);
        once |= opt == '1';
    }
    if (opt < 0)
        return a->status;
    if ((rc = request_no_operands(a)) != 0)
        return rc;
    if (a->opts.json && !once)
        return cli_usage_error("top", "--json needs --once (a live view is for a terminal)");
    view v = {.live = !once, .clear = !once && isatty(STDOUT_FILENO), .interval = interval};
    if (once)
        return frame(a, &v);
    struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: poll wakes up */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    struct termios raw;
    /* q from a terminal only while the view is on it (else a pager may be reading it too);
     * from a pipe or a file, always */
    bool tty_in = isatty(STDIN_FILENO), input;
    if ((v.keys = tty_in && v.clear && tcgetattr(STDIN_FILENO, &saved) == 0)) {
        /* q without Enter, and not echoed */
        raw = saved;
        raw.c_lflag &= (tcflag_t)~(ICANON | ECHO);
        raw.c_cc[VMIN] = 0;
        raw.c_cc[VTIME] = 0;
        raw_on = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
    }
    input = v.keys || !tty_in;
    while (!(rc = frame(a, &v)) && !wait_key(interval, &input, tty_in))
        if (!v.clear)
            putchar('\n'); /* between frames that follow one another */
    if (v.keys)
        tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    return rc < 0 ? 0 : rc; /* -1: stopped (ask), as between frames */
}

const request_cmd cmd_top = {.usage = usage, .longopts = longopts, .run = run};
