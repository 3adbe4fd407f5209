/* help.c — `carma help [COMMAND]`. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"

int cmd_help(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--help") && strcmp(argv[1], "-h")) {
        for (const carma_command *c = carma_commands; c->name; c++) {
            if (!strcmp(c->name, argv[1])) {
                char *sub[] = {(char *)c->name, "--help", NULL};
                return cli_run_command(c, 2, sub);
            }
        }
        fprintf(stderr, "carma help: '%s' is not a carma command.\n", argv[1]);
        return EXIT_USAGE;
    }
    if (argc >= 2)
        printf("usage: carma help [COMMAND]\n\n");
    printf("usage: carma [--version] [--help] COMMAND [ARGS]\n\n"
           "carma is a collocation-aware GPU resource manager for deep-learning training.\n\n"
           "Commands:\n");
    for (const carma_command *c = carma_commands; c->name; c++)
        printf("  %-10s %s\n", c->name, c->summary);
    printf("\nSee 'carma COMMAND --help' for one command's options.\n");
    return 0;
}
