/* analytic_coeffs.c — the carma estimator's coefficients as fitted by carma_fit() on
 * data/gpumemnet/mlp_data_step2.csv and cnn_data_step1_partial_2024-09-22.csv
 * (`carma estimate --fit-carma` prints them; test_est_analytic checks they match). */
#include "estimate/analytic.h"

static const carma_coeffs fitted = {
    .c = {1440.0680277929578, 262.61093058406021, 1.1883271120556529, 1.2396675340449204,
          2.353595394557034},
    .margin = 1.2380020820273221,
};

const carma_coeffs *carma_default_coeffs(void)
{
    return &fitted;
}
