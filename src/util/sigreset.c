/* sigreset.c — see sigreset.h. */
#include "util/sigreset.h"

#include <signal.h>

void sig_reset_all(void)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            signal(sig, SIG_DFL);
}
