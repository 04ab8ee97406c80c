// sum.cu - out[0] = the sum of in[0..N), in two launches that take the same
// buffers (in, out, partial) and need no atomics and no zeroing:
//   sum_partials  GRID blocks of BLOCK threads. Each thread walks the vector
//                 grid-stride in VEC-wide loads, ITEMS independent loads in
//                 flight per step, each into its own accumulator; the block
//                 then adds its threads' sums (warp shuffles, then one value
//                 per warp through shared memory) into partial[blockIdx.x].
//   sum_final     one block of FINAL_BLOCK threads adds the GRID partials
//                 into out[0].
//
// Parameters, defined by the generator above this text:
//   REAL, VEC, REAL_V   element type, vector width, the VEC-wide vector type
//   ACC                 accumulator type (REAL, or double for float data)
//   N                   number of elements
//   BLOCK, GRID, ITEMS  threads per block, blocks, loads in flight per thread
//   FINAL_BLOCK         threads of the final launch

typedef long long index_t;

// VEC consecutive values from p (aligned to VEC elements), added in ACC.
__device__ __forceinline__ ACC load_sum(const REAL *__restrict__ p)
{
#if VEC == 1
    return (ACC)__ldg(p);
#elif VEC == 2
    const REAL_V t = __ldg(reinterpret_cast<const REAL_V *>(p));
    return (ACC)t.x + (ACC)t.y;
#else
    const REAL_V t = __ldg(reinterpret_cast<const REAL_V *>(p));
    return ((ACC)t.x + (ACC)t.y) + ((ACC)t.z + (ACC)t.w);
#endif
}

// The sum of v over the block, valid in thread 0.
template <int THREADS>
__device__ __forceinline__ ACC block_sum(ACC v)
{
    __shared__ ACC warp_sums[THREADS / 32];
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (THREADS == 32) return v;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < THREADS / 32 ? warp_sums[lane] : (ACC)0;
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    return v;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
sum_partials(const REAL *__restrict__ in, REAL *__restrict__ out, REAL *__restrict__ partial)
{
    const index_t nvec = N / VEC;                   // whole vectors
    const index_t stride = (index_t)GRID * BLOCK;   // in vectors
    index_t i = (index_t)blockIdx.x * BLOCK + threadIdx.x;
    ACC acc[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) acc[k] = (ACC)0;

    // Main loop: ITEMS independent loads per step.
    for (; i + (ITEMS - 1) * stride < nvec; i += ITEMS * stride) {
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) acc[k] += load_sum(in + (i + k * stride) * VEC);
    }
    // Fewer than ITEMS vectors left for this thread.
    for (; i < nvec; i += stride) acc[0] += load_sum(in + i * VEC);
    // The last N % VEC elements.
    if (N % VEC != 0 && blockIdx.x == 0 && threadIdx.x < N % VEC)
        acc[0] += (ACC)in[nvec * VEC + threadIdx.x];

    ACC total = (ACC)0;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) total += acc[k];
    total = block_sum<BLOCK>(total);
    if (threadIdx.x == 0) partial[blockIdx.x] = (REAL)total;
}

extern "C" __global__ void __launch_bounds__(FINAL_BLOCK)
sum_final(const REAL *__restrict__ in, REAL *__restrict__ out, const REAL *__restrict__ partial)
{
    ACC acc = (ACC)0;
    for (int i = threadIdx.x; i < GRID; i += FINAL_BLOCK) acc += (ACC)partial[i];
    acc = block_sum<FINAL_BLOCK>(acc);
    if (threadIdx.x == 0) out[0] = (REAL)acc;
}
