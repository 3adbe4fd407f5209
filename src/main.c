/* main.c — the `carma` binary: a git-style table of subcommands. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"

const carma_command carma_commands[] = {
    {"help", cmd_help, "show the commands, or one command's help"},
    {"config", cmd_config, "print the configuration in effect (defaults, file, --set)"},
    {"daemon", cmd_daemon, "run the GPU manager of this server (foreground)"},
    {"submit", cmd_submit, "queue a task with the daemon"},
    {"queue", cmd_queue, "list the daemon's queued and running tasks"},
    {"show", cmd_show, "show one task"},
    {"cancel", cmd_cancel, "cancel a task"},
    {"logs", cmd_logs, "print a task's output"},
    {"gpus", cmd_gpus, "show the GPUs as the daemon sees them, or read them directly"},
    {"estimate", cmd_estimate, "estimate a training task's peak GPU memory from its model summary"},
    {"simulate", cmd_simulate, "replay a job trace on a simulated server through the scheduling core"},
    {"trace", cmd_trace, "job traces: `trace synth` writes a Philly-like synthetic trace"},
    {"task", cmd_task, "check task files (.rad, .yaml) and show what carma reads from them"},
    {NULL, NULL, NULL},
};

static const carma_command *find_command(const char *name)
{
    for (const carma_command *c = carma_commands; c->name; c++)
        if (!strcmp(c->name, name))
            return c;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return cmd_help(1, argv);
    const char *name = argv[1];
    if (!strcmp(name, "--version") || !strcmp(name, "version")) {
        printf("carma %s\n", CARMA_VERSION);
        return 0;
    }
    if (!strcmp(name, "--help") || !strcmp(name, "-h"))
        return cmd_help(1, argv);
    const carma_command *c = find_command(name);
    if (!c) {
        fprintf(stderr, "carma: '%s' is not a carma command. See 'carma help'.\n", name);
        return EXIT_USAGE;
    }
    return c->run(argc - 1, argv + 1);
}
