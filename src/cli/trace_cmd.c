/* trace_cmd.c — `carma trace synth`: write a Philly-like synthetic trace for scale runs. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "sim/trace_synth.h"
#include "util/datadir.h"
#include "util/strutil.h"

/* Under the data directory (util/datadir.h), so that $CARMA_DATA_DIR moves them too. */
#define DEFAULT_CATALOG "workloads.csv"
#define DEFAULT_ARRIVALS "philly/interarrival_sequences.csv"

static const char *const usage =
    "usage: carma trace synth --jobs N [--seed S] [--rate F] [--out FILE] [--catalog FILE]\n"
    "                         [--arrivals FILE]\n\n"
    "Writes a Philly-like trace (CSV `seq,submit_offset_s,task_file`): inter-arrival gaps\n"
    "resampled from Philly's recorded arrivals (default data/philly/interarrival_sequences.csv),\n"
    "1-GPU and 2-GPU jobs in Philly's proportion, tasks drawn from the workload catalog\n"
    "(default data/workloads.csv). --rate F makes arrivals F times as frequent (default 1, at\n"
    "most 1e9), to load a large simulated server; a job past 1e9 s (about 31 years, the latest\n"
    "a trace may hold) is refused. --jobs N is 1 to 100000000. The same seed (default 1) gives\n"
    "the same trace. Without --out the trace goes to standard output; with it, the file is\n"
    "written whole or not at all.\n";

static int synth(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"jobs", required_argument, NULL, 'n'},   {"seed", required_argument, NULL, 's'},
        {"out", required_argument, NULL, 'o'},    {"catalog", required_argument, NULL, 'k'},
        {"arrivals", required_argument, NULL, 'a'}, {"rate", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *out = NULL, *catalog = NULL, *arrivals = NULL;
    int64_t jobs = -1, seed = 1;
    double rate = 1;
    int opt;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'n':
            if (parse_i64(optarg, &jobs) || jobs < 1 || jobs > 100000000)
                return cli_usage_error("trace synth", "--jobs: expected 1..100000000, got '%s'",
                                       optarg);
            break;
        case 's':
            if (cli_int_arg("trace synth", "--seed", optarg, 0, INT64_MAX, &seed))
                return EXIT_USAGE;
            break;
        case 'r':
            if (parse_double(optarg, &rate) || !(rate > 0) || rate > 1e9)
                return cli_usage_error("trace synth",
                                       "--rate: expected a number > 0 and at most 1e9, got '%s'",
                                       optarg);
            break;
        case 'o': out = optarg; break;
        case 'k': catalog = optarg; break;
        case 'a': arrivals = optarg; break;
        case 'h': fputs(usage, stdout); return 0;
        default: return cli_bad_option("trace synth", argv, optopt, opt);
        }
    }
    if (optind < argc)
        return cli_usage_error("trace synth", "unexpected argument '%s'", argv[optind]);
    const char *const paths[][2] = {{"--out", out}, {"--catalog", catalog},
                                    {"--arrivals", arrivals}};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++)
        if (paths[i][1] && cli_path_arg("trace synth", paths[i][0], paths[i][1]))
            return EXIT_USAGE;
    if (jobs < 0)
        return cli_usage_error("trace synth", "--jobs N is required");
    carma_err err = {{0}};
    workload_catalog cat = {0};
    double *gaps = NULL;
    size_t ngaps = 0;
    trace t = {0};
    char catalog_buf[4096], arrivals_buf[4096];
    int rc = carma_data_default(&catalog, DEFAULT_CATALOG, catalog_buf, sizeof catalog_buf, &err) ||
             carma_data_default(&arrivals, DEFAULT_ARRIVALS, arrivals_buf, sizeof arrivals_buf,
                                &err) ||
             catalog_load(catalog, &cat, &err) || philly_gaps_load(arrivals, &gaps, &ngaps, &err);
    for (size_t i = 0; rc == 0 && i < ngaps; i++)
        gaps[i] /= rate;
    if (rc == 0)
        rc = trace_synth(&cat, gaps, ngaps, (size_t)jobs, (uint64_t)seed, &t, &err);
    bool too_long = rc == TRACE_SYNTH_TOO_LONG; /* --jobs and --rate are at fault */
    if (rc == 0)
        rc = out ? trace_write(out, &t, &err)
                 : trace_fprint(stdout, "standard output", &t, &err); /* the same text */
    if (rc && !err.msg[0])
        carma_err_set(&err, "cannot write the trace");
    trace_free(&t);
    free(gaps);
    catalog_free(&cat);
    if (too_long)
        return cli_usage_error("trace synth", "%s: lower --jobs or raise --rate", err.msg);
    return rc ? cli_fail("trace synth", &err) : 0;
}

int cmd_trace(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    if (!strcmp(argv[1], "synth"))
        return synth(argc - 1, argv + 1);
    return cli_usage_error("trace", "unknown subcommand '%s' (expected synth)", argv[1]);
}
