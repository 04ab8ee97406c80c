// md_displace.cu - atoms that moved more than skin/2 (md_step.h): one block
// per chunk of CHUNK atoms, each thread taking every BLOCK-th.
// Parameters defined above: N, CHUNK, LIMIT2, BLOCK.

extern "C" __global__ void __launch_bounds__(BLOCK)
md_displace(const double *__restrict__ x, const double *__restrict__ x0, int *__restrict__ moved, double box)
{
    int count = 0;
    for (int a = threadIdx.x; a < CHUNK; a += BLOCK) {   // the same trip count in every thread
        const long long i = (long long)blockIdx.x * CHUNK + a;
        bool far = false;
        if (i < N) {
            double r2 = 0;
#pragma unroll
            for (int d = 0; d < 3; d++) {
                // rounded as the reference rounds, without contractions: counts are compared exactly
                double e = x[3 * i + d] - x0[3 * i + d];
                e = __dsub_rn(e, __dmul_rn(box, rint(e / box)));
                r2 = __dadd_rn(r2, __dmul_rn(e, e));
            }
            far = r2 > LIMIT2;
        }
        count += __syncthreads_count(far);
    }
    if (threadIdx.x == 0) moved[blockIdx.x] = count;
}
