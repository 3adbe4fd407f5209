/* shellcmd.h — the line /bin/sh runs for a task. A lone simple command is run as
 * `exec COMMAND`, so that the task's program replaces the shell (dash does not do this itself):
 * then the program, not a shell that dies at once, is the supervisor's child, gets the
 * cancel's SIGTERM, and keeps its exit status and the parent-death signal. */
#ifndef CARMA_DAEMON_SHELLCMD_H
#define CARMA_DAEMON_SHELLCMD_H

#include <stdbool.h>

/* True when command is one simple command that `exec` can prefix without changing what it
 * means: no list, pipeline, compound command or substitution; it starts with a plain word
 * (no assignment, quote or expansion) that is neither a reserved word nor a shell builtin.
 * Anything else is false, and runs as it was written. */
bool shellcmd_can_exec(const char *command);

#endif
