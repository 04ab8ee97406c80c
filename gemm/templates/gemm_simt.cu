// gemm_simt.cu - the SIMT GEMM (any architecture; f32, f64, and 16-bit
// inputs widened to f32): BM x BN tiles of D per block, TM x TN per thread,
// slices of BK of A and B staged in shared memory in the accumulation type.
// Defined above gemm_common.cuh: BM BN BK TM TN THREADS; PARAMS (the
// kernel's buffers).

extern "C" __global__ void __launch_bounds__(THREADS) gemm_simt(PARAMS)
{
    __shared__ acc_t As[BK][BM + 1], Bs[BK][BN + 1];   // k-major; +1 keeps the stores off one bank
    long long m0, n0;
    tile_coords(blockIdx.x, &m0, &n0);
    const int tid = threadIdx.x, tx = tid % (BN / TN), ty = tid / (BN / TN);
    acc_t acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0;
    for (long long k0 = 0; k0 < GK; k0 += BK) {
        // consecutive threads read consecutive addresses of each operand's layout
        for (int e = tid; e < BM * BK; e += THREADS) {
            const bool m_fast = A_TRANS && !CONV;
            const int r = m_fast ? e % BM : e / BK, kk = m_fast ? e / BM : e % BK;
            As[kk][r] = load_a(A, m0 + r, k0 + kk);
        }
        for (int e = tid; e < BN * BK; e += THREADS) {
            const int c = B_TRANS ? e / BK : e % BN, kk = B_TRANS ? e % BK : e / BN;
            Bs[kk][c] = load_b(B, k0 + kk, n0 + c);
        }
        __syncthreads();
#pragma unroll 4
        for (int kk = 0; kk < BK; ++kk) {
            acc_t a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = As[kk][ty * TM + i];
#pragma unroll
            for (int j = 0; j < TN; ++j) b[j] = Bs[kk][tx * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) store_d(D, C_PTR, BIAS_PTR, m0 + ty * TM + i, n0 + tx * TN + j, acc[i][j]);
}
