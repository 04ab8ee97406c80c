// gemm_mma.cu - the sm_80 tensor-core GEMM for bf16 and f16 inputs with
// f32 accumulation: mma.sync m16n8k16, operands fed from shared memory by
// ldmatrix (.trans for the layouts stored the other way), slices of BK
// loaded by cp.async in a STAGES-deep pipeline (16-byte chunks, zero-filled
// past the edges of A and B and in a convolution's padding). WM x WN warps
// each own a (BM/WM) x (BN/WN) part of the block's tile; cp.async and the
// product are gemm_sm80.cuh's. With KSPLIT > 1 block b sums slice b / TILES of K
// (SLICES_PER slices of BK) for tile b % TILES, and gemm_split.cuh adds the
// slices' partial sums. Defined above gemm_common.cuh: BM BN BK WM WN STAGES
// THREADS PARAMS KSPLIT TILES SLICES_PER; the operands' chunk alignment (K,
// or M or N for operands stored the other way, a multiple of 8; for a
// convolution C) is checked by the generator.

#define WTM (BM / WM)
#define WTN (BN / WN)
#define MI (WTM / 16)   // m16 tiles per warp
#define NI (WTN / 8)    // n8 tiles per warp
// Shared tiles, each row padded by 8 elements (16 bytes) so ldmatrix's eight rows hit distinct banks:
// A as stored: BM rows of BK (A_TRANS: BK rows of BM); B: BN rows of BK (B_TRANS) or BK rows of BN.
#define A_ROWS (A_TRANS ? BK : BM)
#define A_COLS ((A_TRANS ? BM : BK) + 8)
#define B_ROWS (B_TRANS ? BN : BK)
#define B_COLS ((B_TRANS ? BK : BN) + 8)
#define A_STAGE (A_ROWS * A_COLS)
#define B_STAGE (B_ROWS * B_COLS)

// One slice of BK of A and B into stage buffers sa, sb.
__device__ __forceinline__ void load_slice(const in_t *A, const in_t *B, in_t *sa, in_t *sb, long long m0, long long n0,
                                           long long k0)
{
    const int a_chunks = A_ROWS * (A_COLS - 8) / 8, a_per_row = (A_COLS - 8) / 8;
    for (int e = threadIdx.x; e < a_chunks; e += THREADS) {
        const int row = e / a_per_row, col = e % a_per_row * 8;
#if A_TRANS
        const long long k = k0 + row, m = m0 + col;
        const bool valid = k < GK && m < GM;
        const in_t *src = valid ? A + k * GM + m : A;
#elif CONV
        const long long m = m0 + row, k = k0 + col;
        const long long at = m < GM && k < GK ? conv_offset(m, k) : -1;
        const bool valid = at >= 0;
        const in_t *src = valid ? A + at : A;
#else
        const long long m = m0 + row, k = k0 + col;
        const bool valid = m < GM && k < GK;
        const in_t *src = valid ? A + m * GK + k : A;
#endif
        cp_async16(sa + row * A_COLS + col, src, valid);
    }
    const int b_chunks = B_ROWS * (B_COLS - 8) / 8, b_per_row = (B_COLS - 8) / 8;
    for (int e = threadIdx.x; e < b_chunks; e += THREADS) {
        const int row = e / b_per_row, col = e % b_per_row * 8;
#if B_TRANS
        const long long n = n0 + row, k = k0 + col;
        const bool valid = n < GN && k < GK;
        const in_t *src = valid ? B + n * GK + k : B;
#else
        const long long k = k0 + row, n = n0 + col;
        const bool valid = k < GK && n < GN;
        const in_t *src = valid ? B + k * GN + n : B;
#endif
        cp_async16(sb + row * B_COLS + col, src, valid);
    }
}

__device__ __forceinline__ void ldmatrix_x4(unsigned r[4], const in_t *p, bool trans)
{
    if (trans)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(smem_addr(p)));
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(smem_addr(p)));
}

extern "C" __global__ void __launch_bounds__(THREADS) gemm_mma(PARAMS)
{
    extern __shared__ __align__(128) unsigned char smem[];
    in_t *sa = reinterpret_cast<in_t *>(smem), *sb = sa + STAGES * A_STAGE;
    long long m0, n0;
    const int tile = blockIdx.x % TILES, first = blockIdx.x / TILES * SLICES_PER;   // first: the slice's first BK
    tile_coords(tile, &m0, &n0);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int wm = warp / WN * WTM, wn = warp % WN * WTN;   // the warp's corner in the block tile
    const int j = lane / 8, r = lane % 8;                     // ldmatrix: matrix and row this lane addresses
    float acc[MI][NI][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int n = 0; n < NI; ++n)
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[i][n][q] = 0;

    const int left = (int)((GK + BK - 1) / BK) - first, slices = left < SLICES_PER ? left : SLICES_PER;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < slices) load_slice(A, B, sa + s * A_STAGE, sb + s * B_STAGE, m0, n0, (long long)(first + s) * BK);
        asm volatile("cp.async.commit_group;\n" ::);
    }
    for (int t = 0; t < slices; ++t) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
        __syncthreads();   // slice t is in; every warp is done with the stage refilled below
        const int next = t + STAGES - 1;
        if (next < slices)
            load_slice(A, B, sa + next % STAGES * A_STAGE, sb + next % STAGES * B_STAGE, m0, n0,
                       (long long)(first + next) * BK);
        asm volatile("cp.async.commit_group;\n" ::);
        const in_t *a_s = sa + t % STAGES * A_STAGE, *b_s = sb + t % STAGES * B_STAGE;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            unsigned af[MI][4], bf[NI][2];
#pragma unroll
            for (int i = 0; i < MI; ++i) {
                // matrices: rows 0-7 / 8-15 of the m16 tile, then k 8-15
                const int m = wm + i * 16 + (j % 2) * 8, k = kk + (j / 2) * 8;
#if A_TRANS
                ldmatrix_x4(af[i], a_s + (k + r) * A_COLS + m, true);
#else
                ldmatrix_x4(af[i], a_s + (m + r) * A_COLS + k, false);
#endif
            }
#pragma unroll
            for (int n = 0; n < NI; n += 2) {
                // matrices: n 0-7 with k 0-7 and k 8-15, then n 8-15
                const int nn = wn + n * 8 + (j / 2) * 8, k = kk + (j % 2) * 8;
                unsigned q[4];
#if B_TRANS
                ldmatrix_x4(q, b_s + (nn + r) * B_COLS + k, false);
#else
                ldmatrix_x4(q, b_s + (k + r) * B_COLS + nn, true);
#endif
                bf[n][0] = q[0];
                bf[n][1] = q[1];
                bf[n + 1][0] = q[2];
                bf[n + 1][1] = q[3];
            }
#pragma unroll
            for (int i = 0; i < MI; ++i)
#pragma unroll
                for (int n = 0; n < NI; ++n) mma16816(acc[i][n], af[i], bf[n]);
        }
    }
    asm volatile("cp.async.wait_group 0;\n" ::);
    // accumulator q of tile (i, n): row lane/4 (+8 for q >= 2), column 2 (lane%4) + q%2
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int n = 0; n < NI; ++n)
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const long long row = m0 + wm + i * 16 + lane / 4 + (q / 2) * 8;
                const long long col = n0 + wn + n * 8 + (lane % 4) * 2 + q % 2;
#if KSPLIT == 1
                store_d(D, C_PTR, BIAS_PTR, row, col, acc[i][n][q]);
#else
                split_store(first / SLICES_PER, row, col, acc[i][n][q]);
#endif
            }
#if KSPLIT > 1
    if (split_arrive_last(tile)) split_finish(D, C_PTR, BIAS_PTR, tile, m0, n0, BM, BN);
#endif
}
