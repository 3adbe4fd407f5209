/* xmem_coeffs.c — the xmem estimator's coefficients as fitted by xmem_fit() on traces of
 * GPUMemNet's synthetic datasets, every usable row: 960 CNN rows of
 * cnn_data_step1_partial_2024-09-22.csv and 5,662 MLP rows of mlp_data_step1/2.csv, written by
 *   PYTHONPATH=data/python tools/xmem_synthetic.py --data data/gpumemnet --out DIR
 * then `carma estimate --fit-xmem DIR/index.csv` (docs/estimators.md). Never fitted on the
 * real-world rows. */
#include "estimate/xmem.h"

static const xmem_coeffs fitted = {
    .context_conv_mib = 2257.52,
    .context_plain_mib = 1439.6500000000001,
    .conv_ws_ratio = 6.5,
    .conv_ws_cap_mib = 4096,
    .margin_conv = 0.31500000000000017,
    .margin_plain = 0.25500000000000012,
};

const xmem_coeffs *xmem_default_coeffs(void)
{
    return &fitted;
}
