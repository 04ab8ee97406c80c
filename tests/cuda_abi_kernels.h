/* cuda_abi_kernels.h - CUDA kernels that use the kernel ABI's sm_90 parts
 * (op.h), shared by the NVRTC compile test and the GPU test:
 *
 *   cluster_rank:        out[block] = the block's rank in its cluster, the
 *                        cluster shape given at launch (tess_launch.cluster)
 *   cluster_rank_fixed:  the same with __cluster_dims__(4, 1, 1) in the source
 *   tma_copy:            copies a TMA_W x TMA_H f32 matrix tile by tile
 *                        through shared memory: cp.async.bulk.tensor loads a
 *                        TMA_BOX x TMA_BOX box described by a tensor map
 *                        (a __grid_constant__ parameter after the buffers),
 *                        an mbarrier waits for it, the threads store it. */
#ifndef TESS_TEST_CUDA_ABI_KERNELS_H
#define TESS_TEST_CUDA_ABI_KERNELS_H

#include <stdlib.h>
#include <string.h>
#include "core/op.h"

#define CLUSTER_BLOCKS 8
#define TMA_W 128
#define TMA_H 96
#define TMA_BOX 32

static const char cluster_source[] =
    "__device__ unsigned cluster_ctarank() {\n"
    "    unsigned r;\n"
    "    asm volatile(\"mov.u32 %0, %%cluster_ctarank;\" : \"=r\"(r));\n"
    "    return r;\n"
    "}\n"
    "extern \"C\" __global__ void cluster_rank(unsigned *out) {\n"
    "    if (threadIdx.x == 0) out[blockIdx.x] = cluster_ctarank();\n"
    "}\n"
    "extern \"C\" __global__ void __cluster_dims__(4, 1, 1) cluster_rank_fixed(unsigned *out) {\n"
    "    if (threadIdx.x == 0) out[blockIdx.x] = cluster_ctarank();\n"
    "}\n";

static const char tma_source[] =
    "#define W 128\n"
    "#define BOX 32\n"
    "struct __align__(64) tensor_map { unsigned long long opaque[16]; };   /* CUtensorMap */\n"
    "extern \"C\" __global__ void tma_copy(const float *in, float *out, const __grid_constant__ tensor_map m) {\n"
    "    __shared__ __align__(128) float tile[BOX * BOX];\n"
    "    __shared__ __align__(8) unsigned long long bar;\n"
    "    unsigned bar_s = (unsigned)__cvta_generic_to_shared(&bar);\n"
    "    unsigned tile_s = (unsigned)__cvta_generic_to_shared(tile);\n"
    "    int x0 = blockIdx.x * BOX, y0 = blockIdx.y * BOX;\n"
    "    (void)in;\n"
    "    if (threadIdx.x == 0) {\n"
    "        asm volatile(\"mbarrier.init.shared::cta.b64 [%0], 1;\" :: \"r\"(bar_s));\n"
    "        asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n"
    "    }\n"
    "    __syncthreads();\n"
    "    if (threadIdx.x == 0) {\n"
    "        asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\"\n"
    "                     :: \"r\"(bar_s), \"r\"((unsigned)sizeof tile) : \"memory\");\n"
    "        asm volatile(\"cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes\"\n"
    "                     \" [%0], [%1, {%2, %3}], [%4];\"\n"
    "                     :: \"r\"(tile_s), \"l\"((unsigned long long)&m), \"r\"(x0), \"r\"(y0), \"r\"(bar_s)\n"
    "                     : \"memory\");\n"
    "    }\n"
    "    unsigned done = 0;\n"
    "    while (!done)\n"
    "        asm volatile(\"{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\"\n"
    "                     \" selp.u32 %0, 1, 0, p; }\" : \"=r\"(done) : \"r\"(bar_s) : \"memory\");\n"
    "    for (int i = threadIdx.x; i < BOX * BOX; i += blockDim.x)\n"
    "        out[(y0 + i / BOX) * W + x0 + i % BOX] = tile[i];\n"
    "}\n";

/* One launch of `entry` on a 1D or 2D grid of 1D blocks. */
static inline void abi_launch(tess_kernel_source *k, const char *entry, unsigned gx, unsigned gy, unsigned block) {
    tess_launch *l = &k->launch[0];
    k->nlaunches = 1;
    memset(l, 0, sizeof *l);
    strncpy(l->entry, entry, sizeof l->entry - 1);
    l->grid[0] = gx;
    l->grid[1] = gy;
    l->grid[2] = 1;
    l->block[0] = block;
    l->block[1] = l->block[2] = 1;
}

/* cluster_rank on CLUSTER_BLOCKS blocks in clusters of `cluster`. */
static inline tess_kernel_source cluster_kernel(const char *entry, unsigned cluster) {
    tess_kernel_source k = {.code = (char *)cluster_source};
    strcpy(k.min_arch, "sm_90");
    abi_launch(&k, entry, CLUSTER_BLOCKS, 1, 32);
    k.launch[0].cluster[0] = cluster;
    return k;
}

/* tma_copy of buffer 0 (in) into buffer 1 (out), one block per box. */
static inline tess_kernel_source tma_kernel(void) {
    tess_kernel_source k = {.code = (char *)tma_source};
    strcpy(k.min_arch, "sm_90a");
    abi_launch(&k, "tma_copy", TMA_W / TMA_BOX, TMA_H / TMA_BOX, 128);
    k.ntensor_maps = 1;
    k.tensor_map[0] = (tess_tensor_map){.buffer = 0, .dtype = TESS_F32, .rank = 2, .dims = {TMA_W, TMA_H},
                                        .strides = {TMA_W * sizeof(float)}, .box = {TMA_BOX, TMA_BOX}};
    return k;
}

#endif
