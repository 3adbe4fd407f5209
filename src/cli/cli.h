/* cli.h — what every subcommand shares: the command table entry, error printing with the
 * right exit status (1 = the operation failed, 2 = bad usage), config loading, JSON output. */
#ifndef CARMA_CLI_CLI_H
#define CARMA_CLI_CLI_H

#include <jansson.h>
#include <stdint.h>

#include "config/config.h"
#include "util/err.h"

#define EXIT_USAGE 2

typedef int (*cmd_fn)(int argc, char **argv);

/* carma_command.flags */
enum {
    /* The command talks to the daemon: it takes --socket, --json, --config, --set and --help,
     * read for it by cli/request.h; its `request` says the rest (it has no `run`). */
    CMD_TALKS_TO_DAEMON = 1u << 0,
};

struct request_cmd;

typedef struct carma_command {
    const char *name;
    const char *summary;
    unsigned flags;                    /* CMD_* */
    cmd_fn run;                        /* gets the command line as typed (argv[0]: the name) */
    const struct request_cmd *request; /* with CMD_TALKS_TO_DAEMON, instead of run */
} carma_command;

/* The table lives in main.c; `carma help` walks it. */
extern const carma_command carma_commands[];

/* Runs a command of the table with its command line (argv[0] its name); returns the exit
 * status. */
int cli_run_command(const carma_command *c, int argc, char **argv);

/* Prints "carma CMD: message" to stderr, its control characters escaped
 * (str_escape_controls); returns 1. */
int cli_fail(const char *cmd, const carma_err *err);
/* Prints "carma CMD: warning: message" to stderr, escaped as cli_fail's (cmd NULL: "carma:
 * warning: ..."): what goes on after it may quote what users and files named. */
void cli_warn(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "carma CMD: message" and a pointer to --help; returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* For an option that names a file, directory or socket (opt: "--socket"): an empty path, a
 * variable left unset in a script, would be taken as no option or as the current directory,
 * so it is a usage error, "OPT: empty path". Returns 0, else EXIT_USAGE. */
int cli_path_arg(const char *cmd, const char *opt, const char *path);
/* An integer option's value (opt: "--seed") in min..max, into *out. A usage error otherwise:
 * "OPT needs an integer, got 'V'", "OPT must be at least MIN, got 'V'", or, for a whole number
 * past max (or past int64's range, however long), "OPT: 'V' is out of range (at most MAX)",
 * never that it is no integer; a min of INT_MIN or less (a type's bound, the option's own
 * checked later) is said as "out of range (at least MIN)". Returns 0, else EXIT_USAGE. */
int cli_int_arg(const char *cmd, const char *opt, const char *v, int64_t min, int64_t max,
                int64_t *out);
/* For getopt_long's '?' and ':' results (opterr = 0): names the unknown or incomplete option
 * (argv as getopt_long had it, ending in NULL). */
int cli_bad_option(const char *cmd, char **argv, int bad_opt, int result);

/* The config in effect: compiled-in defaults, then the file (--config, else $CARMA_CONFIG if
 * set, else the system config, /etc/carma/carma.conf, if it exists: util/datadir.h), then each
 * --set KEY=VALUE in order. An empty $CARMA_CONFIG reads no file (an empty --config is
 * refused: cli_path_arg). */
typedef struct cli_config_args {
    const char *path;
    const char *sets[64];
    int nsets;
    bool trusted; /* the daemon: the file must be one only its user or root could write
                   * (safefs_trusted_file), and so must the on_finish program it names */
} cli_config_args;
int cli_add_set(const char *cmd, cli_config_args *a, const char *pair);
/* 0; -1 with err when the file cannot be read or the config is invalid; CLI_CONFIG_BAD_SET
 * with err when a --set is refused (unknown key, bad value, not KEY=VALUE, or a check across
 * keys that the file alone passed): the command line is wrong, not the file, and
 * cli_config_fail says so with EXIT_USAGE. */
#define CLI_CONFIG_BAD_SET (-2)
int cli_load_config(carma_config *cfg, const cli_config_args *a, carma_err *err);
/* Prints cli_load_config's error (rc its result): a usage error (EXIT_USAGE) for a bad --set,
 * else a failure (1). */
int cli_config_fail(const char *cmd, int rc, const carma_err *err);

/* At the end of a command that printed a report: 0 when all of stdout was written, else 1 with
 * "carma CMD: cannot write the output: why" (a full disk: the report is cut short, and a
 * script must not take it as whole). */
int cli_stdout_done(const char *cmd);

/* Prints j to stdout as indented JSON and a newline. */
void cli_print_json(const json_t *j);

#endif
