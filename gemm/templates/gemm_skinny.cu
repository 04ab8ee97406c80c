// gemm_skinny.cu - the GEMM of few rows (M <= 16 MT: decoding, GEMV) for
// bf16 and f16 inputs with B stored N x K: a bandwidth kernel that reads B
// exactly once, 16 bytes per lane per load past L1, into the tensor cores
// (gemm_mma16816.cuh), with A's rows, zero-padded to 16 MT, held in shared
// memory for the block's slice of K.
//
// Block b computes COLS = WARPS NF 8 columns of D (column tile b % TILES_N)
// over slice b / TILES_N of SPLITS slices of K, each KSPAN wide; warp w owns
// NF fragments of 8 columns. Within a step of 32 values of K, lane (g, t)
// (g = lane / 4, t = lane % 4) reads values 8t .. 8t + 7 of column g's row
// of B, one 16-byte load, and feeds them to two m16n8k16 products: the sum
// over K is the same in any order, so the products take K permuted (their
// slots 2t, 2t + 1, 2t + 8, 2t + 9 are values 8t .. 8t + 3 of the step,
// then 8t + 4 .. 8t + 7), and A's fragments are read from shared memory in
// the same order. UNROLL steps of loads are issued before the previous
// steps' products, so UNROLL NF 16 bytes per lane are in flight.
//
// With SPLITS > 1 each block stores its f32 partial sums in the module's
// workspace; the last block of a column tile to arrive (a counter per tile,
// after a fence) adds the SPLITS partials in slice order, so the result does
// not depend on the blocks' timing, applies alpha, C and the epilogue once,
// and resets the counter for the next launch. The workspace belongs to the
// compiled module: launches of one module must not overlap.
// Defined above gemm_common.cuh: MT NF WARPS UNROLL KSPAN SPLITS COLS TILES_N
// THREADS PARAMS; the generator checks K % 8 == 0 (A stored K x M is staged
// element by element, so M may be any).

#define ROWS (16 * MT)
// A row of A in shared memory: KSPAN is a multiple of 64, so with 32 more elements (64 bytes) the rows g and g + 1
// that a quarter warp's 16-byte reads address (at 16t bytes each) fall on distinct banks.
#define A_STRIDE (KSPAN + 32)

struct __align__(16) chunk16 {
    unsigned x, y, z, w;   // 8 inputs, the lower-indexed one of each pair in the low half
};

// 16 bytes of B, read once: not kept in L1.
__device__ __forceinline__ chunk16 load_stream(const in_t *p)
{
    chunk16 v;
    // volatile: never issued for a lane whose chunk lies outside B
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];\n"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
}

// Rows 0 .. ROWS-1 of A over K values k0 .. k0 + KSPAN - 1 into As, 0 outside A.
__device__ __forceinline__ void stage_a(const in_t *A, in_t *As, long long k0)
{
#if A_TRANS
    // stored K x M: consecutive threads read consecutive m of one k
    for (int e = threadIdx.x; e < ROWS * KSPAN; e += THREADS) {
        const int m = e % ROWS, kk = e / ROWS;
        const long long k = k0 + kk;
        As[m * A_STRIDE + kk] = m < GM && k < GK ? A[k * GM + m] : (in_t)0;
    }
#else
    // stored M x K, K % 8 == 0: 16-byte chunks
    for (int e = threadIdx.x; e < ROWS * (KSPAN / 8); e += THREADS) {
        const int m = e / (KSPAN / 8), kk = e % (KSPAN / 8) * 8;
        const long long k = k0 + kk;
        chunk16 v = {0, 0, 0, 0};
        if (m < GM && k < GK) v = *reinterpret_cast<const chunk16 *>(A + m * GK + k);
        *reinterpret_cast<chunk16 *>(As + m * A_STRIDE + kk) = v;
    }
#endif
}

#if SPLITS > 1
__device__ float skinny_partial[SPLITS * GM * GN];       // [slice][m][n]
__device__ unsigned skinny_arrived[TILES_N] = {0};       // slices done per column tile

__device__ __forceinline__ float load_partial(const float *p)
{
    float v;
    asm volatile("ld.global.cg.f32 %0, [%1];\n" : "=f"(v) : "l"(p));   // from L2, where the other blocks wrote it
    return v;
}

// Whether this block is the last of its column tile to finish (all threads get the answer).
__device__ __forceinline__ bool arrive_last(int tile)
{
    __shared__ unsigned before;
    asm volatile("membar.gl;\n" ::: "memory");   // this thread's partials are visible before the count
    __syncthreads();
    if (threadIdx.x == 0)
        asm volatile("atom.global.add.u32 %0, [%1], 1;\n" : "=r"(before) : "l"(skinny_arrived + tile) : "memory");
    __syncthreads();
    asm volatile("membar.gl;\n" ::: "memory");
    return before == SPLITS - 1;
}
#endif

extern "C" __global__ void __launch_bounds__(THREADS) gemm_skinny(PARAMS)
{
    extern __shared__ __align__(16) unsigned char smem[];
    in_t *As = reinterpret_cast<in_t *>(smem);
    const int tile = blockIdx.x % TILES_N, slice = blockIdx.x / TILES_N;
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

    chunk16 cur[UNROLL][NF];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
        for (int f = 0; f < NF; ++f) {
            const bool valid = bvalid[f] && k0 + 32 * u + 8 * t < GK;
            cur[u][f] = valid ? load_stream(brow[f] + 32 * u) : chunk16{0, 0, 0, 0};
        }
    stage_a(A, As, k0);
    __syncthreads();

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
                next[u][f] = valid ? load_stream(brow[f] + 32 * s) : chunk16{0, 0, 0, 0};
            }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const int kk = 32 * (s0 + u) + 8 * t;   // within the slice: KSPAN is a multiple of 32 UNROLL
#pragma unroll
            for (int i = 0; i < MT; ++i) {
                const chunk16 lo = *reinterpret_cast<const chunk16 *>(As + (16 * i + g) * A_STRIDE + kk);
                const chunk16 hi = *reinterpret_cast<const chunk16 *>(As + (16 * i + g + 8) * A_STRIDE + kk);
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

#if SPLITS == 1
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int f = 0; f < NF; ++f)
#pragma unroll
            for (int q = 0; q < 4; ++q)
                store_d(D, C_PTR, BIAS_PTR, 16 * i + g + (q >= 2 ? 8 : 0), n_warp + 8 * f + 2 * t + (q & 1), acc[i][f][q]);
#else
    float *part = skinny_partial + (long long)slice * GM * GN;
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int f = 0; f < NF; ++f)
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const long long m = 16 * i + g + (q >= 2 ? 8 : 0), n = n_warp + 8 * f + 2 * t + (q & 1);
                if (m < GM && n < GN) part[m * GN + n] = acc[i][f][q];
            }
    if (!arrive_last(tile)) return;
    for (int e = threadIdx.x; e < GM * COLS; e += THREADS) {
        const long long m = e / COLS, n = (long long)tile * COLS + e % COLS;
        if (n >= GN) continue;
        float sum = 0;
        for (int s = 0; s < SPLITS; ++s) sum += load_partial(skinny_partial + (s * GM + m) * GN + n);
        store_d(D, C_PTR, BIAS_PTR, m, n, sum);
    }
    if (threadIdx.x == 0) skinny_arrived[tile] = 0;
#endif
}
