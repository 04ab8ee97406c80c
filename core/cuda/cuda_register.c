/* cuda_register.c - the cuda backend's ops table. */
#include "cuda_backend.h"
#include "cuda_internal.h"

static const tess_backend_ops cuda_backend = {
    .name = "cuda",
    .summary = "CUDA C compiled by NVRTC to a cubin for the device, run through the driver API",
    .default_batch = 32,
    .exclusive_timing = false,
    .probe = tess_cuda_probe,
    .compile = tess_cuda_compile,
    .compile_batch = tess_cuda_compile_batch,
    .open = tess_cuda_open,
    .close = tess_cuda_close,
    .alloc = tess_cuda_alloc,
    .release = tess_cuda_release,
    .upload = tess_cuda_upload,
    .download = tess_cuda_download,
    .poison = tess_cuda_poison,
    .load = tess_cuda_load,
    .unload = tess_cuda_unload,
    .run = tess_cuda_run,
    .time = tess_cuda_time,
    .calibrate = tess_cuda_calibrate,
    .compare = tess_cuda_compare,
    .set_scalar = tess_cuda_set_scalar,
    .run_async = tess_cuda_run_async,
};

tess_status tess_cuda_register(void) { return tess_backend_register(&cuda_backend); }
