/*
 * cuda_internal.h - what the files of the cuda backend share: the tables of
 * driver and NVRTC entry points (loaded with dlopen), the execution context,
 * a loaded module, and the backend's ops as plain functions.
 *
 * Function types come from <cuda.h> and <nvrtc.h> through __typeof__, and
 * symbols are looked up under the names those headers map them to
 * (cuMemAlloc is cuMemAlloc_v2), so every call has exactly the ABI the
 * headers declare. Nothing links against libcuda or NVRTC.
 */
#ifndef TESS_CUDA_INTERNAL_H
#define TESS_CUDA_INTERNAL_H

#include <stdbool.h>
#include <cuda.h>
#include <nvrtc.h>
#include "backend.h"

/* Driver entry points used by the backend. */
#define TESS_CUDA_DRIVER_FUNCS(X)                                                           \
    X(cuInit) X(cuGetErrorName) X(cuGetErrorString)                                         \
    X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute)           \
    X(cuDeviceTotalMem) X(cuDeviceGetPCIBusId)                                              \
    X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent)             \
    X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize)                             \
    X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemsetD8Async) \
    X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction)                            \
    X(cuFuncGetAttribute) X(cuFuncSetAttribute)                                             \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor) X(cuLaunchKernel) X(cuLaunchKernelEx)    \
    X(cuTensorMapEncodeTiled)                                                               \
    X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventQuery)                     \
    X(cuEventSynchronize) X(cuEventElapsedTime)

#define TESS_CUDA_MEMBER(fn) __typeof__(&fn) fn;

typedef struct tess_cuda_driver {
    TESS_CUDA_DRIVER_FUNCS(TESS_CUDA_MEMBER)
} tess_cuda_driver;

/* NVRTC entry points. */
#define TESS_NVRTC_FUNCS(X)                                                                 \
    X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcCreateProgram) X(nvrtcDestroyProgram)     \
    X(nvrtcCompileProgram) X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog)                  \
    X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN)

typedef struct tess_nvrtc {
    TESS_NVRTC_FUNCS(TESS_CUDA_MEMBER)
    int major, minor;   /* nvrtcVersion */
} tess_nvrtc;

/* Loads libcuda.so.1 once per process (thread-safe). Does not call cuInit.
 * TESS_ERR_UNAVAILABLE with the reason when the library or a symbol is missing. */
tess_status tess_cuda_driver_get(const tess_cuda_driver **out);
/* Loads NVRTC once per process: libnvrtc.so.13, then libnvrtc.so, then the
 * toolkit's lib64 under $CUDA_HOME, $CUDA_PATH or /usr/local/cuda. */
tess_status tess_nvrtc_get(const tess_nvrtc **out);
/* Records "what: CUDA_ERROR_NAME (description)" and returns st. */
tess_status tess_cuda_fail(const tess_cuda_driver *drv, CUresult r, tess_status st,
                           const char *what);

/* Power readings through NVML (libnvidia-ml.so.1), opened lazily. */
typedef struct tess_cuda_power tess_cuda_power;
/* NULL when NVML or the device is not found (power then stays unknown). */
tess_cuda_power *tess_cuda_power_open(const char *pci_bus_id);
void tess_cuda_power_close(tess_cuda_power *p);
/* Starts a measurement window. */
void tess_cuda_power_begin(tess_cuda_power *p);
/* Takes an instantaneous sample (called while the GPU works). */
void tess_cuda_power_sample(tess_cuda_power *p);
/* Average board power in watts over the window, or -1 if unknown. */
double tess_cuda_power_end(tess_cuda_power *p);

/* Verification kernels, one per dtype compared on the device. */
#define TESS_CUDA_COMPARE_KERNELS 4

/* The execution context of the runner process (or a user's process). */
typedef struct tess_cuda_context {
    const tess_cuda_driver *drv;
    CUdevice device;
    CUcontext context;          /* the device's primary context */
    CUstream stream;
    char arch[16];              /* "sm_90" */
    int cc;                     /* compute capability, major * 10 + minor */
    char pci_bus_id[32];
    int sm_count, max_threads_per_sm, warp_size;
    CUevent *events;            /* timing events, grown on demand */
    int nevents;
    tess_cuda_power *power;     /* NULL: unknown */
    bool power_tried;
    CUmodule compare_module;    /* verification kernels, loaded on first use */
    CUfunction compare_fn[TESS_CUDA_COMPARE_KERNELS];   /* f32, f64, bf16, f16 */
    CUdeviceptr compare_counts;
} tess_cuda_context;

/* Encoded tensor maps kept per declaration: one per buffer address seen,
 * so the buffer sets timing rotates are encoded once each. */
#define TESS_CUDA_TENSOR_MAP_CACHE 16

typedef struct tess_cuda_tensor_map_entry {
    CUtensorMap map;            /* 64-byte aligned (the header aligns it to 128) */
    CUdeviceptr addr;
} tess_cuda_tensor_map_entry;

/* Allocated with its own alignment (CUtensorMap's), see tess_cuda_load. */
typedef struct tess_cuda_module {
    CUmodule module;
    int nlaunches;
    CUfunction fn[TESS_MAX_LAUNCHES];
    tess_launch launch[TESS_MAX_LAUNCHES];
    int nscalars;
    tess_scalar scalar[TESS_MAX_SCALARS];   /* passed by value after the buffers */
    int ntensor_maps;
    tess_tensor_map tensor_map[TESS_MAX_TENSOR_MAPS];   /* passed by value after the scalars */
    tess_cuda_tensor_map_entry encoded[TESS_MAX_TENSOR_MAPS][TESS_CUDA_TENSOR_MAP_CACHE];
    int nencoded[TESS_MAX_TENSOR_MAPS];     /* encodings so far; past the cache, the oldest is replaced */
} tess_cuda_module;

/* The ops, shared between the files of the backend. */
tess_status tess_cuda_probe(tess_device *dev);
tess_status tess_cuda_compile(const tess_device *dev, const tess_kernel_source *src,
                              tess_blob *bin, char **log);
void tess_cuda_compile_batch(const tess_device *dev, const tess_kernel_source *src, int n,
                             tess_compile_result *out);
tess_status tess_cuda_open(const tess_device *dev, void **ctx);
void tess_cuda_close(void *ctx);
tess_status tess_cuda_alloc(void *ctx, size_t bytes, void **dptr);
void tess_cuda_release(void *ctx, void *dptr);
tess_status tess_cuda_upload(void *ctx, void *dptr, const void *host, size_t bytes);
tess_status tess_cuda_download(void *ctx, void *host, const void *dptr, size_t bytes);
tess_status tess_cuda_poison(void *ctx, void *dptr, size_t bytes);
tess_status tess_cuda_load(void *ctx, const tess_blob *bin, const tess_kernel_source *src,
                           void **module, tess_kernel_metrics *metrics);
void tess_cuda_unload(void *ctx, void *module);
tess_status tess_cuda_run(void *ctx, void *module, void *const *dbufs, int nbufs);
tess_status tess_cuda_run_async(void *ctx, void *module, void *const *dbufs, int nbufs, void *stream);
tess_status tess_cuda_set_scalar(void *ctx, void *module, int index, const tess_scalar *value);
tess_status tess_cuda_time(void *ctx, void *module, void *const *const *dbuf_sets, int nsets,
                           int nbufs, int reps, int launches, double *ms, tess_kernel_metrics *metrics);
tess_status tess_cuda_calibrate(void *ctx, double *rates);
tess_status tess_cuda_compare(void *ctx, const void *got, const void *want, tess_dtype dtype, int64_t n,
                              double tol, double scale, int64_t counts[4], double *max_error);
/* Frees the verification kernels (context current). */
void tess_cuda_compare_release(tess_cuda_context *c);

/* Makes the context current in the calling thread. */
tess_status tess_cuda_bind(tess_cuda_context *c);
/* Queues every launch of a module on a stream (no wait), encoding the
 * tensor maps of buffer addresses not seen before. */
tess_status tess_cuda_launch_all(tess_cuda_context *c, tess_cuda_module *m, void *const *dbufs, int nbufs,
                                 CUstream stream);
/* TESS_ERR_ARG saying what is wrong with tensor map declaration `index`
 * (rank, dims, strides, box, swizzle, dtype), as cuTensorMapEncodeTiled
 * requires them. */
tess_status tess_cuda_tensor_map_check(const tess_tensor_map *d, int index);
/* The encoded tensor map `index` of m for the buffer at addr (from m's
 * cache, else encoded now and kept). */
tess_status tess_cuda_tensor_map_get(tess_cuda_context *c, tess_cuda_module *m, int index, CUdeviceptr addr,
                                     const CUtensorMap **out);
/* Compiles one of the backend's own kernel sources for the context's
 * device (through the cubin cache; min_arch as in tess_kernel_source, "sm_90a"
 * for the 'a' target) and loads it; `what` names it in errors. */
tess_status tess_cuda_load_own_module(tess_cuda_context *c, const char *source, const char *what,
                                      const char *min_arch, CUmodule *out);

/* The sources of the backend's own kernels (listed in tess_cuda_own_sources). */
extern const char tess_cuda_calibrate_source[], tess_cuda_mma_sync_source[], tess_cuda_wgmma_source[],
    tess_cuda_compare_source[];

/* Calibration: every kernel runs in blocks of this many threads. */
#define TESS_CUDA_CALIBRATE_THREADS 256
/* Launches fn on grid blocks `reps` times after one warm-up; *median_ms is
 * the median time. */
tess_status tess_cuda_time_launches(tess_cuda_context *c, CUfunction fn, unsigned grid, void **params,
                                    int reps, double *median_ms);
/* Fills the tensor-core rates of rates[] (0 where the device of compute
 * capability cc has no such instruction). */
tess_status tess_cuda_calibrate_mma(tess_cuda_context *c, int cc, double *rates);
/* Ensures at least n timing events exist. */
tess_status tess_cuda_events_reserve(tess_cuda_context *c, int n);

#endif
