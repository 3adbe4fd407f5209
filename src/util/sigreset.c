/* sigreset.c — see sigreset.h. */
#include "util/sigreset.h"

#include <signal.h>

void sig_reset_all(void)
{
    /* The handlers first: a signal that came while blocked (a cancel's SIGTERM to a task
     * between its fork and its exec) then takes its default action when unblocked, rather
     * than run the parent's handler, which would swallow it. */
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}
