/* xmem.c — see xmem.h: the replay under the cuDNN workspace rule and the estimate of a trace
 * (context + reserved peak + margin). The fit is xmem_fit.c. */
#include "estimate/xmem.h"

#include <math.h>
#include <string.h>


#define MIB (1024.0 * 1024.0)

int xmem_replay_band(const mtrace_events *t, double ratio, double cap_mib, double band,
                     replay_result *r, carma_err *err)
{
    memset(r, 0, sizeof *r);
    /* without convolutions every k replays the same: once is enough */
    double lo = t->convs ? fmax(0, ratio - band) : ratio;
    for (double k = ratio; k >= lo - 1e-9; k -= XMEM_WS_STEP) {
        replay_rules rules = {.workspaces = true, .conv_ws_ratio = fmax(0, k),
                              .conv_ws_cap_mib = cap_mib};
        replay_result one;
        if (mtrace_replay(t, &rules, &one, err))
            return -1;
        if (one.peak_reserved > r->peak_reserved)
            *r = one;
    }
    return 0;
}

int xmem_estimate_trace(const mtrace_events *t, const xmem_coeffs *c, xmem_estimate *e,
                        carma_err *err)
{
    memset(e, 0, sizeof *e);
    replay_rules bare = {.workspaces = false};
    replay_result rb, rf;
    if (mtrace_replay(t, &bare, &rb, err) ||
        xmem_replay_band(t, c->conv_ws_ratio, c->conv_ws_cap_mib, XMEM_WS_BAND, &rf, err))
        return -1;
    e->convolutions = t->convs > 0;
    e->steps = t->steps;
    e->context_mib = e->convolutions ? c->context_conv_mib : c->context_plain_mib;
    e->reserved_mib = (double)rb.peak_reserved / MIB;
    e->workspaces_mib = ((double)rf.peak_reserved - (double)rb.peak_reserved) / MIB;
    e->margin_mib = (e->convolutions ? c->margin_conv : c->margin_plain) *
                    (double)rf.peak_reserved / MIB;
    e->allocated_mib = (double)rb.peak_allocated / MIB;
    e->total_mib = ceil(e->context_mib + (double)rf.peak_reserved / MIB + e->margin_mib);
    return 0;
}
