// md_bin.cu - atoms into cells (md_step.h) in four launches: zero the
// counts, count (each atom's rank in its cell from an atomic counter), scan
// the counts into starts (one block), place each atom.
// Parameters defined above: N, S, NCELLS, BLOCK.

extern "C" __global__ void __launch_bounds__(BLOCK)
md_bin_zero(const double *__restrict__ x, int *__restrict__ cells, int *__restrict__ rank, double box)
{
    const long long c = (long long)blockIdx.x * BLOCK + threadIdx.x;
    if (c <= NCELLS) cells[c] = 0;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
md_bin_count(const double *__restrict__ x, int *__restrict__ cells, int *__restrict__ rank, double box)
{
    const long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;
    if (i >= N) return;
    const long long c = md_cell_of(x[3 * i], x[3 * i + 1], x[3 * i + 2], box);
    rank[i] = atomicAdd(cells + c + 1, 1);
}

// An inclusive scan of the NCELLS counts at cells + 1, in place: each of
// 1024 threads sums a stretch, the block scans the sums, each thread
// rewrites its stretch.
extern "C" __global__ void __launch_bounds__(1024)
md_bin_scan(const double *__restrict__ x, int *__restrict__ cells, int *__restrict__ rank, double box)
{
    __shared__ int warp_total[32];
    const long long per = (NCELLS + 1023) / 1024, lo = threadIdx.x * per;
    const long long hi = lo + per < NCELLS ? lo + per : NCELLS;
    int sum = 0;
    for (long long c = lo; c < hi; c++) sum += cells[c + 1];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int incl = sum;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const int y = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o) incl += y;
    }
    if (lane == 31) warp_total[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        int w = warp_total[lane];
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const int y = __shfl_up_sync(0xffffffffu, w, o);
            if (lane >= o) w += y;
        }
        warp_total[lane] = w;
    }
    __syncthreads();
    int run = incl - sum + (warp ? warp_total[warp - 1] : 0);
    for (long long c = lo; c < hi; c++) {
        run += cells[c + 1];
        cells[c + 1] = run;
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
md_bin_place(const double *__restrict__ x, int *__restrict__ cells, int *__restrict__ rank, double box)
{
    const long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;
    if (i >= N) return;
    const long long c = md_cell_of(x[3 * i], x[3 * i + 1], x[3 * i + 2], box);
    cells[NCELLS + 1 + cells[c] + rank[i]] = (int)i;
}
