/* commands.h — one entry point per subcommand (src/cli/<name>.c): a function, or, for the
 * commands that talk to the daemon, a request_cmd (cli/request.h). */
#ifndef CARMA_CLI_COMMANDS_H
#define CARMA_CLI_COMMANDS_H

struct request_cmd;

int cmd_help(int argc, char **argv);
int cmd_config(int argc, char **argv);
int cmd_daemon(int argc, char **argv);
extern const struct request_cmd cmd_submit, cmd_queue, cmd_show, cmd_cancel, cmd_logs, cmd_gpus,
    cmd_history, cmd_top;
extern const struct request_cmd cmd_hold, cmd_release, cmd_priority, cmd_wait, cmd_run;
int cmd_estimate(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_task(int argc, char **argv);

#endif
