/* fakegpu.h — the fake-GPU backend's ops (user-facing name `sim`; listed in the backend table
 * in backend.c). */
#ifndef CARMA_GPU_FAKEGPU_H
#define CARMA_GPU_FAKEGPU_H

#include "gpu/backend.h"

extern const gpu_backend_ops gpu_backend_fakegpu;

#endif
