// md_displace.cu - atoms that moved more than skin/2 (md_step.h), one thread per atom.
// Parameters defined above: N, LIMIT2, BLOCK.

extern "C" __global__ void md_zero_moved(const double *x, const double *x0, int *moved, double box)
{
    if (threadIdx.x == 0) *moved = 0;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
md_displace(const double *__restrict__ x, const double *__restrict__ x0, int *__restrict__ moved, double box)
{
    const long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;
    bool far = false;
    if (i < N) {
        double r2 = 0;
#pragma unroll
        for (int d = 0; d < 3; d++) {
            double e = x[3 * i + d] - x0[3 * i + d];
            // rounded as the reference rounds, without contractions: a count is compared exactly
            e = __dsub_rn(e, __dmul_rn(box, rint(e / box)));
            r2 = __dadd_rn(r2, __dmul_rn(e, e));
        }
        far = r2 > LIMIT2;
    }
    // one atomic per warp that has moved atoms
    const unsigned ballot = __ballot_sync(0xffffffffu, far);
    if (ballot && threadIdx.x % 32 == 0) atomicAdd(moved, __popc(ballot));
}
