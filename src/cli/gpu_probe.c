/* gpu_probe.c — `carma gpu-probe`: read this machine's GPUs directly through a GPU backend (no
 * daemon) and print them. GPM metrics need two samples at least 100 ms apart, so by default it
 * samples twice. A stand-in until `carma gpus` (the daemon's view) takes a --gpu-backend too. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "gpu/nvml_backend.h"
#include "gpu/print.h"
#include "util/strutil.h"

static const char *const usage =
    "usage: carma gpu-probe [--gpu-backend nvml] [--library PATH] [--samples N]\n"
    "                       [--interval-ms MS] [--json]\n\n"
    "Reads every GPU of this machine through the backend (default nvml: libnvidia-ml.so.1,\n"
    "or PATH, or $CARMA_NVML_LIBRARY) N times (default 2), MS milliseconds apart (default\n"
    "200, at least 100 for GPM), and prints the last reading: memory, utilization, SM\n"
    "activity/occupancy and DRAM activity with their source (gpm, dcgm or unknown), power,\n"
    "energy and GPU processes. Unknown metrics print as 'unknown' (JSON: null).\n";

static const gpu_backend_ops *probe_backend(const char *name)
{
    /* the backend table (backend.c) will replace this lookup */
    return !strcmp(name, gpu_backend_nvml.name) ? &gpu_backend_nvml : NULL;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts))
        ;
}

int cmd_gpu_probe(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"gpu-backend", required_argument, NULL, 'b'},
        {"library", required_argument, NULL, 'L'},
        {"samples", required_argument, NULL, 'n'},
        {"interval-ms", required_argument, NULL, 'i'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *backend_name = "nvml", *library = NULL;
    int64_t samples = 2, interval_ms = 200;
    bool json = false;
    int opt;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'b': backend_name = optarg; break;
        case 'L': library = optarg; break;
        case 'n':
            if (parse_i64(optarg, &samples) || samples < 1 || samples > 1000)
                return cli_usage_error("gpu-probe", "--samples wants 1..1000, not '%s'", optarg);
            break;
        case 'i':
            if (parse_i64(optarg, &interval_ms) || interval_ms < 0 || interval_ms > 60000)
                return cli_usage_error("gpu-probe", "--interval-ms wants 0..60000, not '%s'",
                                       optarg);
            break;
        case 'j': json = true; break;
        case 'h': fputs(usage, stdout); return 0;
        default: return cli_bad_option("gpu-probe", argv, optopt, opt);
        }
    }
    if (optind < argc)
        return cli_usage_error("gpu-probe", "unexpected argument '%s'", argv[optind]);
    const gpu_backend_ops *ops = probe_backend(backend_name);
    if (!ops)
        return cli_usage_error("gpu-probe", "unknown GPU backend '%s' (this command knows: nvml)",
                               backend_name);
    carma_err err;
    gpu_backend *b;
    if (ops->open(&b, library, &err))
        return cli_fail("gpu-probe", &err);
    int n = ops->count(b);
    gpu_reading *r = calloc(n > 0 ? (size_t)n : 1, sizeof *r);
    int rc = 0;
    if (!r) {
        carma_err_set(&err, "out of memory");
        rc = cli_fail("gpu-probe", &err);
        goto out;
    }
    for (int64_t s = 0; s < samples; s++) {
        if (s)
            sleep_ms((long)interval_ms);
        if (ops->sample(b, r, &err)) {
            rc = cli_fail("gpu-probe", &err);
            goto out;
        }
    }
    if (n == 0 && !json)
        printf("no GPUs\n");
    else if (gpu_print_readings(stdout, r, n, json))
        rc = 1;
    const char *note = nvml_backend_activity_note(b);
    if (*note)
        fprintf(json ? stderr : stdout, "note: %s\n", note);
out:
    free(r);
    ops->close(b);
    return rc;
}
