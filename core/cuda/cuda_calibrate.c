/*
 * cuda_calibrate.c - the device's ceilings, measured with kernels of our own:
 * copy bandwidth (float4 copies between two 2 GiB buffers, bytes read +
 * written over the median time, the best of three copy kernels), read-only
 * bandwidth (the best of two kernels that sum one of those buffers), the
 * fp32 and fp64 FMA rates (independent FMA chains in every thread of a
 * full-occupancy grid), and the tensor-core rates (cuda_calibrate_mma.c).
 *
 * Runs in the process that owns the context; compiles its kernels with the
 * backend's own compile op, so they go through the same cache.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_internal.h"
#include "error.h"

#define COPY_BYTES_MAX ((size_t)2 << 30)   /* per buffer */
#define COPY_REPS 15
#define FMA_ITERS 65536
#define FMA_CHAINS 8                        /* must match the kernel */
#define FMA_REPS 5

const char tess_cuda_calibrate_source[] =
    "// Calibration kernels of the cuda backend.\n"
    "\n"
    "// Copy, persistent: a full-occupancy grid walks the buffers, 4 float4 in flight per thread.\n"
    "extern \"C\" __global__ void __launch_bounds__(256)\n"
    "tess_copy_stride(const float4 *__restrict__ src, float4 *__restrict__ dst, unsigned long long n)\n"
    "{\n"
    "    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n"
    "    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    for (; i + 3 * stride < n; i += 4 * stride) {\n"
    "        const float4 a = src[i], b = src[i + stride];\n"
    "        const float4 c = src[i + 2 * stride], d = src[i + 3 * stride];\n"
    "        dst[i] = a;\n"
    "        dst[i + stride] = b;\n"
    "        dst[i + 2 * stride] = c;\n"
    "        dst[i + 3 * stride] = d;\n"
    "    }\n"
    "    for (; i < n; i += stride) dst[i] = src[i];\n"
    "}\n"
    "\n"
    "// Copy, one tile per block: 4 * 256 consecutive float4, 4 loads in flight per thread.\n"
    "// With EVICT_FIRST the loads and stores carry the streaming hint (__ldcs, __stcs).\n"
    "template <bool EVICT_FIRST>\n"
    "__device__ __forceinline__ void copy_tile(const float4 *__restrict__ src, float4 *__restrict__ dst,\n"
    "                                          unsigned long long n)\n"
    "{\n"
    "    const unsigned long long base = (unsigned long long)blockIdx.x * 1024 + threadIdx.x;\n"
    "    float4 v[4];\n"
    "#pragma unroll\n"
    "    for (int k = 0; k < 4; ++k)\n"
    "        if (base + 256 * k < n) v[k] = EVICT_FIRST ? __ldcs(src + base + 256 * k) : src[base + 256 * k];\n"
    "#pragma unroll\n"
    "    for (int k = 0; k < 4; ++k) {\n"
    "        if (base + 256 * k >= n) continue;\n"
    "        if (EVICT_FIRST) __stcs(dst + base + 256 * k, v[k]);\n"
    "        else dst[base + 256 * k] = v[k];\n"
    "    }\n"
    "}\n"
    "extern \"C\" __global__ void __launch_bounds__(256)\n"
    "tess_copy_tile(const float4 *__restrict__ src, float4 *__restrict__ dst, unsigned long long n)\n"
    "{\n"
    "    copy_tile<false>(src, dst, n);\n"
    "}\n"
    "extern \"C\" __global__ void __launch_bounds__(256)\n"
    "tess_copy_tile_cs(const float4 *__restrict__ src, float4 *__restrict__ dst, unsigned long long n)\n"
    "{\n"
    "    copy_tile<true>(src, dst, n);\n"
    "}\n"
    "\n"
    "// Read-only: sums of the buffer, 4 float4 in flight per thread; the sum is stored\n"
    "// only under a condition that does not hold, so nothing is written.\n"
    "__device__ __forceinline__ void keep(float4 a, float *out)\n"
    "{\n"
    "    const float s = a.x + a.y + a.z + a.w;\n"
    "    if (s == -1.0f) out[(unsigned long long)blockIdx.x * blockDim.x + threadIdx.x] = s;\n"
    "}\n"
    "__device__ __forceinline__ void add(float4 &a, float4 b) { a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w; }\n"
    "extern \"C\" __global__ void __launch_bounds__(256)\n"
    "tess_read_stride(const float4 *__restrict__ src, float *__restrict__ out, unsigned long long n)\n"
    "{\n"
    "    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n"
    "    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    float4 a = make_float4(0.0f, 0.0f, 0.0f, 0.0f), b = a, c = a, d = a;\n"
    "    for (; i + 3 * stride < n; i += 4 * stride) {\n"
    "        add(a, src[i]);\n"
    "        add(b, src[i + stride]);\n"
    "        add(c, src[i + 2 * stride]);\n"
    "        add(d, src[i + 3 * stride]);\n"
    "    }\n"
    "    for (; i < n; i += stride) add(a, src[i]);\n"
    "    add(a, b);\n"
    "    add(c, d);\n"
    "    add(a, c);\n"
    "    keep(a, out);\n"
    "}\n"
    "extern \"C\" __global__ void __launch_bounds__(256)\n"
    "tess_read_tile(const float4 *__restrict__ src, float *__restrict__ out, unsigned long long n)\n"
    "{\n"
    "    const unsigned long long base = (unsigned long long)blockIdx.x * 1024 + threadIdx.x;\n"
    "    float4 v[4];\n"
    "#pragma unroll\n"
    "    for (int k = 0; k < 4; ++k)\n"
    "        v[k] = base + 256 * k < n ? src[base + 256 * k] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);\n"
    "    add(v[0], v[1]);\n"
    "    add(v[2], v[3]);\n"
    "    add(v[0], v[2]);\n"
    "    keep(v[0], out);\n"
    "}\n"
    "\n"
    "// FMA rates: 8 independent chains per thread, so latency never limits issue.\n"
    "template <typename T>\n"
    "__device__ __forceinline__ void fma_chains(T *__restrict__ out, int iters)\n"
    "{\n"
    "    T a[8];\n"
    "#pragma unroll\n"
    "    for (int k = 0; k < 8; ++k) a[k] = T(1e-3) * threadIdx.x + k;\n"
    "#pragma unroll 16\n"
    "    for (int i = 0; i < iters; ++i) {\n"
    "#pragma unroll\n"
    "        for (int k = 0; k < 8; ++k) a[k] = fma(a[k], T(0.9999999), T(1e-7));\n"
    "    }\n"
    "    T s = 0;\n"
    "#pragma unroll\n"
    "    for (int k = 0; k < 8; ++k) s += a[k];\n"
    "    out[(size_t)blockIdx.x * blockDim.x + threadIdx.x] = s;\n"
    "}\n"
    "extern \"C\" __global__ void __launch_bounds__(256) tess_fma(float *__restrict__ out, int iters)\n"
    "{\n"
    "    fma_chains(out, iters);\n"
    "}\n"
    "extern \"C\" __global__ void __launch_bounds__(256) tess_fma_f64(double *__restrict__ out, int iters)\n"
    "{\n"
    "    fma_chains(out, iters);\n"
    "}\n";

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

tess_status tess_cuda_time_launches(tess_cuda_context *c, CUfunction fn, unsigned grid, void **params,
                                    int reps, double *median_ms) {
    const tess_cuda_driver *drv = c->drv;
    tess_status st = tess_cuda_events_reserve(c, 2 * (reps + 1));
    if (st) return st;
    double ms[32];
    for (int r = 0; r <= reps; r++) {
        CUresult cr = drv->cuEventRecord(c->events[2 * r], c->stream);
        if (cr == CUDA_SUCCESS)
            cr = drv->cuLaunchKernel(fn, grid, 1, 1, TESS_CUDA_CALIBRATE_THREADS, 1, 1, 0, c->stream, params, NULL);
        if (cr == CUDA_SUCCESS) cr = drv->cuEventRecord(c->events[2 * r + 1], c->stream);
        if (cr != CUDA_SUCCESS) return tess_cuda_fail(drv, cr, TESS_ERR_RUNTIME, "calibration launch");
    }
    CUresult cr = drv->cuStreamSynchronize(c->stream);
    if (cr != CUDA_SUCCESS) return tess_cuda_fail(drv, cr, TESS_ERR_RUNTIME, "calibration kernel");
    for (int r = 1; r <= reps; r++) {   /* run 0 was the warm-up */
        float t = 0;
        cr = drv->cuEventElapsedTime(&t, c->events[2 * r], c->events[2 * r + 1]);
        if (cr != CUDA_SUCCESS) return tess_cuda_fail(drv, cr, TESS_ERR_RUNTIME, "cuEventElapsedTime");
        ms[r - 1] = t;
    }
    qsort(ms, (size_t)reps, sizeof *ms, cmp_double);
    *median_ms = ms[reps / 2];
    return TESS_OK;
}

/* Each bandwidth ceiling is the fastest of a few kernels (a persistent
 * grid-stride loop, one tile per block, for copies also with streaming
 * hints): which one the memory system prefers differs between GPUs. */
static tess_status measure_memory(tess_cuda_context *c, CUmodule mod, unsigned resident_grid, double *rates) {
    const tess_cuda_driver *drv = c->drv;
    /* Two buffers of 2 GiB, or of an eighth of the memory each on small GPUs. */
    size_t total = 0, bytes = COPY_BYTES_MAX;
    if (drv->cuDeviceTotalMem(&total, c->device) == CUDA_SUCCESS && total / 8 < bytes)
        bytes = total / 8 / 16 * 16;
    unsigned long long n = bytes / 16;
    const unsigned tiles = (unsigned)((n + 1023) / 1024);
    const struct {
        const char *entry;
        unsigned grid;
        tess_ceiling_kind ceiling;
        double bytes;               /* moved per launch */
    } variants[] = {
        {"tess_copy_stride", resident_grid, TESS_CEILING_COPY, 2.0 * (double)bytes},
        {"tess_copy_tile", tiles, TESS_CEILING_COPY, 2.0 * (double)bytes},
        {"tess_copy_tile_cs", tiles, TESS_CEILING_COPY, 2.0 * (double)bytes},
        {"tess_read_stride", resident_grid, TESS_CEILING_READ, (double)bytes},
        {"tess_read_tile", tiles, TESS_CEILING_READ, (double)bytes},
    };
    /* The read kernels' never-taken stores would land in dst (tiles * 256 floats fit in it). */
    void *src = NULL, *dst = NULL;
    tess_status st = tess_cuda_alloc(c, bytes, &src);
    if (!st) st = tess_cuda_alloc(c, bytes, &dst);
    rates[TESS_CEILING_COPY] = rates[TESS_CEILING_READ] = 0;
    for (size_t v = 0; !st && v < sizeof variants / sizeof variants[0]; v++) {
        CUfunction fn;
        CUresult r = drv->cuModuleGetFunction(&fn, mod, variants[v].entry);
        if (r != CUDA_SUCCESS) {
            st = tess_cuda_fail(drv, r, TESS_ERR_INTERNAL, variants[v].entry);
            break;
        }
        CUdeviceptr s = (CUdeviceptr)(uintptr_t)src, t = (CUdeviceptr)(uintptr_t)dst;
        void *params[] = {&s, &t, &n};
        double ms = 0;
        st = tess_cuda_time_launches(c, fn, variants[v].grid, params, COPY_REPS, &ms);
        double gbps = ms > 0 ? variants[v].bytes / (ms * 1e-3) / 1e9 : 0;
        if (!st && gbps > rates[variants[v].ceiling]) rates[variants[v].ceiling] = gbps;
    }
    tess_cuda_release(c, src);
    tess_cuda_release(c, dst);
    return st;
}

static tess_status measure_fma(tess_cuda_context *c, CUmodule mod, unsigned grid, const char *entry,
                               double *gflops) {
    const tess_cuda_driver *drv = c->drv;
    CUfunction fn;
    CUresult r = drv->cuModuleGetFunction(&fn, mod, entry);
    if (r != CUDA_SUCCESS) return tess_cuda_fail(drv, r, TESS_ERR_INTERNAL, entry);
    void *out = NULL;
    tess_status st = tess_cuda_alloc(c, (size_t)grid * TESS_CUDA_CALIBRATE_THREADS * sizeof(double), &out);
    if (!st) {
        CUdeviceptr o = (CUdeviceptr)(uintptr_t)out;
        int iters = FMA_ITERS;
        void *params[] = {&o, &iters};
        double ms = 0;
        st = tess_cuda_time_launches(c, fn, grid, params, FMA_REPS, &ms);
        double flops = 2.0 * FMA_CHAINS * (double)FMA_ITERS * grid * TESS_CUDA_CALIBRATE_THREADS;
        if (!st && ms > 0) *gflops = flops / (ms * 1e-3) / 1e9;
    }
    tess_cuda_release(c, out);
    return st;
}

tess_status tess_cuda_calibrate(void *ctx, double *rates) {
    tess_cuda_context *c = ctx;
    tess_status st = tess_cuda_bind(c);
    if (st) return st;
    CUmodule mod;
    st = tess_cuda_load_own_module(c, tess_cuda_calibrate_source, "the calibration kernels", "", &mod);
    if (st) return st;
    /* A full-occupancy grid: every SM holds as many 256-thread blocks as it can. */
    unsigned grid = (unsigned)(c->sm_count * (c->max_threads_per_sm / TESS_CUDA_CALIBRATE_THREADS));
    if (grid == 0) grid = 1;
    st = measure_memory(c, mod, grid, rates);
    if (!st) st = measure_fma(c, mod, grid, "tess_fma", &rates[TESS_CEILING_FMA_F32]);
    if (!st) st = measure_fma(c, mod, grid, "tess_fma_f64", &rates[TESS_CEILING_FMA_F64]);
    c->drv->cuModuleUnload(mod);
    if (!st) st = tess_cuda_calibrate_mma(c, c->cc, rates);
    return st;
}
