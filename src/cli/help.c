/* help.c — `carma help [COMMAND]`: the command list, and the files and environment every
 * command shares (the man page is made from this text: scripts/gen-man.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "util/strutil.h"

int cmd_help(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--help") && strcmp(argv[1], "-h")) {
        for (const carma_command *c = carma_commands; c->name; c++) {
            if (!strcmp(c->name, argv[1])) {
                char *sub[] = {(char *)c->name, "--help", NULL};
                return cli_run_command(c, 2, sub);
            }
        }
        char *safe = str_escape_controls(argv[1]);
        fprintf(stderr, "carma help: '%s' is not a carma command.\n", safe ? safe : "?");
        free(safe);
        return EXIT_USAGE;
    }
    if (argc >= 2)
        printf("usage: carma help [COMMAND]\n\n");
    printf("usage: carma [--version] [--help] COMMAND [ARGS]\n\n"
           "carma is a collocation-aware GPU resource manager for deep-learning training.\n\n"
           "Commands:\n");
    for (const carma_command *c = carma_commands; c->name; c++)
        printf("  %-10s %s\n", c->name, c->summary);
    printf("\nSee 'carma COMMAND --help' for one command's options.\n\n"
           "Files and environment:\n"
           "  " CARMA_SYSCONFDIR "/carma.conf\n"
           "      the system config, read when neither --config nor $CARMA_CONFIG names a file\n"
           "      (an empty $CARMA_CONFIG reads none); `carma config` prints what is in effect\n"
           "  $CARMA_SOCKET\n"
           "      the daemon's socket when no --socket is given (for `carma daemon` too);\n"
           "      else the config's `socket`,\n"
           "      else /run/carma/carma.sock (a root daemon's), then\n"
           "      $XDG_RUNTIME_DIR/carma.sock (when that directory is yours, with no access for\n"
           "      group or others, as /run/user/UID; else\n"
           "      /run/user/UID/carma.sock when that is so), then /tmp/carma-UID.sock\n"
           "  $CARMA_DATA_DIR\n"
           "      carma's data (catalog, traces, estimator files); else PREFIX/share/carma of\n"
           "      an installed carma (" CARMA_INSTALL_DATADIR "), or the source tree's data/\n");
    return 0;
}
