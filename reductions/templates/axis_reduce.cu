// axis_reduce.cu - the CUDA kernel of `reduce` over (OUTER, N, INNER):
// y[o][i] = FINISH(COMBINE over k of x[o][k][i]), accumulated in f32.
// INNER == 1 (the last axis): a block of BLOCK threads per output, strided
// over its row by vectors of VEC elements, then warp shuffles and one slot
// per warp. Otherwise one thread per VEC consecutive outputs (one vector
// load of each k), consecutive threads on consecutive vectors so every
// load of a warp is coalesced, the loop over k unrolled by UNROLL.
// Defined above this text: OUTER, N, INNER, BLOCK, UNROLL, INIT,
// COMBINE(a, b), FINISH(a), and storage.cuh's macros (VEC divides N when
// INNER == 1, else INNER).

typedef long long index_t;
#define PRAGMA_(text) _Pragma(#text)
#define UNROLL_BY(n) PRAGMA_(unroll n)

extern "C" __global__ void __launch_bounds__(BLOCK)
reduce_axis(const storage_t *__restrict__ x, storage_t *__restrict__ y)
{
#if INNER == 1
    __shared__ float red[BLOCK / 32];
    const storage_t *xo = x + (index_t)blockIdx.x * N;
    float acc = INIT, f[VEC];
    UNROLL_BY(UNROLL)
    for (index_t k = threadIdx.x; k < N / VEC; k += BLOCK) {
        load_vec(xo + k * VEC, f);
#pragma unroll
        for (int q = 0; q < VEC; ++q) acc = COMBINE(acc, f[q]);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc = COMBINE(acc, __shfl_xor_sync(0xffffffffu, acc, o));
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float r = red[0];
#pragma unroll
        for (int w = 1; w < BLOCK / 32; ++w) r = COMBINE(r, red[w]);
        y[blockIdx.x] = from_float(FINISH(r));
    }
#else
    const index_t idx = (index_t)blockIdx.x * BLOCK + threadIdx.x;
    if (idx >= (index_t)OUTER * (INNER / VEC)) return;
    const index_t o = idx / (INNER / VEC), i = idx % (INNER / VEC) * VEC;
    const storage_t *xo = x + o * ((index_t)N * INNER) + i;
    float acc[VEC], f[VEC];
#pragma unroll
    for (int q = 0; q < VEC; ++q) acc[q] = INIT;
    UNROLL_BY(UNROLL)
    for (index_t k = 0; k < N; ++k) {
        load_vec(xo + k * INNER, f);
#pragma unroll
        for (int q = 0; q < VEC; ++q) acc[q] = COMBINE(acc[q], f[q]);
    }
#pragma unroll
    for (int q = 0; q < VEC; ++q) acc[q] = FINISH(acc[q]);
    store_vec(y + o * INNER + i, acc);
#endif
}
