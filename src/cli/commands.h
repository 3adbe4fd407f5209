/* commands.h — one entry point per subcommand (src/cli/<name>.c). */
#ifndef CARMA_CLI_COMMANDS_H
#define CARMA_CLI_COMMANDS_H

int cmd_help(int argc, char **argv);
int cmd_config(int argc, char **argv);
int cmd_task(int argc, char **argv);
int cmd_gpu_probe(int argc, char **argv);

#endif
