/* horus.h — the Horus memory formula as GPUMemNet and CARMA compute it (gpumemnet-spec §6):
 * 4 bytes * (B*A + (B+1)*P) in MiB, plus the constant 800 MiB of the published table. A and P
 * are the GPUMemNet features of the summary (gradients taken equal to P and scaled by B). */
#ifndef CARMA_ESTIMATE_HORUS_H
#define CARMA_ESTIMATE_HORUS_H

#include "estimate/features.h"

#define HORUS_CONSTANT_MIB 800.0

double horus_mib(const gmn_features *f, int batch);

#endif
