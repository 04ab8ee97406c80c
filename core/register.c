/* register.c - the core's built-ins: the backends. "cuda" is registered in
 * builds with the CUDA toolkit; the driver and NVRTC are loaded when used. */
#include "backend_cpu.h"
#include "error.h"
#ifdef TESS_HAVE_CUDA
#include "cuda/cuda_backend.h"
#endif

tess_status tess_core_register(void) {
    tess_status st = tess_cpu_register();
#ifdef TESS_HAVE_CUDA
    if (!st) st = tess_cuda_register();
#endif
    return st;
}
