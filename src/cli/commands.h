/* commands.h — one entry point per subcommand (src/cli/<name>.c). */
#ifndef CARMA_CLI_COMMANDS_H
#define CARMA_CLI_COMMANDS_H

int cmd_help(int argc, char **argv);
int cmd_config(int argc, char **argv);
int cmd_daemon(int argc, char **argv);
int cmd_submit(int argc, char **argv);
int cmd_queue(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_gpus(int argc, char **argv);
int cmd_estimate(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_task(int argc, char **argv);

#endif
