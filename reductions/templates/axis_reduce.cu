// axis_reduce.cu - the CUDA kernel of `reduce` over (OUTER, N, INNER):
// y[o][i] = FINISH(COMBINE over k of x[o][k][i]), accumulated in f32.
// INNER == 1 (the last axis): a block of BLOCK threads per output, strided
// over its row by vectors of VEC elements, then warp shuffles and one slot
// per warp. Otherwise SPLIT threads per VEC consecutive outputs (one vector
// load of each k), consecutive threads on consecutive vectors so every
// load of a warp is coalesced: the block's BLOCK / SPLIT vectors of outputs
// times SPLIT parts of the reduced axis, thread part p taking k = p, p +
// SPLIT, ... (the loop unrolled by UNROLL), the parts then combined in
// order through shared memory by part 0.
// Defined above this text: OUTER, N, INNER, BLOCK, UNROLL, SPLIT, INIT,
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
#define VPB (BLOCK / SPLIT)   // vectors of outputs per block
    const int v = threadIdx.x % VPB, part = threadIdx.x / VPB;
    const index_t idx = (index_t)blockIdx.x * VPB + v;
    const bool valid = idx < (index_t)OUTER * (INNER / VEC);
    const index_t o = valid ? idx / (INNER / VEC) : 0, i = valid ? idx % (INNER / VEC) * VEC : 0;
    const storage_t *xo = x + o * ((index_t)N * INNER) + i;
    float acc[VEC], f[VEC];
#pragma unroll
    for (int q = 0; q < VEC; ++q) acc[q] = INIT;
    UNROLL_BY(UNROLL)
    for (index_t k = part; k < N; k += SPLIT) {   // past the outputs: the first ones', not stored
        load_vec(xo + k * INNER, f);
#pragma unroll
        for (int q = 0; q < VEC; ++q) acc[q] = COMBINE(acc[q], f[q]);
    }
#if SPLIT > 1
    __shared__ float parts[SPLIT - 1][VEC][VPB];
    if (part > 0) {
#pragma unroll
        for (int q = 0; q < VEC; ++q) parts[part - 1][q][v] = acc[q];
    }
    __syncthreads();
    if (part > 0) return;
#pragma unroll
    for (int p = 0; p < SPLIT - 1; ++p) {
#pragma unroll
        for (int q = 0; q < VEC; ++q) acc[q] = COMBINE(acc[q], parts[p][q][v]);
    }
#endif
    if (!valid) return;
#pragma unroll
    for (int q = 0; q < VEC; ++q) acc[q] = FINISH(acc[q]);
    store_vec(y + o * INNER + i, acc);
#endif
}
