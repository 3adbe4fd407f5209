/* config_cmd.c — `carma config`: print the configuration in effect as a valid config file
 * (config/config.h: the option table writes it). */
#include <getopt.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/commands.h"

static const char *const usage =
    "usage: carma config [--list] [--config FILE] [--set KEY=VALUE]...\n\n"
    "Prints every option with its value in effect: the built-in defaults (CARMA's), then\n"
    "FILE (else $CARMA_CONFIG, else " CARMA_SYSCONFDIR "/carma.conf if it exists), then each\n"
    "--set. The output is itself a valid config file.\n\n"
    "  --list   also say, for each option, where it applies (sched: carma daemon and carma\n"
    "           simulate; daemon; sim: carma simulate), what it takes and its default\n";

int cmd_config(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'},
        {"set", required_argument, NULL, 's'},
        {"list", no_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    cli_config_args cargs = {0};
    bool list = false;
    int opt;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'c':
            if (cli_path_arg("config", "--config", optarg))
                return EXIT_USAGE;
            cargs.path = optarg;
            break;
        case 's':
            if (cli_add_set("config", &cargs, optarg))
                return EXIT_USAGE;
            break;
        case 'l':
            list = true;
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            return cli_bad_option("config", argv, optopt, opt);
        }
    }
    if (optind < argc)
        return cli_usage_error("config", "unexpected argument '%s'", argv[optind]);
    carma_config cfg;
    carma_err err;
    int rc = cli_load_config(&cfg, &cargs, &err);
    if (rc)
        return cli_config_fail("config", rc, &err);
    if (list)
        config_write_list(&cfg, stdout);
    else
        config_write(&cfg, stdout);
    return cli_stdout_done("config");
}
