/*
 * cuda_compare.c - verification on the device: a candidate's output is
 * compared with a device copy of the reference by a kernel of our own, so a
 * correct candidate costs two reads of its output at device bandwidth
 * instead of a copy to the host and a host pass. Only the counts, first
 * indices and the largest error come back (40 bytes); the counts' atomics
 * are issued only by threads that saw a bad element, and the largest error
 * takes one per warp.
 *
 * The test is the host's (tess_verify_element in problem.h), in double
 * precision: an element is unwritten when it is NaN and the reference is
 * not, wrong when NaN or Inf where the reference has none (or the other
 * way round) or when |got - want| > tol * (scale + |want|); the error of an
 * element is tess_problem_error's, |got - want| / (scale + |want|). f32, f64, bf16
 * and f16 outputs are compared; bf16 and f16 are widened from their bits
 * (no fp16 headers needed), exactly as the host widens them.
 */
#include <stdint.h>
#include <string.h>
#include "cuda_internal.h"
#include "error.h"

#define COMPARE_THREADS 256

const char tess_cuda_compare_source[] =
    "// Verification kernels of the cuda backend.\n"
    "// counts: unwritten, first unwritten, wrong, first wrong, the largest error's bits.\n"
    "struct bf16 { unsigned short bits; };\n"
    "struct f16 { unsigned short bits; };\n"
    "__device__ __forceinline__ double load(const float *p, long long i) { return p[i]; }\n"
    "__device__ __forceinline__ double load(const double *p, long long i) { return p[i]; }\n"
    "__device__ __forceinline__ double load(const bf16 *p, long long i)\n"
    "{\n"
    "    return __uint_as_float((unsigned)p[i].bits << 16);\n"
    "}\n"
    "__device__ __forceinline__ double load(const f16 *p, long long i)\n"
    "{\n"
    "    float f;\n"
    "    asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(p[i].bits));\n"
    "    return f;\n"
    "}\n"
    "\n"
    "// 0 correct, 1 unwritten, 2 wrong: tess_verify_element of problem.h.\n"
    "__device__ __forceinline__ int verdict(double g, double w, double tol, double scale)\n"
    "{\n"
    "    if (g != g) return w != w ? 0 : 1;\n"
    "    if (w != w) return 2;\n"
    "    if (g - g != 0 || w - w != 0) return g == w ? 0 : 2;   // an Inf on either side\n"
    "    return fabs(g - w) <= tol * (scale + fabs(w)) ? 0 : 2;\n"
    "}\n"
    "\n"
    "// tess_problem_error of problem.h.\n"
    "__device__ __forceinline__ double error_of(double g, double w, double scale)\n"
    "{\n"
    "    const double inf = __longlong_as_double(0x7ff0000000000000ll);\n"
    "    if (g != g || w != w) return g != g && w != w ? 0 : inf;\n"
    "    if (g - g != 0 || w - w != 0) return g == w ? 0 : inf;\n"
    "    const double d = fabs(g - w), unit = scale + fabs(w);\n"
    "    return d == 0 ? 0 : unit > 0 ? d / unit : inf;\n"
    "}\n"
    "\n"
    "template <typename T>\n"
    "__device__ __forceinline__ void compare(const T *__restrict__ got, const T *__restrict__ want,\n"
    "                                        long long n, double tol, double scale,\n"
    "                                        unsigned long long *counts)\n"
    "{\n"
    "    unsigned long long unwritten = 0, wrong = 0;\n"
    "    unsigned long long first_unwritten = ~0ull, first_wrong = ~0ull;\n"
    "    double worst = 0;\n"
    "    const long long stride = (long long)gridDim.x * blockDim.x;\n"
    "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {\n"
    "        const double g = load(got, i), w = load(want, i);\n"
    "        const int v = verdict(g, w, tol, scale);\n"
    "        worst = fmax(worst, error_of(g, w, scale));\n"
    "        if (v == 1) {\n"
    "            if (!unwritten++) first_unwritten = i;\n"
    "        } else if (v == 2) {\n"
    "            if (!wrong++) first_wrong = i;\n"
    "        }\n"
    "    }\n"
    "    if (unwritten) {\n"
    "        atomicAdd(&counts[0], unwritten);\n"
    "        atomicMin(&counts[1], first_unwritten);\n"
    "    }\n"
    "    if (wrong) {\n"
    "        atomicAdd(&counts[2], wrong);\n"
    "        atomicMin(&counts[3], first_wrong);\n"
    "    }\n"
    "    // the warp's largest, then one atomic: errors are >= 0, whose bits order as they do\n"
    "    for (int o = 16; o > 0; o >>= 1) worst = fmax(worst, __shfl_xor_sync(0xffffffffu, worst, o));\n"
    "    if (threadIdx.x % 32 == 0 && worst > 0)\n"
    "        atomicMax(&counts[4], (unsigned long long)__double_as_longlong(worst));\n"
    "}\n"
    "\n"
    "extern \"C\" __global__ void __launch_bounds__(256)\n"
    "tess_compare_f32(const float *got, const float *want, long long n, double tol, double scale,\n"
    "                 unsigned long long *counts)\n"
    "{\n"
    "    compare(got, want, n, tol, scale, counts);\n"
    "}\n"
    "\n"
    "extern \"C\" __global__ void __launch_bounds__(256)\n"
    "tess_compare_f64(const double *got, const double *want, long long n, double tol, double scale,\n"
    "                 unsigned long long *counts)\n"
    "{\n"
    "    compare(got, want, n, tol, scale, counts);\n"
    "}\n"
    "\n"
    "extern \"C\" __global__ void __launch_bounds__(256)\n"
    "tess_compare_bf16(const bf16 *got, const bf16 *want, long long n, double tol, double scale,\n"
    "                  unsigned long long *counts)\n"
    "{\n"
    "    compare(got, want, n, tol, scale, counts);\n"
    "}\n"
    "\n"
    "extern \"C\" __global__ void __launch_bounds__(256)\n"
    "tess_compare_f16(const f16 *got, const f16 *want, long long n, double tol, double scale,\n"
    "                 unsigned long long *counts)\n"
    "{\n"
    "    compare(got, want, n, tol, scale, counts);\n"
    "}\n";

/* The kernel of each dtype it compares, in the order of compare_fn. */
static const struct {
    tess_dtype dtype;
    const char *entry;
} compare_kernels[TESS_CUDA_COMPARE_KERNELS] = {
    {TESS_F32, "tess_compare_f32"},
    {TESS_F64, "tess_compare_f64"},
    {TESS_BF16, "tess_compare_bf16"},
    {TESS_F16, "tess_compare_f16"},
};

/* Compiles (through the cubin cache) and loads the kernels once per context. */
static tess_status load_compare_module(tess_cuda_context *c) {
    if (c->compare_module) return TESS_OK;
    CUmodule mod;
    tess_status st = tess_cuda_load_own_module(c, tess_cuda_compare_source, "the verification kernels", "", &mod);
    if (st) return st;
    CUdeviceptr counts;
    CUresult r = CUDA_SUCCESS;
    for (int k = 0; k < TESS_CUDA_COMPARE_KERNELS && r == CUDA_SUCCESS; k++)
        r = c->drv->cuModuleGetFunction(&c->compare_fn[k], mod, compare_kernels[k].entry);
    if (r == CUDA_SUCCESS) r = c->drv->cuMemAlloc(&counts, 5 * sizeof(uint64_t));
    if (r != CUDA_SUCCESS) {
        c->drv->cuModuleUnload(mod);
        return tess_cuda_fail(c->drv, r, TESS_ERR_RUNTIME, "preparing the verification kernels");
    }
    c->compare_module = mod;
    c->compare_counts = counts;
    return TESS_OK;
}

tess_status tess_cuda_compare(void *ctx, const void *got, const void *want, tess_dtype dtype, int64_t n,
                              double tol, double scale, int64_t counts[4], double *max_error) {
    tess_cuda_context *c = ctx;
    int kernel = 0;
    while (kernel < TESS_CUDA_COMPARE_KERNELS && compare_kernels[kernel].dtype != dtype) kernel++;
    if (kernel == TESS_CUDA_COMPARE_KERNELS)
        return tess_error(TESS_ERR_ARG, "the cuda backend compares f32, f64, bf16 and f16 outputs, not %s",
                          tess_dtype_name(dtype));
    tess_status st = tess_cuda_bind(c);
    if (!st) st = load_compare_module(c);
    if (st) return st;
    static const uint64_t init[5] = {0, UINT64_MAX, 0, UINT64_MAX, 0};
    uint64_t out[5];
    CUdeviceptr g = (CUdeviceptr)(uintptr_t)got, w = (CUdeviceptr)(uintptr_t)want;
    long long count = (long long)n;
    void *params[] = {&g, &w, &count, &tol, &scale, &c->compare_counts};
    unsigned grid = (unsigned)(c->sm_count * (c->max_threads_per_sm / COMPARE_THREADS));
    if (grid == 0) grid = 1;
    CUresult r = c->drv->cuMemcpyHtoDAsync(c->compare_counts, init, sizeof init, c->stream);
    if (r == CUDA_SUCCESS)
        r = c->drv->cuLaunchKernel(c->compare_fn[kernel], grid, 1, 1, COMPARE_THREADS, 1, 1, 0,
                                   c->stream, params, NULL);
    if (r == CUDA_SUCCESS) r = c->drv->cuMemcpyDtoHAsync(out, c->compare_counts, sizeof out, c->stream);
    if (r == CUDA_SUCCESS) r = c->drv->cuStreamSynchronize(c->stream);
    if (r != CUDA_SUCCESS) return tess_cuda_fail(c->drv, r, TESS_ERR_RUNTIME, "comparing an output on the device");
    for (int i = 0; i < 4; i++) counts[i] = out[i] == UINT64_MAX ? INT64_MAX : (int64_t)out[i];
    memcpy(max_error, &out[4], sizeof *max_error);
    return TESS_OK;
}

void tess_cuda_compare_release(tess_cuda_context *c) {
    if (!c->compare_module) return;
    c->drv->cuMemFree(c->compare_counts);
    c->drv->cuModuleUnload(c->compare_module);
    c->compare_module = NULL;
}
