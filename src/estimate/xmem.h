/* xmem.h — carma's xMem-style estimator: the peak GPU memory (MiB, as nvidia-smi shows it) of a
 * training job from a trace of its real training loop (carma_trace), replayed through the
 * caching-allocator model: context + reserved peak (tensors and workspaces) + margin. */
#ifndef CARMA_ESTIMATE_XMEM_H
#define CARMA_ESTIMATE_XMEM_H

#include <stdbool.h>
#include <stddef.h>

#include "estimate/trace_replay.h"
#include "util/err.h"

/* Fitted on GPUMemNet's synthetic datasets only (`carma estimate --fit-xmem`). */
typedef struct xmem_coeffs {
    double context_conv_mib;  /* CUDA context, libraries, handles: jobs with convolutions */
    double context_plain_mib; /* the same without (no cuDNN) */
    double conv_ws_ratio;     /* cuDNN workspace rule: ratio x max(input, output) bytes */
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

/* The estimate of a loaded trace. reserved_mib is the tensors-only reserved peak;
 * workspaces_mib what the workspaces add to it (fragmentation can make it negative). */
int xmem_estimate_trace(const mtrace_events *t, const xmem_coeffs *c, xmem_estimate *e,
                        carma_err *err);

typedef struct xmem_fit_report {
    size_t rows_conv, rows_plain;
    double median_err_conv, median_err_plain; /* median |relative error|, margins included */
    size_t under_conv, under_plain;           /* underestimates with the margin */
} xmem_fit_report;

/* Fits the coefficients on an index written by tools/xmem_synthetic.py (columns trace,
 * family, measured_mib; trace paths relative to the index's directory). */
int xmem_fit(const char *index_csv, xmem_coeffs *c, xmem_fit_report *r, carma_err *err);

#endif
