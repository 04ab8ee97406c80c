/*
 * cuda_backend.h - the cuda backend: kernels compiled at run time by NVRTC
 * to a cubin for the device's exact architecture, run through the CUDA
 * driver API. libcuda, NVRTC and NVML are all loaded with dlopen when first
 * needed, so a binary built with this backend starts (and reports the
 * backend unavailable, with the reason) on a machine without a GPU.
 *
 * Compiled only when the CUDA toolkit headers are found (TESS_HAVE_CUDA).
 */
#ifndef TESS_CUDA_BACKEND_H
#define TESS_CUDA_BACKEND_H

#include "tessera.h"

/* Registers the backend "cuda". Registering never touches the driver:
 * whether a device is present is the probe's answer. */
tess_status tess_cuda_register(void);

#endif
