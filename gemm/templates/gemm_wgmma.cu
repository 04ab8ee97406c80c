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
// descriptor's: 1 for 128-byte, 2 for 64-byte atoms), and wgmma_k16 (one
// m64nBNk16 on BN/2 accumulators, generated for BN).

struct __align__(64) tensor_map { unsigned long long opaque[16]; };   // a CUtensorMap

#define CONSUMERS (BM / 64)
#define A_BYTES (BM * BK * 2)
#define B_BYTES (BN * BK * 2)
#define STAGE_BYTES (A_BYTES + B_BYTES)

__device__ __forceinline__ unsigned smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

// A K-major operand in shared memory, swizzled: eight rows of BK elements
// (one swizzle atom) every 8 * BK * 2 bytes; the leading offset is unused.
__device__ __forceinline__ unsigned long long operand_desc(unsigned addr)
{
    return (unsigned long long)((addr & 0x3ffff) >> 4) | 1ull << 16 | (unsigned long long)((8 * BK * 2) >> 4) << 32 |
           (unsigned long long)SWIZZLE_MODE << 62;
}

__device__ __forceinline__ void bar_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count));
}

__device__ __forceinline__ void bar_wait(unsigned bar, unsigned parity)
{
    unsigned done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
}

__device__ __forceinline__ void bar_arrive(unsigned bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void tma_load(unsigned dst, const tensor_map *map, int k, int row, unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 ::"r"(dst), "l"((unsigned long long)map), "r"(k), "r"(row), "r"(bar)
                 : "memory");
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
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    const int slices = (int)((GK + BK - 1) / BK);
    if (wg == 0) {
        if (tid == 0)
            for (int t = 0; t < slices; ++t) {
                const int s = t % STAGES;
                if (t >= STAGES) bar_wait(bars + 8 * (STAGES + s), ((t / STAGES) & 1) ^ 1);
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bars + 8 * s),
                             "r"(STAGE_BYTES)
                             : "memory");
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
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) wgmma_k16(d, operand_desc(a + kk * 2), operand_desc(b + kk * 2));
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
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
