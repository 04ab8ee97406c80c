/*
 * cuda_calibrate_mma.c - the tensor-core ceilings: dense matrix
 * multiply-accumulate rates for bf16, f16 and fp8 (e4m3) inputs with fp32
 * accumulation, measured with kernels of our own.
 *
 * On sm_90 each warpgroup issues chains of warpgroup MMA (wgmma.mma_async,
 * m64n256k16, or k32 for fp8) on operands in shared memory, compiled for
 * sm_90a: the warp-level mma.sync reaches only about half of Hopper's peak.
 * Elsewhere (sm_80 and up) every warp runs independent chains of mma.sync
 * (m16n8k16, or m16n8k32 for fp8 from sm_89 on). Operands never change and
 * results are stored only under a condition that does not hold, so the
 * kernels touch no memory in their loops and only the tensor cores' rate
 * limits them. A rate the device has no instruction for is 0: fp8 below
 * sm_89, everything below sm_80.
 */
#include <stdint.h>
#include "cuda_internal.h"
#include "error.h"

#define MMA_SYNC_ITERS 8192
#define MMA_SYNC_CHAINS 8      /* must match the kernel */
#define WGMMA_ITERS 16384
#define WGMMA_PER_GROUP 4      /* must match the kernel */
#define WGMMA_WARPGROUPS 2     /* per block of CALIBRATE_THREADS threads */
#define MMA_REPS 5

const char tess_cuda_mma_sync_source[] =
    "// Tensor-core calibration with mma.sync (sm_80 and up): every warp runs 8\n"
    "// independent chains of one instruction on operands in registers.\n"
    "template <int KIND>  // 0: bf16, 1: f16 (m16n8k16), 2: fp8 e4m3 (m16n8k32, sm_89 and up)\n"
    "__device__ __forceinline__ void mma(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2])\n"
    "{\n"
    "    if constexpr (KIND == 0)\n"
    "        asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, \"\n"
    "                     \"{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\"\n"
    "                     : \"+f\"(c[0]), \"+f\"(c[1]), \"+f\"(c[2]), \"+f\"(c[3])\n"
    "                     : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), \"r\"(b[1]));\n"
    "    else if constexpr (KIND == 1)\n"
    "        asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, \"\n"
    "                     \"{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\"\n"
    "                     : \"+f\"(c[0]), \"+f\"(c[1]), \"+f\"(c[2]), \"+f\"(c[3])\n"
    "                     : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), \"r\"(b[1]));\n"
    "#if __CUDA_ARCH__ >= 890\n"
    "    else\n"
    "        asm volatile(\"mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, \"\n"
    "                     \"{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\"\n"
    "                     : \"+f\"(c[0]), \"+f\"(c[1]), \"+f\"(c[2]), \"+f\"(c[3])\n"
    "                     : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), \"r\"(b[1]));\n"
    "#endif\n"
    "}\n"
    "\n"
    "template <int KIND>\n"
    "__device__ __forceinline__ void mma_loop(float *out, int iters)\n"
    "{\n"
    "    const unsigned a[4] = {0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u};\n"
    "    const unsigned b[2] = {0x3c003c00u, 0x3c003c00u};\n"
    "    float c[8][4] = {};\n"
    "    for (int i = 0; i < iters; ++i)\n"
    "#pragma unroll\n"
    "        for (int j = 0; j < 8; ++j) mma<KIND>(c[j], a, b);\n"
    "    float s = 0.0f;\n"
    "#pragma unroll\n"
    "    for (int j = 0; j < 8; ++j) s += c[j][0] + c[j][1] + c[j][2] + c[j][3];\n"
    "    if (s == -1.0f) out[blockIdx.x * blockDim.x + threadIdx.x] = s;\n"
    "}\n"
    "\n"
    "extern \"C\" __global__ void __launch_bounds__(256) tess_mma_sync_bf16(float *out, int iters) { mma_loop<0>(out, iters); }\n"
    "extern \"C\" __global__ void __launch_bounds__(256) tess_mma_sync_f16(float *out, int iters) { mma_loop<1>(out, iters); }\n"
    "extern \"C\" __global__ void __launch_bounds__(256) tess_mma_sync_fp8(float *out, int iters) { mma_loop<2>(out, iters); }\n";

const char tess_cuda_wgmma_source[] =
    "// Tensor-core calibration with warpgroup MMA (sm_90a): each of the block's two\n"
    "// warpgroups issues m64n256 multiply-accumulates with A and B in shared memory\n"
    "// and 128 fp32 accumulators per thread, 4 per commit group, keeping one group\n"
    "// in flight while it issues the next (fence, issue, commit, wait, as CUTLASS's\n"
    "// mainloops do).\n"
    "#define WGMMA_D \"{"
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
    "}\"\n"
    "#define D8(i) \"+f\"(d[i]), \"+f\"(d[i + 1]), \"+f\"(d[i + 2]), \"+f\"(d[i + 3]), \"+f\"(d[i + 4]), \"+f\"(d[i + 5]), \"+f\"(d[i + 6]), \"+f\"(d[i + 7])\n"
    "#define D128 D8(0), D8(8), D8(16), D8(24), D8(32), D8(40), D8(48), D8(56), D8(64), D8(72), D8(80), D8(88), D8(96), D8(104), D8(112), D8(120)\n"
    "\n"
    "// A shared-memory matrix descriptor without swizzling: the start address and the\n"
    "// byte offsets between core matrices (8 rows of 16 bytes) along the leading and\n"
    "// the strided dimension, each in units of 16 bytes.\n"
    "__device__ __forceinline__ unsigned long long smem_desc(unsigned addr, unsigned lead, unsigned stride)\n"
    "{\n"
    "    return (unsigned long long)((addr & 0x3ffff) >> 4) | (unsigned long long)(lead >> 4) << 16 |\n"
    "           (unsigned long long)(stride >> 4) << 32;\n"
    "}\n"
    "\n"
    "template <int KIND>  // 0: bf16, 1: f16 (k16), 2: fp8 e4m3 (k32)\n"
    "__device__ __forceinline__ void wgmma(float (&d)[128], unsigned long long a, unsigned long long b)\n"
    "{\n"
    "    if constexpr (KIND == 0)\n"
    "        asm volatile(\"{ .reg .pred p; setp.ne.b32 p, %130, 0; \"\n"
    "                     \"wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 \" WGMMA_D \", %128, %129, p, 1, 1, 0, 0; }\"\n"
    "                     : D128 : \"l\"(a), \"l\"(b), \"r\"(1));\n"
    "    else if constexpr (KIND == 1)\n"
    "        asm volatile(\"{ .reg .pred p; setp.ne.b32 p, %130, 0; \"\n"
    "                     \"wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 \" WGMMA_D \", %128, %129, p, 1, 1, 0, 0; }\"\n"
    "                     : D128 : \"l\"(a), \"l\"(b), \"r\"(1));\n"
    "    else\n"
    "        asm volatile(\"{ .reg .pred p; setp.ne.b32 p, %130, 0; \"\n"
    "                     \"wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 \" WGMMA_D \", %128, %129, p, 1, 1; }\"\n"
    "                     : D128 : \"l\"(a), \"l\"(b), \"r\"(1));\n"
    "}\n"
    "\n"
    "template <int KIND>\n"
    "__device__ __forceinline__ void wgmma_loop(float *out, int iters)\n"
    "{\n"
    "    // A (64 rows) at 0, B (256 rows) at 4 KB: core matrices 128 bytes apart along K,\n"
    "    // 256 bytes apart along M and N, so B ends below 12.5 KB.\n"
    "    __shared__ __align__(128) uint4 tiles[1024];\n"
    "    for (int i = threadIdx.x; i < 1024; i += blockDim.x)\n"
    "        tiles[i] = make_uint4(0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u);\n"
    "    __syncthreads();\n"
    "    const unsigned base = (unsigned)__cvta_generic_to_shared(tiles);\n"
    "    const unsigned long long da = smem_desc(base, 128, 256), db = smem_desc(base + 4096, 128, 256);\n"
    "    float d[128];\n"
    "#pragma unroll\n"
    "    for (int k = 0; k < 128; ++k) d[k] = 0.0f;\n"
    "    for (int i = 0; i < iters; ++i) {\n"
    "        asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");\n"
    "#pragma unroll\n"
    "        for (int j = 0; j < 4; ++j) wgmma<KIND>(d, da, db);\n"
    "        asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\");\n"
    "        asm volatile(\"wgmma.wait_group.sync.aligned 1;\" ::: \"memory\");\n"
    "    }\n"
    "    asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: \"memory\");\n"
    "    float s = 0.0f;\n"
    "#pragma unroll\n"
    "    for (int k = 0; k < 128; ++k) s += d[k];\n"
    "    if (s == -1.0f) out[blockIdx.x * blockDim.x + threadIdx.x] = s;\n"
    "}\n"
    "\n"
    "extern \"C\" __global__ void __launch_bounds__(256, 1) tess_wgmma_bf16(float *out, int iters) { wgmma_loop<0>(out, iters); }\n"
    "extern \"C\" __global__ void __launch_bounds__(256, 1) tess_wgmma_f16(float *out, int iters) { wgmma_loop<1>(out, iters); }\n"
    "extern \"C\" __global__ void __launch_bounds__(256, 1) tess_wgmma_fp8(float *out, int iters) { wgmma_loop<2>(out, iters); }\n";

typedef struct mma_kernel {
    const char *entry;
    tess_ceiling_kind ceiling;
    double flops;              /* per instruction issued (a warp's or a warpgroup's) */
} mma_kernel;

/* Times one kernel; *gflops stays 0 when it cannot be timed. */
static tess_status measure(tess_cuda_context *c, CUmodule mod, const mma_kernel *k, unsigned grid,
                           double issues_per_iter, int iters, double *gflops) {
    CUfunction fn;
    CUresult r = c->drv->cuModuleGetFunction(&fn, mod, k->entry);
    if (r != CUDA_SUCCESS) return tess_cuda_fail(c->drv, r, TESS_ERR_INTERNAL, k->entry);
    void *out = NULL;
    tess_status st = tess_cuda_alloc(c, (size_t)grid * TESS_CUDA_CALIBRATE_THREADS * sizeof(float), &out);
    if (!st) {
        CUdeviceptr o = (CUdeviceptr)(uintptr_t)out;
        void *params[] = {&o, &iters};
        double ms = 0;
        st = tess_cuda_time_launches(c, fn, grid, params, MMA_REPS, &ms);
        if (!st && ms > 0) *gflops = k->flops * issues_per_iter * iters * grid / (ms * 1e-3) / 1e9;
    }
    tess_cuda_release(c, out);
    return st;
}

tess_status tess_cuda_calibrate_mma(tess_cuda_context *c, int cc, double *rates) {
    for (int k = TESS_CEILING_MMA_BF16; k <= TESS_CEILING_MMA_FP8; k++) rates[k] = 0;
    if (cc < 80) return TESS_OK;
    const bool hopper = cc == 90;
    static const mma_kernel wgmma[] = {
        {"tess_wgmma_bf16", TESS_CEILING_MMA_BF16, 2.0 * 64 * 256 * 16},
        {"tess_wgmma_f16", TESS_CEILING_MMA_F16, 2.0 * 64 * 256 * 16},
        {"tess_wgmma_fp8", TESS_CEILING_MMA_FP8, 2.0 * 64 * 256 * 32},
    };
    static const mma_kernel mma_sync[] = {
        {"tess_mma_sync_bf16", TESS_CEILING_MMA_BF16, 2.0 * 16 * 8 * 16},
        {"tess_mma_sync_f16", TESS_CEILING_MMA_F16, 2.0 * 16 * 8 * 16},
        {"tess_mma_sync_fp8", TESS_CEILING_MMA_FP8, 2.0 * 16 * 8 * 32},
    };
    const mma_kernel *kernels = hopper ? wgmma : mma_sync;
    const int n = cc >= 89 ? 3 : 2;
    /* wgmma: one block of two warpgroups per SM (128 accumulators per thread
     * leave room for no more); mma.sync: every SM full of 256-thread blocks. */
    unsigned grid = hopper ? (unsigned)c->sm_count
                           : (unsigned)(c->sm_count * (c->max_threads_per_sm / TESS_CUDA_CALIBRATE_THREADS));
    double issues = hopper ? (double)WGMMA_WARPGROUPS * WGMMA_PER_GROUP
                           : (double)TESS_CUDA_CALIBRATE_THREADS / 32 * MMA_SYNC_CHAINS;
    int iters = hopper ? WGMMA_ITERS : MMA_SYNC_ITERS;
    if (grid == 0) grid = 1;
    CUmodule mod;
    tess_status st = tess_cuda_load_own_module(c, hopper ? tess_cuda_wgmma_source : tess_cuda_mma_sync_source,
                                               "the tensor-core calibration kernels", hopper ? "sm_90a" : "sm_80", &mod);
    if (st) return st;
    for (int i = 0; !st && i < n; i++)
        st = measure(c, mod, &kernels[i], grid, issues, iters, &rates[kernels[i].ceiling]);
    c->drv->cuModuleUnload(mod);
    return st;
}
