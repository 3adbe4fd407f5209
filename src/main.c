/* main.c — the `carma` binary: a git-style table of subcommands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "util/strutil.h"

/* {name, summary, flags, run or request}. The commands flagged CMD_TALKS_TO_DAEMON have no run:
 * their common options are read for them (cli/request.h), then their request_cmd runs. */
const carma_command carma_commands[] = {
    {"help", "show the commands, or one command's help", .run = cmd_help},
    {"config", "print the configuration in effect (defaults, file, --set)", .run = cmd_config},
    {"daemon", "run the GPU manager of this server (foreground)", .run = cmd_daemon},
    {"submit", "queue a task with the daemon", CMD_TALKS_TO_DAEMON, .request = &cmd_submit},
    {"queue", "list the daemon's queued and running tasks", CMD_TALKS_TO_DAEMON,
     .request = &cmd_queue},
    {"show", "show one task", CMD_TALKS_TO_DAEMON, .request = &cmd_show},
    {"history", "list ended tasks: wait, elapsed, GPU-hours, peak memory, exit",
     CMD_TALKS_TO_DAEMON, .request = &cmd_history},
    {"cancel", "cancel tasks", CMD_TALKS_TO_DAEMON, .request = &cmd_cancel},
    {"hold", "keep queued tasks from starting", CMD_TALKS_TO_DAEMON, .request = &cmd_hold},
    {"release", "let held tasks start", CMD_TALKS_TO_DAEMON, .request = &cmd_release},
    {"priority", "set a queued task's priority (its place in the queue)", CMD_TALKS_TO_DAEMON,
     .request = &cmd_priority},
    {"wait", "wait until tasks have ended (exit status: how they ended)", CMD_TALKS_TO_DAEMON,
     .request = &cmd_wait},
    {"run", "submit task files, wait for them all (a private daemon in a Slurm job)",
     CMD_TALKS_TO_DAEMON, .request = &cmd_run},
    {"logs", "print a task's output", CMD_TALKS_TO_DAEMON, .request = &cmd_logs},
    {"gpus", "show the GPUs as the daemon sees them, or read them directly",
     CMD_TALKS_TO_DAEMON, .request = &cmd_gpus},
    {"top", "a live view: the GPUs with their tasks, the queue with reasons",
     CMD_TALKS_TO_DAEMON, .request = &cmd_top},
    {"estimate", "estimate a task's peak GPU memory: trace its script (--run) or a summary",
     .run = cmd_estimate},
    {"simulate", "replay a job trace on a simulated server through the scheduling core",
     .run = cmd_simulate},
    {"trace", "job traces: `trace synth` writes a Philly-like synthetic trace", .run = cmd_trace},
    {"task", "check task files (.rad, .yaml) and show what carma reads from them",
     .run = cmd_task},
    {0},
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
    if (argc < 2) { /* git's habit: the usage on stderr, and a usage error */
        fprintf(stderr, "usage: carma [--version] [--help] COMMAND [ARGS]\n"
                        "See 'carma help' for the commands.\n");
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--version") || !strcmp(name, "version")) {
        printf("carma %s\n", CARMA_VERSION);
        return 0;
    }
    if (!strcmp(name, "--help") || !strcmp(name, "-h"))
        return cmd_help(1, argv);
    const carma_command *c = find_command(name);
    if (!c) {
        char *safe = str_escape_controls(name); /* what was typed is shown, not obeyed */
        fprintf(stderr, "carma: '%s' is not a carma command. See 'carma help'.\n",
                safe ? safe : "?");
        free(safe);
        return EXIT_USAGE;
    }
    return cli_run_command(c, argc - 1, argv + 1);
}
