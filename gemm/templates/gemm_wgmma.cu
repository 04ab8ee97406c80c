// gemm_wgmma.cu - the sm_90a GEMM for bf16, f16 and e4m3 inputs with f32
// accumulation, A stored M x K and B stored N x K (both K-major). A
// persistent kernel: each block (or cluster of CLUSTER blocks) walks the
// tiles in the order of tile_coords, a stride of the grid apart. A producer
// warpgroup, its registers given back with setmaxnreg, has one thread load
// BM x BK slices of A and BN x BK of B with the tensor memory accelerator
// (cp.async.bulk.tensor, rows of BK elements swizzled in 128-byte or 64-byte
// atoms) into a STAGES-deep ring of shared buffers; it runs ahead into the
// next tile while the consumers store the last one. BM/64 consumer
// warpgroups each multiply their 64 rows with wgmma.mma_async m64nBNk16
// (k32 for e4m3) straight from shared memory, keeping one group of MMAs in flight while
// waiting for the next slice. In a cluster of two, the blocks take
// vertically adjacent tiles, which share B: each loads half of the B slice
// and the TMA multicasts it to both. Two mbarriers per stage: `full` (the
// stage's bytes arrived) and `empty` (every consumer warp of the cluster is
// done with it). Defined above gemm_common.cuh: BM BN BK STAGES THREADS
// CLUSTER TILE_M (= BM CLUSTER) PARAMS, IN_BYTES (of an input element),
// SWIZZLE_MODE (the descriptor's: 1 for 128-byte, 2 for 64-byte atoms),
// PROMOTE (0, or every how many slices the MMAs' sums are added into f32
// registers: the fp8 MMAs accumulate with about 14 bits), TMA_STORE (each
// consumer stages its rows of D in shared memory for the TMA to store,
// instead of storing from registers) with OUT_BYTES, CTAS (the persistent
// blocks resident on a multiprocessor, for the register budget); and wgmma_step
// (one m64nBNkK_STEP on BN/2 accumulators, generated for BN). The
// primitives (tensor maps, descriptors, mbarriers, 2D TMA loads, wgmma
// fences) are core/templates/hopper.cuh's, placed above as well.
//
// With KSPLIT > 1 (clusters of one, D from registers) the walk is over
// (tile, slice) units, TILE_SLICES cut into KSPLIT runs of SLICES_PER
// slices: the consumers store their f32 partial sums and the last unit of a
// tile adds them in slice order (gemm_split.cuh, with the consumers'
// named barrier as its split_sync; a convolution in windows keeps them by
// the tiles' rows, SPLIT_ROWS of them, each stored to the pixel window_row
// gives).
//
// A convolution (stride 1 or 2) is the GEMM of its im2col view. A 1x1
// filter of stride 1 without padding reads x as the M x C matrix A. Any other (CONV_WINDOW)
// gives each block BM output pixels of TILE_N images, TILE_H rows of TILE_W
// each, and loads, for each filter tap and slice of BK channels, the box of x
// those pixels read (a 4D tensor map over x: channels, columns, rows,
// images; its traversal stride STRIDE in columns and rows), whose
// coordinates outside the image (or past the last image) the TMA fills with zeros: the padding.
// Defined then: TILE_W TILE_H TILE_N, IMAGES, TILES_P TILES_Q (tiles of an
// image's output) and TILES_M (tile rows in tile_coords).

#define CONSUMERS (BM / 64)
#define ROW_BYTES (BK * IN_BYTES)   // of a slice's row: 64 or 128, the swizzle atom's width
#define A_BYTES (BM * ROW_BYTES)
#define B_BYTES (BN * ROW_BYTES)
#define B_PART_ROWS (BN / CLUSTER)   // rows of B each block of a cluster loads
#define STAGE_BYTES (A_BYTES + B_BYTES)
// a stage is released by one arrival of every consumer warp of the cluster
#define RELEASES (CLUSTER * CONSUMERS * 4)

// A K-major operand in shared memory, swizzled: eight rows of BK elements
// (one swizzle atom) every 8 * ROW_BYTES bytes; the leading offset is unused.
__device__ __forceinline__ unsigned long long operand_desc(unsigned addr)
{
    return wgmma_desc(addr, 16, 8 * ROW_BYTES, SWIZZLE_MODE);
}

// All threads of every block of the cluster (of the block, without one).
__device__ __forceinline__ void cluster_sync()
{
#if CLUSTER > 1
    asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
#else
    __syncthreads();
#endif
}

__device__ __forceinline__ unsigned cluster_rank()
{
#if CLUSTER > 1
    unsigned r;
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
#else
    return 0;
#endif
}

// One consumer warp is done with the stage whose empty barrier is `bar`:
// lane 0 tells every block of the cluster (their producers overwrite it).
// The warp's reads of the stage are complete (its MMAs have finished), so
// the arrival's default release at the block's scope suffices: a release at
// the cluster's scope fences every slice, which an H200's profile showed as
// half the warps' cycles stalled on memory barriers.
__device__ __forceinline__ void release_stage(unsigned bar, int lane)
{
    __syncwarp();
    if (lane != 0) return;
#if CLUSTER > 1
    for (unsigned r = 0; r < CLUSTER; ++r) {
        unsigned remote;
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(bar), "r"(r));
        asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
    }
#else
    bar_arrive(bar);
#endif
}

#if CLUSTER > 1
// The same box into the same offset of every block of the cluster, each block's `bar` counting its bytes.
__device__ __forceinline__ void tma_load_multicast(unsigned dst, const tensor_map *map, int k, int row, unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%2, %3}], [%4], %5;"
                 ::"r"(dst), "l"((unsigned long long)map), "r"(k), "r"(row), "r"(bar), "h"((unsigned short)((1u << CLUSTER) - 1))
                 : "memory");
}
#endif

// The tiles of D the block computes: cluster tiles of TILE_M x BN, a grid's stride apart; the block's BM rows of it.
#define CLUSTER_TILES ((unsigned)TILES_M * (unsigned)((GN + BN - 1) / BN))
#define TILE_SLICES ((int)((GK + BK - 1) / BK))
#ifndef KSPLIT
#define KSPLIT 1
#define SLICES_PER TILE_SLICES
#endif
// The units of the walk: (tile, slice of K), the tiles of slice 0 first; slices t0 .. t1 - 1 of BK each.
#define UNITS (CLUSTER_TILES * KSPLIT)

__device__ __forceinline__ void unit_range(unsigned unit, unsigned *tile, int *t0, int *t1)
{
    *tile = unit % CLUSTER_TILES;
    *t0 = (int)(unit / CLUSTER_TILES) * SLICES_PER;
    *t1 = *t0 + SLICES_PER < TILE_SLICES ? *t0 + SLICES_PER : TILE_SLICES;
}

#if CONV_WINDOW
__device__ __forceinline__ void tma_load_4d(unsigned dst, const tensor_map *map, int c, int x, int y, int img, unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4, %5}], [%6];"
                 ::"r"(dst), "l"((unsigned long long)map), "r"(c), "r"(x), "r"(y), "r"(img), "r"(bar)
                 : "memory");
}
#endif

// The producer thread: every slice of every tile into the ring.
__device__ __forceinline__ void produce(unsigned base, unsigned bars, unsigned rank, const tensor_map *map_a,
                                       const tensor_map *map_b)
{
    unsigned it = 0;
    for (unsigned unit = blockIdx.x / CLUSTER; unit < UNITS; unit += gridDim.x / CLUSTER) {
        unsigned tile;
        int t0, t1;
        unit_range(unit, &tile, &t0, &t1);
        long long m0, n0;
        tile_coords(tile, &m0, &n0);
        const int row_a = (int)(m0 + rank * BM), row_b = (int)(n0 + rank * B_PART_ROWS);
#if CONV_WINDOW
        const pixel_tile px = pixel_tile_of(row_a / BM);
#endif
        for (int t = t0; t < t1; ++t, ++it) {
            const unsigned s = it % STAGES, full = bars + 8 * s, stage = base + s * STAGE_BYTES;
            bar_wait(bars + 8 * (STAGES + s), ((it / STAGES) & 1) ^ 1);
            bar_expect_bytes(full, STAGE_BYTES);
#if CONV_WINDOW
            // slice t: filter tap t / (CH / BK), channels from t % (CH / BK) * BK; B's columns t * BK on
            const int tap = t / (int)(CH / BK);
            tma_load_4d(stage, map_a, t % (int)(CH / BK) * BK, px.q0 * STRIDE + tap % FS - PAD, px.p0 * STRIDE + tap / FS - PAD,
                        px.img, full);
#else
            tma_load(stage, map_a, t * BK, row_a, full);
#endif
#if CLUSTER > 1
            tma_load_multicast(stage + A_BYTES + rank * B_PART_ROWS * ROW_BYTES, map_b, t * BK, row_b, full);
#else
            tma_load(stage + A_BYTES, map_b, t * BK, row_b, full);
#endif
        }
    }
}

// D(m, n) and D(m, n + 1) from two accumulators: one 4- or 8-byte store when both are inside D and aligned.
__device__ __forceinline__ void store_pair(out_t *D, const out_t *Cm, const out_t *bias, long long m, long long n,
                                           acc_t v0, acc_t v1)
{
    if (GN % 2 != 0 || n + 1 >= GN || m >= GM) {
        store_d(D, Cm, bias, m, n, v0);
        store_d(D, Cm, bias, m, n + 1, v1);
        return;
    }
    const out_t lo = acc_to_out(epilogue_value(Cm, bias, m, n, v0)), hi = acc_to_out(epilogue_value(Cm, bias, m, n + 1, v1));
#if OUT_BF16 || OUT_F16
    *(unsigned *)(D + m * GN + n) = (unsigned)lo | (unsigned)hi << 16;
#else
    *(unsigned long long *)(D + m * GN + n) = (unsigned long long)__float_as_uint(lo) | (unsigned long long)__float_as_uint(hi) << 32;
#endif
}

#if TMA_STORE
#define STORE_COLS (128 / OUT_BYTES)   // columns of D in a box of 64 rows: 128 bytes of a row, the swizzle's width
#define STAGING_BYTES 16384            // a consumer's buffer: two boxes; a tile's rows go through it in parts
#define PART_COLS (2 * STORE_COLS)
#define PARTS (BN / PART_COLS > 0 ? BN / PART_COLS : 1)

// The 128 threads of consumer warpgroup wg (named barrier 1 + wg; 0 is __syncthreads').
__device__ __forceinline__ void consumer_sync(int wg) { asm volatile("bar.sync %0, 128;" ::"r"(wg + 1) : "memory"); }

// Consumer wg's 64 rows of D from row0, columns from n0, PART_COLS at a time (fewer when BN is): into its
// staging buffer, each row's 16-byte chunks swizzled (chunk ^ row % 8: a warp's 8 rows x 4 pairs land in 32
// banks), then stored by the TMA, which clips what lies outside D. Thread 0 of the warpgroup waits until the
// TMA has read the buffer's last contents out before it is written again.
__device__ __forceinline__ void store_tile(const tensor_map *map_d, unsigned staging, const float (&sum)[BN / 2],
                                           const out_t *Cm, const out_t *bias, int row0, int n0, int wg, int tid)
{
    const int warp = tid / 32, lane = tid % 32;
#pragma unroll
    for (int part = 0; part < PARTS; ++part) {
        if (tid == 0) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
        consumer_sync(wg);
#pragma unroll
        for (int i = part * PART_COLS / 8; i < (part + 1) * PART_COLS / 8 && i < BN / 8; ++i)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = warp * 16 + lane / 4 + 8 * h, c = 8 * i + (lane % 4) * 2, cp = c - part * PART_COLS;
                const long long m = row0 + r, n = n0 + c;
                const acc_t v0 = m < GM && n < GN ? epilogue_value(Cm, bias, m, n, sum[4 * i + 2 * h]) : 0;
                const acc_t v1 = m < GM && n + 1 < GN ? epilogue_value(Cm, bias, m, n + 1, sum[4 * i + 2 * h + 1]) : 0;
                const out_t lo = acc_to_out(v0), hi = acc_to_out(v1);
                const int byte = cp % STORE_COLS * OUT_BYTES;
                const unsigned at = staging + cp / STORE_COLS * 64 * 128 + r * 128 + ((byte >> 4 ^ (r & 7)) << 4) + (byte & 15);
#if OUT_BYTES == 2
                asm volatile("st.shared.b32 [%0], %1;" ::"r"(at), "r"((unsigned)lo | (unsigned)hi << 16) : "memory");
#else
                asm volatile("st.shared.v2.b32 [%0], {%1, %2};" ::"r"(at), "r"(__float_as_uint(lo)), "r"(__float_as_uint(hi))
                             : "memory");
#endif
            }
        // the generic proxy's writes become visible to the TMA's reads
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        consumer_sync(wg);
        if (tid == 0) {
#pragma unroll
            for (int box = 0; box < 2 && part * PART_COLS + box * STORE_COLS < BN; ++box)
                asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                             ::"l"((unsigned long long)map_d), "r"(n0 + part * PART_COLS + box * STORE_COLS), "r"(row0),
                               "r"(staging + box * 64 * 128)
                             : "memory");
            asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        }
    }
}
#endif

// Consumer wg's 64 rows of the block's tile from row m0 (a tile number times BM in a convolution read in windows),
// columns from n0, stored from its registers. Accumulator 4i + q: row 16 warp + lane/4 (+8 for q >= 2), column
// 8i + 2 (lane%4) + q%2.
__device__ __forceinline__ void store_registers(out_t *D, const out_t *Cm, const out_t *bias, const float (&sum)[BN / 2],
                                                long long m0, long long n0, int wg, int tid)
{
    const int warp = tid / 32, lane = tid % 32, tile_row = wg * 64 + warp * 16 + lane / 4;
    long long rows[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#if CONV_WINDOW
        rows[h] = window_row((unsigned)(m0 / BM), tile_row + 8 * h);
#else
        rows[h] = m0 + tile_row + 8 * h;
#endif
    }
#pragma unroll
    for (int i = 0; i < BN / 8; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h)
            store_pair(D, Cm, bias, rows[h], n0 + 8 * i + (lane % 4) * 2, sum[4 * i + 2 * h], sum[4 * i + 2 * h + 1]);
}

#if KSPLIT > 1
// Consumer wg's partial sums of its 64 rows from row0, columns from n0, for slice `slice` (accumulators as above).
__device__ __forceinline__ void store_partials(const float (&sum)[BN / 2], int slice, long long row0, long long n0, int tid)
{
    const int warp = tid / 32, lane = tid % 32;
#pragma unroll
    for (int i = 0; i < BN / 8; ++i)
#pragma unroll
        for (int q = 0; q < 4; ++q)
            split_store(slice, row0 + warp * 16 + lane / 4 + (q >= 2 ? 8 : 0), n0 + 8 * i + (lane % 4) * 2 + (q & 1),
                        sum[4 * i + q]);
}
#endif

// A consumer warpgroup (wg of CONSUMERS): its 64 rows of every unit of the block.
__device__ __forceinline__ void consume(out_t *D, const out_t *Cm, const out_t *bias, const tensor_map *map_d, unsigned base,
                                       unsigned bars, unsigned rank, int wg, int tid)
{
    const int lane = tid % 32;
    unsigned it = 0;
    for (unsigned unit = blockIdx.x / CLUSTER; unit < UNITS; unit += gridDim.x / CLUSTER) {
        unsigned tile;
        int t0, t1;
        unit_range(unit, &tile, &t0, &t1);
        long long m0, n0;
        tile_coords(tile, &m0, &n0);
        float d[BN / 2];
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) d[i] = 0;
#if PROMOTE
        float sum[BN / 2];
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) sum[i] = 0;
#else
        float (&sum)[BN / 2] = d;
#endif
        for (int t = t0; t < t1; ++t, ++it) {
            const unsigned s = it % STAGES, stage = base + s * STAGE_BYTES;
            bar_wait(bars + 8 * s, (it / STAGES) & 1);
            const unsigned a = stage + wg * 64 * ROW_BYTES, b = stage + A_BYTES;
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < BK; kk += K_STEP)
                wgmma_step(d, operand_desc(a + kk * IN_BYTES), operand_desc(b + kk * IN_BYTES), 1);
            wgmma_commit();
            // the previous slice's MMAs are done: its stage can be refilled while this one runs
            wgmma_wait<1>();
            if (t > t0) release_stage(bars + 8 * (STAGES + (it - 1) % STAGES), lane);
#if PROMOTE
            if ((t + 1 - t0) % PROMOTE == 0 || t + 1 == t1) {
                wgmma_wait<0>();
#pragma unroll
                for (int i = 0; i < BN / 2; ++i) {
                    sum[i] += d[i];
                    d[i] = 0;
                }
            }
#endif
        }
        wgmma_wait<0>();
        release_stage(bars + 8 * (STAGES + (it - 1) % STAGES), lane);
#if KSPLIT > 1
        store_partials(sum, (int)(unit / CLUSTER_TILES), m0 + wg * 64, n0, tid);
        if (split_arrive_last((int)tile)) split_finish(D, Cm, bias, (int)tile, m0, n0, BM, BN);
#elif TMA_STORE
        store_tile(map_d, base + STAGES * STAGE_BYTES + wg * STAGING_BYTES, sum, Cm, bias, (int)(m0 + rank * BM + wg * 64),
                   (int)n0, wg, tid);
#else
        store_registers(D, Cm, bias, sum, m0 + rank * BM, n0, wg, tid);
#endif
    }
#if TMA_STORE
    // the TMA has finished reading the last tile out of shared memory before the block leaves
    if (tid == 0) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
    (void)D, (void)map_d;
}

extern "C" __global__ void __launch_bounds__(THREADS, CTAS)
    gemm_wgmma(PARAMS, const __grid_constant__ tensor_map map_a, const __grid_constant__ tensor_map map_b
#if TMA_STORE
               , const __grid_constant__ tensor_map map_d
#endif
    )
{
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    // swizzled stages start on 1024-byte boundaries; the launch reserves the slack
    const unsigned base = (smem_addr(smem_raw) + 1023) & ~1023u;
    // the stages, the consumers' staging buffers of D, then the barriers: full[STAGES], empty[STAGES]
    const unsigned bars = base + STAGES * STAGE_BYTES + TMA_STORE * CONSUMERS * 16384;
    const unsigned rank = cluster_rank();
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            bar_init(bars + 8 * s, 1);
            bar_init(bars + 8 * (STAGES + s), RELEASES);
        }
        bar_init_fence();
    }
    // every block's barriers are ready before any block loads into them or releases them
    cluster_sync();
    if (wg == 0) {
#if CONSUMERS == 2
        // 384 threads start with 168 registers each: the producer needs few, the consumers' 128 accumulators more
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
#endif
        if (tid == 0) produce(base, bars, rank, &map_a, &map_b);
    } else {
#if CONSUMERS == 2
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
#endif
#if TMA_STORE
        consume(D, C_PTR, BIAS_PTR, &map_d, base, bars, rank, wg - 1, tid);
#else
        consume(D, C_PTR, BIAS_PTR, nullptr, base, bars, rank, wg - 1, tid);
#endif
    }
#if CLUSTER > 1
    // no block leaves while another may still release a stage of it
    cluster_sync();
#endif
}
