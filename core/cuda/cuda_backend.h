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

/* The backend's own kernels (calibration and verification), listed for the
 * test that compiles each with NVRTC for the architectures it runs on. */
typedef struct tess_cuda_own_source {
    const char *what;           /* "the copy, read and FMA calibration kernels" */
    const char *code;
    const char *min_arch;       /* the oldest architecture it is used on ("" any, "sm_80"); "sm_90a":
                                   compiled for the 'a' target, used on sm_90 only */
    const char *entries[8];     /* its entry points, NULL-terminated */
} tess_cuda_own_source;

/* Ends with an entry whose code is NULL. */
extern const tess_cuda_own_source tess_cuda_own_sources[];

#endif
