/* sigreset.h — a child's signals made ordinary before it execs another program: what its
 * parent blocked or ignored (the daemon, srun) is not the program's to inherit. */
#ifndef CARMA_UTIL_SIGRESET_H
#define CARMA_UTIL_SIGRESET_H

/* Sets every handler back to its default, then unblocks every signal: one pending then takes
 * its default action. */
void sig_reset_all(void);

#endif
