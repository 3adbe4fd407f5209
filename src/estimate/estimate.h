/* estimate.h — one entry point for every memory estimator that works from a model summary:
 * GPUMemNet (published classifiers), Horus (formula) and carma (analytic, analytic.h).
 * The scheduler and the simulator use it to fill a task's memory figures from its summary and
 * batch size instead of the figures stored in .rad files. */
#ifndef CARMA_ESTIMATE_ESTIMATE_H
#define CARMA_ESTIMATE_ESTIMATE_H

#include <stdbool.h>
#include <stdint.h>

#include "task/task.h"
#include "estimate/analytic.h"
#include "estimate/mlpnet.h"
#include "estimate/summary.h"
#include "sched/sched.h"
#include "util/err.h"

typedef struct est_result {
    mem_source src;
    uint64_t mib; /* the estimate, rounded up to whole MiB */
    double raw_mib; /* before rounding (Horus keeps fractions) */
    int cls;      /* GPUMemNet class, -1 for the others */
} est_result;

/* An estimator session: caches the GPUMemNet weights once loaded. */
typedef struct estimator {
    mlp_net nets[2]; /* by model_family */
    bool loaded[2];
    carma_optimizer optimizer;  /* for carma; Adam by default */
    const carma_coeffs *coeffs; /* for carma; the fitted defaults */
    const char *weights_override[2]; /* NULL = data/gpumemnet/weights/... */
} estimator;

void estimator_init(estimator *e);
void estimator_free(estimator *e);

/* True for the sources computed from a summary (horus, gpumemnet, carma). */
bool estimator_computes(mem_source src);

/* Estimates one summary at a batch size; seq_len (tokens per sample for module printouts, 0 =
 * 512). Errors: batch < 1, a source that is not computed from summaries, missing weights. */
int estimator_run(estimator *e, mem_source src, const model_summary *s, int batch, int seq_len,
                  est_result *out, carma_err *err);

/* The sequence length a summary file name carries ("..._sl:512.txt"), else 0. */
int estimate_seq_len_from_name(const char *path);

/* Finds a summary: the path as given, else data/gpumemnet/summaries/<its file name>. */
int estimate_resolve_summary(const char *path, char *buf, size_t cap, carma_err *err);

/* One-shot: parse the summary file and estimate. cls may be NULL (set to -1 unless gpumemnet). */
int estimate_task_mib(mem_source src, const char *summary_path, int batch, uint64_t *mib, int *cls,
                      carma_err *err);

/* Sets m[src] from a summary and a batch size (the building block of the two below; also fits a
 * catalog `workload`: summary_file, batch_size, mem). */
int estimate_fill_mem(estimator *e, mem_source src, const char *summary_path, int batch,
                      mem_figures *m, carma_err *err);
/* Sets t->mem[src] from t->summary_path and t->batch_size. */
int estimate_fill_task(estimator *e, mem_source src, task_spec *t, carma_err *err);
/* Same for a sched_task, given its summary and batch. */
int estimate_fill_sched_task(estimator *e, mem_source src, const char *summary_path, int batch,
                             sched_task *t, carma_err *err);

#endif
