/* fuzz_weights.c — GPUMemNet weight files (mlp_net_load) and a prediction with what loaded. */
#include "fuzz_common.h"

#include "estimate/mlpnet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    mlp_net net;
    carma_err err;
    if (mlp_net_load(fuzz_file(data, size, path), 0, &net, &err) == 0) {
        double x[64] = {0};
        if (net.nin <= 64)
            mlp_net_predict(&net, x);
        mlp_net_free(&net);
    }
    return 0;
}
