/* oomclass.h — classifies how a task's attempt ended from its exit status and the tail of its
 * stderr: done, out-of-memory (retried under the core's rules) or failed (final). */
#ifndef CARMA_DAEMON_OOMCLASS_H
#define CARMA_DAEMON_OOMCLASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched/sched.h"

typedef struct exit_status {
    bool exited;   /* true: exit_code is valid; false: killed by term_signal */
    int exit_code;
    int term_signal;
} exit_status;

/* The GPU out-of-memory marker found in text (NULL when none). The patterns are the messages
 * PyTorch, cuBLAS/cuDNN, the CUDA runtime, TensorFlow and JAX print. */
const char *oom_marker_in(const char *text, size_t len);

/* The least memory (MiB, on one GPU) an out-of-memory crash shows its attempt needed, read
 * from PyTorch's message in the stderr tail: what the process held when an allocation failed
 * plus that allocation ("Tried to allocate X. ... this process has U memory in use", PyTorch
 * 2.1 on; before, X + the R of "R reserved in total by PyTorch"; X alone when neither is
 * there). The largest over the messages in the text (one per rank); false when there is none.
 * A crash seconds into a run ends before the monitor samples its peak: this is what tells the
 * carma policy how much to raise its figure to. */
bool oom_demand_mib(const char *text, size_t len, uint64_t *mib);

/* A task a cancel (or its time limit) reached is TASK_CANCELLED however it ended: a training
 * script that catches SIGTERM saves a checkpoint and exits 0, and "done" would claim its work
 * finished and start its --afterok dependents (Slurm's scancel gives CANCELLED too). Else exit
 * 0 is TASK_DONE whatever was printed (the reference called any run with "OOM" in its log a
 * crash); a non-zero exit or a signal is TASK_OOM when the stderr tail carries an
 * out-of-memory marker, TASK_FAILED otherwise. */
task_outcome oom_classify(exit_status st, bool cancelled, const char *stderr_tail, size_t len);

const char *task_outcome_name(task_outcome o);

#endif
