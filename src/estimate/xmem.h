/* xmem.h — carma's xMem-style estimator: the peak GPU memory (MiB, as nvidia-smi shows it) of a
 * training job from a trace of its real training loop (carma_trace), replayed through the
 * caching-allocator model: context + reserved peak (tensors and workspaces) + margin. */
#ifndef CARMA_ESTIMATE_XMEM_H
#define CARMA_ESTIMATE_XMEM_H

#include <stdbool.h>
#include <stddef.h>

#include "estimate/trace_replay.h"
#include "util/err.h"

/* The cuDNN workspace rule: each convolution takes a transient workspace of k x its input's
 * bytes, capped at a fitted size (cuDNN's heuristics pass over algorithms whose workspace
 * would be too large), and the reserved peak is the largest replayed for k in
 * [ratio - XMEM_WS_BAND, ratio] in steps of XMEM_WS_STEP (k >= 0). Why a band: the real size
 * is not known that closely, and the reserve jumps with it (a workspace a little larger than
 * a cached block opens a new segment, one under 10 MiB a 20 MiB one), so the estimate should
 * not rest on one size that happens to fragment little; on the synthetic rows a single k gave
 * median errors that jump by up to 16 points between neighbouring k (docs/estimators.md). */
#define XMEM_WS_BAND 1.0
#define XMEM_WS_STEP 0.5

/* Fitted on GPUMemNet's synthetic datasets only (`carma estimate --fit-xmem`). */
typedef struct xmem_coeffs {
    double context_conv_mib;  /* CUDA context, libraries, handles: jobs with convolutions */
    double context_plain_mib; /* the same without (no cuDNN) */
    double conv_ws_ratio;     /* cuDNN workspace rule: the band's upper end (see above) */
    double conv_ws_cap_mib;   /* and the largest workspace (0: no cap) */
    double margin_conv;       /* safety margins, fractions of the reserved peak, for jobs */
    double margin_plain;      /* with and without convolutions */
} xmem_coeffs;

const xmem_coeffs *xmem_default_coeffs(void);

typedef struct xmem_estimate {
    double context_mib, reserved_mib, workspaces_mib, margin_mib, total_mib;
    double allocated_mib; /* peak of live tensors, for reference */
    bool convolutions;
    int steps;
} xmem_estimate;

/* The replay with workspaces under the rule above (cap_mib 0: no cap), for a band `band` wide
 * (XMEM_WS_BAND; 0: the one k = ratio): the result whose reserved peak is the largest over
 * the band. */
int xmem_replay_band(const mtrace_events *t, double ratio, double cap_mib, double band,
                     replay_result *r, carma_err *err);

/* The estimate of a loaded trace. reserved_mib is the tensors-only reserved peak;
 * workspaces_mib what the workspaces add to it (fragmentation can make it negative). */
int xmem_estimate_trace(const mtrace_events *t, const xmem_coeffs *c, xmem_estimate *e,
                        carma_err *err);

/* The grid of the cuDNN ratio the fit tries: XMEM_FIT_STEPS points from 0 in XMEM_WS_STEP,
 * so 0 to 14 x the input, past the im2col buffer (9 x) of the synthetic rows' 3 x 3
 * convolutions. */
#define XMEM_FIT_STEPS 29

/* The caps it tries, with each ratio: none, then 16 GiB down to 256 MiB by halves (larger
 * first, so that a tie keeps the larger workspace). */
#define XMEM_FIT_CAPS 8
extern const double xmem_fit_caps_mib[XMEM_FIT_CAPS];

/* One point of that grid: the convolution family's fit with that ratio and cap. */
typedef struct xmem_fit_step {
    double ratio, cap_mib, median_err, margin, context_mib;
} xmem_fit_step;

/* Held-out figures of one family: each row estimated by the fit on the other folds. */
typedef struct xmem_fit_held {
    size_t rows, under;
    double median_err; /* median |relative error| */
    double worst;      /* the most negative relative error (0: none under) */
} xmem_fit_held;

#define XMEM_MAX_FOLDS 20
#define XMEM_DEFAULT_FOLDS 5

typedef struct xmem_fit_report {
    xmem_fit_step steps[XMEM_FIT_CAPS * XMEM_FIT_STEPS]; /* by cap, then ratio */
    size_t nsteps;
    size_t rows_conv, rows_plain;
    double median_err_conv, median_err_plain; /* median |relative error|, margins included */
    size_t under_conv, under_plain;           /* underestimates with the margin */
    int folds;                                /* cross-validation: 0 none */
    xmem_fit_held cv_conv, cv_plain;
} xmem_fit_report;

/* Fits the coefficients on an index written by tools/xmem_synthetic.py (columns trace,
 * family, measured_mib; trace paths relative to the index's directory), with the workspace
 * rule's band `band` wide (XMEM_WS_BAND is the estimator's; others are for comparison), and
 * cross-validates the fit over `folds` folds (2..XMEM_MAX_FOLDS; 0: not), row i in fold
 * i mod folds (xmem_fit.c). */
int xmem_fit(const char *index_csv, double band, int folds, xmem_coeffs *c, xmem_fit_report *r,
             carma_err *err);

#endif
