/* evaluate.h — every estimator against measured peaks: the 18 real-world models of the
 * GPUMemNet paper (data/gpumemnet/realworld_eval.csv) and the CARMA workloads that have a
 * summary and a measured figure (data/gpumemnet/carma_rad_estimates.csv, one row per distinct
 * summary and batch size). */
#ifndef CARMA_ESTIMATE_EVALUATE_H
#define CARMA_ESTIMATE_EVALUATE_H

#include <stdbool.h>
#include <stddef.h>

#include "estimate/estimate.h"

/* Columns: the three estimators computed from summaries, FakeTensor's stored figures (not
 * computable here: it needs PyTorch), and the xmem estimator, computed from the traces of the
 * real-world jobs' scripts (data/gpumemnet/xmem_traces/, written by carma_trace from
 * examples/estimate/; rows without a trace show none). */
enum { EVAL_GPUMEMNET = 0, EVAL_HORUS, EVAL_CARMA, EVAL_FAKETENSOR, EVAL_XMEM, EVAL_NEST };
extern const char *const eval_estimator_names[EVAL_NEST];

typedef enum eval_table { EVAL_REALWORLD = 0, EVAL_CARMA_WORKLOADS, EVAL_NTABLES } eval_table;
const char *eval_table_name(eval_table t);

typedef struct eval_row {
    eval_table table;
    char model[64];
    char summary[96];
    int batch;
    double actual_mib;
    double est_mib[EVAL_NEST];
    bool has[EVAL_NEST];
    int gpumemnet_class;
} eval_row;

typedef struct eval_stats {
    eval_table table;
    int estimator; /* EVAL_* */
    size_t rows;
    double median_abs_rel_err, mean_abs_rel_err; /* fractions */
    size_t underestimates;
    double max_over_ratio; /* largest estimate / actual */
} eval_stats;

typedef struct eval_report {
    eval_row *rows;
    size_t nrows;
    eval_stats stats[EVAL_NTABLES * EVAL_NEST];
    size_t nstats;
} eval_report;

int eval_run(estimator *e, eval_report *rep, carma_err *err);
void eval_free(eval_report *rep);

#endif
