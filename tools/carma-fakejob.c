/* carma-fakejob — a test workload for the fake-GPU backend (`sim` to users, src/gpu/fakegpu.h).
 * It registers --mem on every GPU of its CUDA_VISIBLE_DEVICES in the backend's state file
 * ($CARMA_SIM_STATE), holds it for --seconds with the given activity, and exits 0. When a GPU
 * lacks the memory it fails exactly as PyTorch does: a traceback ending in
 * torch.OutOfMemoryError on stderr, exit status 1. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpu/fakegpu_state.h"
#include "util/strutil.h"

static const char *const usage =
    "usage: carma-fakejob --mem SIZE --seconds N [--smact F] [--smocc F] [--drama F]\n"
    "                     [--stdout TEXT] [--stderr TEXT] [--exit N]\n\n"
    "Holds SIZE of memory on each GPU of $CUDA_VISIBLE_DEVICES in the sim state file\n"
    "$CARMA_SIM_STATE for N seconds, then exits with status N (default 0). Prints a\n"
    "PyTorch out-of-memory error and exits 1 when the memory is not there. --stdout and\n"
    "--stderr print a line at start (to test logs and exit classification).\n";

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

static int bad(const char *msg, const char *arg)
{
    fprintf(stderr, "carma-fakejob: %s '%s'\n%s", msg, arg, usage);
    return 2;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"mem", required_argument, NULL, 'm'},     {"seconds", required_argument, NULL, 's'},
        {"smact", required_argument, NULL, 'a'},   {"smocc", required_argument, NULL, 'o'},
        {"drama", required_argument, NULL, 'd'},   {"stdout", required_argument, NULL, 'O'},
        {"stderr", required_argument, NULL, 'E'},  {"exit", required_argument, NULL, 'x'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    uint64_t mib = 0;
    double seconds = -1, smact = 0.3, smocc = -1, drama = -1;
    const char *out_text = NULL, *err_text = NULL;
    int64_t exit_code = 0;
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'm':
            if (parse_size_mib(optarg, &mib))
                return bad("bad --mem", optarg);
            break;
        case 's':
            if (parse_double(optarg, &seconds) || seconds < 0)
                return bad("bad --seconds", optarg);
            break;
        case 'a':
        case 'o':
        case 'd': {
            double f;
            if (parse_double(optarg, &f) || f < 0 || f > 1)
                return bad("expected a fraction 0..1, got", optarg);
            *(opt == 'a' ? &smact : opt == 'o' ? &smocc : &drama) = f;
            break;
        }
        case 'O':
            out_text = optarg;
            break;
        case 'E':
            err_text = optarg;
            break;
        case 'x':
            if (parse_i64(optarg, &exit_code) || exit_code < 0 || exit_code > 255)
                return bad("bad --exit", optarg);
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            return bad("unknown or incomplete option", argv[optind - 1]);
        }
    }
    if (seconds < 0)
        return bad("missing --seconds", "");
    if (smocc < 0)
        smocc = smact * 0.5;
    if (drama < 0)
        drama = smact * 0.3;
    const char *state = getenv("CARMA_SIM_STATE");
    const char *devices = getenv("CUDA_VISIBLE_DEVICES");
    if (!state || !*state) {
        fprintf(stderr, "carma-fakejob: CARMA_SIM_STATE is not set (run under the sim backend)\n");
        return 2;
    }
    if (out_text) {
        puts(out_text);
        fflush(stdout);
    }
    if (err_text)
        fprintf(stderr, "%s\n", err_text);
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    carma_err err;
    int oom_gpu = 0;
    uint64_t total = 0, avail = 0;
    int rc = fakegpu_state_register(state, getpid(), devices ? devices : "", mib, smact,
                                    smocc, drama, &oom_gpu, &total, &avail, &err);
    if (rc < 0) {
        fprintf(stderr, "carma-fakejob: %s\n", err.msg);
        return 2;
    }
    if (rc == 1) {
        fprintf(stderr,
                "Traceback (most recent call last):\n"
                "  File \"train.py\", line 42, in <module>\n"
                "    model.to(device)\n"
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB. GPU %d "
                "has a total capacity of %.2f GiB of which %.2f GiB is free. Of the allocated "
                "memory 0 bytes is allocated by PyTorch, and 0 bytes is reserved by PyTorch but "
                "unallocated.\n",
                (double)mib / 1024.0, oom_gpu, (double)total / 1024.0, (double)avail / 1024.0);
        return 1;
    }
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += (time_t)seconds;
    end.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
    if (end.tv_nsec >= 1000000000L) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000L;
    }
    while (!stop_signal && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, NULL) == EINTR)
        ;
    fakegpu_state_unregister(state, getpid(), &err);
    if (stop_signal)
        return 128 + stop_signal;
    return (int)exit_code;
}
