// gemm_split.cuh - K split over blocks (the mma and skinny paths): block
// (tile, slice) stores its f32 partial sums of D in the module's workspace,
// and the last block of a tile to arrive (a counter per tile, after a fence)
// adds the KSPLIT partials in slice order, so the result does not depend on
// the blocks' timing, applies alpha, C and the epilogue once (store_d), and
// resets the counter for the next launch. The workspace belongs to the
// compiled module: launches of one module must not overlap. Defined above:
// KSPLIT, TILES (tiles of D, one counter each), THREADS; and where only some
// of the block's threads store partials (the wgmma kernel's consumers),
// SPLIT_THREADS of them numbered SPLIT_TID, synchronized by split_sync().

// The partials' rows: GM, or SPLIT_ROWS (a convolution in windows: the tiles' rows, row r of the partials being
// row r % BM of block tile r / BM, whose row of D window_row gives).
#ifndef SPLIT_ROWS
#define SPLIT_ROWS GM
#endif
#if CONV_WINDOW
#define split_row_of_d(r) window_row((unsigned)((r) / BM), (int)((r) % BM))
#else
#define split_row_of_d(r) (r)
#endif

#ifndef SPLIT_THREADS
#define SPLIT_THREADS THREADS
#define SPLIT_TID threadIdx.x
#define split_sync() __syncthreads()
#endif

#if KSPLIT > 1
__device__ float split_partial[KSPLIT * SPLIT_ROWS * GN];   // [slice][row][n]
__device__ unsigned split_arrived[TILES] = {0};     // slices done per tile

// Slice `slice`'s partial sum of D(m, n) (m: a row of the partials), when (m, n) is inside them.
__device__ __forceinline__ void split_store(int slice, long long m, long long n, float v)
{
    if (m < SPLIT_ROWS && n < GN) split_partial[(slice * SPLIT_ROWS + m) * GN + n] = v;
}

// Whether this block is the last of its tile to finish (every thread gets the answer).
__device__ __forceinline__ bool split_arrive_last(int tile)
{
    __shared__ unsigned before;
    asm volatile("membar.gl;\n" ::: "memory");   // this thread's partials are visible before the count
    split_sync();
    if (SPLIT_TID == 0)
        asm volatile("atom.global.add.u32 %0, [%1], 1;\n" : "=r"(before) : "l"(split_arrived + tile) : "memory");
    split_sync();
    asm volatile("membar.gl;\n" ::: "memory");
    return before == KSPLIT - 1;
}

// Elements whose KSPLIT partials a thread loads before adding any: 32 loads in flight, not one L2 round trip each.
#define SPLIT_BATCH (KSPLIT >= 32 ? 1 : 32 / KSPLIT)

// The last block of a tile: D over rows m0 .. m0 + rows - 1, columns n0 .. n0 + cols - 1 from the partials.
__device__ __forceinline__ void split_finish(out_t *D, const out_t *Cm, const out_t *bias, int tile, long long m0,
                                             long long n0, int rows, int cols)
{
    const int count = rows * cols;
    for (int e0 = SPLIT_TID; e0 < count; e0 += SPLIT_BATCH * SPLIT_THREADS) {
        float part[SPLIT_BATCH][KSPLIT];
#pragma unroll
        for (int b = 0; b < SPLIT_BATCH; ++b) {
            const int e = e0 + b * SPLIT_THREADS;
            const long long m = m0 + e / cols, n = n0 + e % cols;
            const bool inside = e < count && m < SPLIT_ROWS && n < GN;
#pragma unroll
            for (int s = 0; s < KSPLIT; ++s) {
                part[b][s] = 0;
                if (inside)   // from L2, where the other blocks wrote it
                    asm volatile("ld.global.cg.f32 %0, [%1];\n"
                                 : "=f"(part[b][s])
                                 : "l"(split_partial + (s * SPLIT_ROWS + m) * GN + n));
            }
        }
#pragma unroll
        for (int b = 0; b < SPLIT_BATCH; ++b) {
            const int e = e0 + b * SPLIT_THREADS;
            float sum = 0;
#pragma unroll
            for (int s = 0; s < KSPLIT; ++s) sum += part[b][s];   // in slice order
            if (e < count) store_d(D, Cm, bias, split_row_of_d(m0 + e / cols), n0 + e % cols, sum);
        }
    }
    if (SPLIT_TID == 0) split_arrived[tile] = 0;
}
#endif
