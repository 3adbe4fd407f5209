/* xmem_coeffs.c — the xmem estimator's coefficients as fitted by xmem_fit() on traces of
 * GPUMemNet's synthetic datasets (tools/xmem_synthetic.py, then `carma estimate --fit-xmem`;
 * docs/estimators.md gives the commands). Never fitted on the real-world rows. */
#include "estimate/xmem.h"

static const xmem_coeffs fitted = {
    .context_conv_mib = 1700,
    .context_plain_mib = 1430,
    .conv_ws_ratio = 0.5,
    .margin = 0.1,
};

const xmem_coeffs *xmem_default_coeffs(void)
{
    return &fitted;
}
