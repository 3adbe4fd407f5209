/* gpumemnet.c — see gpumemnet.h. */
#include "estimate/gpumemnet.h"

#include <limits.h>

#include "util/datadir.h"

const char *gpumemnet_weights_file(model_family fam)
{
    return fam == FAMILY_TRANSFORMER ? "gpumemnet/weights/transformer_mlp_8g.weights.txt"
                                     : "gpumemnet/weights/cnn_mlp_8g.weights.txt";
}

int gpumemnet_ninputs(model_family fam)
{
    return fam == FAMILY_TRANSFORMER ? 8 : 9;
}

int gpumemnet_input(const gmn_features *f, int batch, double *x)
{
    double B = batch, AB = f->A * B;
    if (f->family == FAMILY_TRANSFORMER) {
        double v[] = {f->depth, f->A, AB, f->P, B, f->n_linear, f->n_layernorm, f->n_dropout};
        for (int i = 0; i < 8; i++)
            x[i] = v[i];
        return 8;
    }
    double s, c;
    features_activation_encoding(f->dominant, &s, &c);
    double v[] = {f->A, f->P, B, AB, f->n_conv2d, f->n_batchnorm2d, f->n_dropout, s, c};
    for (int i = 0; i < 9; i++)
        x[i] = v[i];
    return 9;
}

int gpumemnet_load(model_family fam, mlp_net *net, carma_err *err)
{
    char path[PATH_MAX];
    if (carma_data_path(gpumemnet_weights_file(fam), path, sizeof path, err))
        return -1;
    return mlp_net_load(path, gpumemnet_ninputs(fam), net, err);
}

int gpumemnet_class(const mlp_net *net, const gmn_features *f, int batch)
{
    double x[GPUMEMNET_MAX_INPUTS];
    gpumemnet_input(f, batch, x);
    return mlp_net_predict(net, x);
}

uint64_t gpumemnet_class_mib(int cls)
{
    return (uint64_t)(cls + 1) * GPUMEMNET_BIN_MIB;
}
