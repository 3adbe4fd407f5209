/* sim.h — the sim backend's ops (listed in the backend table in backend.c). */
#ifndef CARMA_GPU_SIM_H
#define CARMA_GPU_SIM_H

#include "gpu/backend.h"

extern const gpu_backend_ops gpu_backend_sim;

#endif
