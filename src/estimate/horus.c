/* horus.c — see horus.h. */
#include "estimate/horus.h"

double horus_mib(const gmn_features *f, int batch)
{
    double B = batch;
    double bytes = 4.0 * (B * f->A + (B + 1.0) * f->P);
    return bytes / (1024.0 * 1024.0) + HORUS_CONSTANT_MIB;
}
