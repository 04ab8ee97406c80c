// gemm_wgmma.cu - the sm_90a GEMM for bf16 and f16 inputs with f32
// accumulation, A stored M x K and B stored N x K (both K-major): a
// producer warpgroup whose first thread loads BM x BK slices of A and
// BN x BK of B with the tensor memory accelerator (cp.async.bulk.tensor,
// rows of BK elements swizzled by the TMA in 128-byte or 64-byte atoms) into
// a STAGES-deep ring of shared buffers, and BM/64 consumer warpgroups, each
// multiplying its 64 rows with wgmma.mma_async m64nBNk16 straight from
// shared memory. Two mbarriers per stage: `full` (the TMA's bytes arrived)
// and `empty` (every consumer thread is done with it). Defined above
// gemm_common.cuh: BM BN BK STAGES THREADS PARAMS, SWIZZLE_MODE (the
// descriptor's: 1 for 128-byte, 2 for 64-byte atoms); above this text
// core's hopper.cuh (barriers, TMA, descriptors) and wgmma_k16 (one
// m64nBNk16 on BN/2 accumulators, generated for BN).

#define CONSUMERS (BM / 64)
#define A_BYTES (BM * BK * 2)
#define B_BYTES (BN * BK * 2)
#define STAGE_BYTES (A_BYTES + B_BYTES)

// A K-major operand in shared memory, swizzled: eight rows of BK elements
// (one swizzle atom) every 8 * BK * 2 bytes.
__device__ __forceinline__ unsigned long long operand_desc(unsigned addr)
{
    return wgmma_desc(addr, 16, 8 * BK * 2, SWIZZLE_MODE);
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    gemm_wgmma(PARAMS, const __grid_constant__ tensor_map map_a, const __grid_constant__ tensor_map map_b)
{
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    // swizzled stages start on 1024-byte boundaries; the launch reserves the slack
    const unsigned base = (smem_addr(smem_raw) + 1023) & ~1023u;
    const unsigned bars = base + STAGES * STAGE_BYTES;   // full[STAGES], then empty[STAGES]
    long long m0, n0;
    tile_coords(blockIdx.x, &m0, &n0);
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            bar_init(bars + 8 * s, 1);
            bar_init(bars + 8 * (STAGES + s), CONSUMERS * 128);
        }
        bar_init_fence();
    }
    __syncthreads();
    const int slices = (int)((GK + BK - 1) / BK);
    if (wg == 0) {
        if (tid == 0)
            for (int t = 0; t < slices; ++t) {
                const int s = t % STAGES;
                if (t >= STAGES) bar_wait(bars + 8 * (STAGES + s), ((t / STAGES) & 1) ^ 1);
                bar_expect_bytes(bars + 8 * s, STAGE_BYTES);
                tma_load(base + s * STAGE_BYTES, &map_a, t * BK, (int)m0, bars + 8 * s);
                tma_load(base + s * STAGE_BYTES + A_BYTES, &map_b, t * BK, (int)n0, bars + 8 * s);
            }
        return;
    }
    float d[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) d[i] = 0;
    for (int t = 0; t < slices; ++t) {
        const int s = t % STAGES;
        bar_wait(bars + 8 * s, (t / STAGES) & 1);
        const unsigned a = base + s * STAGE_BYTES + (wg - 1) * 64 * BK * 2, b = base + s * STAGE_BYTES + A_BYTES;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) wgmma_k16(d, operand_desc(a + kk * 2), operand_desc(b + kk * 2), 1);
        wgmma_commit();
        wgmma_wait<0>();
        bar_arrive(bars + 8 * (STAGES + s));
    }
    // accumulator 4i + q: row 16 warp + lane/4 (+8 for q >= 2), column 8i + 2 (lane%4) + q%2
    const int warp = tid / 32, lane = tid % 32;
    const long long row = m0 + (wg - 1) * 64 + warp * 16 + lane / 4;
#pragma unroll
    for (int i = 0; i < BN / 8; ++i)
#pragma unroll
        for (int q = 0; q < 4; ++q)
            store_d(D, C_PTR, BIAS_PTR, row + (q / 2) * 8, n0 + 8 * i + (lane % 4) * 2 + q % 2, d[4 * i + q]);
}
