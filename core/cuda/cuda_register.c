/* cuda_register.c - the cuda backend's ops table and the list of its own kernels. */
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

const tess_cuda_own_source tess_cuda_own_sources[] = {
    {"the copy, read and FMA calibration kernels", tess_cuda_calibrate_source, "",
     {"tess_copy_stride", "tess_copy_tile", "tess_copy_tile_cs", "tess_read_stride", "tess_read_tile", "tess_fma",
      "tess_fma_f64", NULL}},
    {"the mma.sync calibration kernels", tess_cuda_mma_sync_source, "sm_80",
     {"tess_mma_sync_bf16", "tess_mma_sync_f16", "tess_mma_sync_fp8", NULL}},
    {"the wgmma calibration kernels", tess_cuda_wgmma_source, "sm_90a",
     {"tess_wgmma_bf16", "tess_wgmma_f16", "tess_wgmma_fp8", NULL}},
    {"the verification kernels", tess_cuda_compare_source, "",
     {"tess_compare_f32", "tess_compare_f64", "tess_compare_bf16", "tess_compare_f16", NULL}},
    {NULL, NULL, NULL, {NULL}},
};
