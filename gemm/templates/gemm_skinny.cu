// gemm_skinny.cu - the GEMM of few rows (M <= 16 MT: decoding, GEMV) for
// bf16 and f16 inputs with B stored N x K: a bandwidth kernel that reads B
// exactly once, 16 bytes per lane per load past L1, into the tensor cores
// (gemm_sm80.cuh), with A's rows held in shared memory for the block's
// slice of K and zero fragments for the rows past M up to 16 MT.
//
// Block b computes COLS = WARPS NF 8 columns of D (column tile b % TILES)
// over slice b / TILES of KSPLIT slices of K, each KSPAN wide; warp w owns
// NF fragments of 8 columns. Within a step of 32 values of K, lane (g, t)
// (g = lane / 4, t = lane % 4) reads values 8t .. 8t + 7 of column g's row
// of B, one 16-byte load, and feeds them to two m16n8k16 products: the sum
// over K is the same in any order, so the products take K permuted (their
// slots 2t, 2t + 1, 2t + 8, 2t + 9 are values 8t .. 8t + 3 of the step,
// then 8t + 4 .. 8t + 7), and A's fragments are read from shared memory in
// the same order. UNROLL steps of loads are issued before the previous
// steps' products, so UNROLL NF 16 bytes per lane are in flight.
//
// With KSPLIT > 1 the slices' partial sums are added by gemm_split.cuh, or
// with CLUSTER_REDUCE (sm_90, KSPLIT <= 8) within a cluster: the KSPLIT
// blocks of a column tile (consecutive blocks, slice = cluster rank) each
// leave their partials in shared memory, and after a cluster barrier each
// adds 1/KSPLIT of the tile's elements over the cluster's blocks in slice
// order (distributed shared memory: no round trip through L2, no last block
// adding every slice alone; the order, so the result, fixed).
// Defined above gemm_common.cuh: MT NF WARPS UNROLL KSPAN KSPLIT COLS TILES
// (column tiles) PREFETCH THREADS PARAMS CLUSTER_REDUCE MIN_BLOCKS (the blocks per
// multiprocessor ptxas fits the registers to); the generator checks K % 8 == 0
// (A stored K x M is staged element by element, so M may be any).

#define ROWS (16 * MT)                       // rows of the products
#define SROWS (GM < ROWS ? (int)GM : ROWS)   // rows of A in shared memory
// A row of A in shared memory: KSPAN is a multiple of 64, so with 32 more elements (64 bytes) the rows g and g + 1
// that a quarter warp's 16-byte reads address (at 16t bytes each) fall on distinct banks.
#define A_STRIDE (KSPAN + 32)

struct __align__(16) chunk16 {
    unsigned x, y, z, w;   // 8 inputs, the lower-indexed one of each pair in the low half
};

#if PREFETCH == 256
#define LOAD_STREAM "ld.global.nc.L1::no_allocate.L2::256B.v4.u32"
#elif PREFETCH == 128
#define LOAD_STREAM "ld.global.nc.L1::no_allocate.L2::128B.v4.u32"
#else
#define LOAD_STREAM "ld.global.nc.L1::no_allocate.v4.u32"
#endif

// 16 bytes of B, read once: not kept in L1; L2 fetches PREFETCH bytes around them.
__device__ __forceinline__ chunk16 load_stream(const in_t *p)
{
    chunk16 v;
    // volatile: never issued for a lane whose chunk lies outside B
    asm volatile(LOAD_STREAM " {%0,%1,%2,%3}, [%4];\n"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
}

// A's rows over K values k0 .. k0 + KSPAN - 1 into As, 0 past K; complete after stage_a_wait.
__device__ __forceinline__ void stage_a(const in_t *A, in_t *As, long long k0)
{
#if A_TRANS
    // stored K x M: consecutive threads read consecutive m of one k; eight loads in flight
#pragma unroll 8
    for (int e = threadIdx.x; e < SROWS * KSPAN; e += THREADS) {
        const int m = e % SROWS, kk = e / SROWS;
        const long long k = k0 + kk;
        As[m * A_STRIDE + kk] = k < GK ? A[k * GM + m] : (in_t)0;
    }
#else
    // stored M x K, K % 8 == 0: 16-byte chunks copied asynchronously, all in flight at once
    for (int e = threadIdx.x; e < SROWS * (KSPAN / 8); e += THREADS) {
        const int m = e / (KSPAN / 8), kk = e % (KSPAN / 8) * 8;
        const long long k = k0 + kk;
        cp_async16(As + m * A_STRIDE + kk, k < GK ? A + m * GK + k : A, k < GK);
    }
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

__device__ __forceinline__ void stage_a_wait()
{
#if !A_TRANS
    asm volatile("cp.async.wait_group 0;\n" ::);
#endif
    __syncthreads();
}

#if CLUSTER_REDUCE
// The partials of a block in shared memory, after A's rows: SROWS x COLS f32.
#define PARTIALS_OFFSET ((SROWS * A_STRIDE * 2 + 15) / 16 * 16)

__device__ __forceinline__ void cluster_barrier()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// D over this block's share of the tile's SROWS x COLS elements: the sum of every block's partials, slice order.
__device__ __forceinline__ void cluster_finish(out_t *D, const out_t *Cm, const out_t *bias, const float *partials, int tile,
                                               int slice)
{
    const int count = SROWS * COLS, per = (count + KSPLIT - 1) / KSPLIT;
    const unsigned local = smem_addr(partials);
    for (int e = slice * per + threadIdx.x; e < (slice + 1) * per && e < count; e += THREADS) {
        float sum = 0;
#pragma unroll
        for (int r = 0; r < KSPLIT; ++r) {
            unsigned remote;
            float v;
            asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local + 4u * (unsigned)e), "r"(r));
            asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote) : "memory");
            sum += v;
        }
        store_d(D, Cm, bias, e / COLS, (long long)tile * COLS + e % COLS, sum);
    }
}
#endif

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS) gemm_skinny(PARAMS)
{
    extern __shared__ __align__(16) unsigned char smem[];
    in_t *As = reinterpret_cast<in_t *>(smem);
#if CLUSTER_REDUCE
    const int tile = blockIdx.x / KSPLIT, slice = blockIdx.x % KSPLIT;   // slice: the rank in the cluster
#else
    const int tile = blockIdx.x % TILES, slice = blockIdx.x / TILES;
#endif
    const long long k0 = (long long)slice * KSPAN;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
    const long long n_warp = (long long)tile * COLS + warp * (NF * 8);

    // the rows of B this lane streams (column n_warp + 8f + g) from K value k0 + 8t
    const in_t *brow[NF];
    bool bvalid[NF];
#pragma unroll
    for (int f = 0; f < NF; ++f) {
        const long long n = n_warp + 8 * f + g;
        bvalid[f] = n < GN;
        brow[f] = B + (bvalid[f] ? n : 0) * GK + k0 + 8 * t;
    }
    const long long left = GK - k0;
    const int steps = (int)(left < KSPAN ? (left + 31) / 32 : KSPAN / 32);   // steps of 32 holding values of K

#if !A_TRANS
    stage_a(A, As, k0);   // asynchronous: the first loads of B go out meanwhile
#endif
    const chunk16 zero = {0, 0, 0, 0};
    chunk16 cur[UNROLL][NF];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
        for (int f = 0; f < NF; ++f) {
            const bool valid = bvalid[f] && k0 + 32 * u + 8 * t < GK;
            cur[u][f] = valid ? load_stream(brow[f] + 32 * u) : zero;
        }
#if A_TRANS
    stage_a(A, As, k0);
#endif
    stage_a_wait();

    float acc[MT][NF][4];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int f = 0; f < NF; ++f)
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[i][f][q] = 0;

    for (int s0 = 0; s0 < steps; s0 += UNROLL) {
        chunk16 next[UNROLL][NF];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
#pragma unroll
            for (int f = 0; f < NF; ++f) {
                const int s = s0 + UNROLL + u;
                const bool valid = bvalid[f] && s < steps && k0 + 32 * s + 8 * t < GK;
                next[u][f] = valid ? load_stream(brow[f] + 32 * s) : zero;
            }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const int kk = 32 * (s0 + u) + 8 * t;   // within the slice: KSPAN is a multiple of 32 UNROLL
#pragma unroll
            for (int i = 0; i < MT; ++i) {
                // rows g and g + 8 of the product, zero past SROWS (read at the last row, then replaced)
                const int r = 16 * i + g, r8 = r + 8;
                const chunk16 lo_row = *reinterpret_cast<const chunk16 *>(As + (r < SROWS ? r : SROWS - 1) * A_STRIDE + kk);
                const chunk16 hi_row = *reinterpret_cast<const chunk16 *>(As + (r8 < SROWS ? r8 : SROWS - 1) * A_STRIDE + kk);
                const chunk16 lo = r < SROWS ? lo_row : zero, hi = r8 < SROWS ? hi_row : zero;
                const unsigned a0[4] = {lo.x, hi.x, lo.y, hi.y}, a1[4] = {lo.z, hi.z, lo.w, hi.w};
#pragma unroll
                for (int f = 0; f < NF; ++f) {
                    const unsigned b0[2] = {cur[u][f].x, cur[u][f].y}, b1[2] = {cur[u][f].z, cur[u][f].w};
                    mma16816(acc[i][f], a0, b0);
                    mma16816(acc[i][f], a1, b1);
                }
            }
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
#pragma unroll
            for (int f = 0; f < NF; ++f) cur[u][f] = next[u][f];
    }

#if CLUSTER_REDUCE
    float *partials = reinterpret_cast<float *>(smem + PARTIALS_OFFSET);
#endif
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int f = 0; f < NF; ++f)
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const long long m = 16 * i + g + (q >= 2 ? 8 : 0), n = n_warp + 8 * f + 2 * t + (q & 1);
#if CLUSTER_REDUCE
                if (m < SROWS) partials[m * COLS + (n - (long long)tile * COLS)] = acc[i][f][q];
#elif KSPLIT == 1
                store_d(D, C_PTR, BIAS_PTR, m, n, acc[i][f][q]);
#else
                split_store(slice, m, n, acc[i][f][q]);
#endif
            }
#if CLUSTER_REDUCE
    cluster_barrier();   // every block's partials are in its shared memory
    cluster_finish(D, C_PTR, BIAS_PTR, partials, tile, slice);
    cluster_barrier();   // no block leaves while another reads its partials
#elif KSPLIT > 1
    if (split_arrive_last(tile)) split_finish(D, C_PTR, BIAS_PTR, tile, 0, (long long)tile * COLS, (int)GM, COLS);
#endif
}
