// md_verlet.cu - a half of velocity Verlet (md_step.h): the first one thread per
// atom, the second one block per chunk of atoms.
// Parameters defined above: N, REAL, FIRST, LANGEVIN, BLOCK, CHUNK.

#if FIRST
extern "C" __global__ void __launch_bounds__(BLOCK)
md_verlet(double *__restrict__ x, double *__restrict__ v, const REAL *__restrict__ f, REAL *__restrict__ pos,
          double dt, double box
#if LANGEVIN
          , double c1, double c2, long long seed, long long step
#endif
          )
{
    const long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;
    if (i >= N) return;
    const double h = 0.5 * dt;
    REAL packed[4];
#pragma unroll
    for (int d = 0; d < 3; d++) {
        const long long e = 3 * i + d;
        double vi = v[e] + h * (double)f[e], xi = x[e];
#if LANGEVIN
        xi += h * vi;
        vi = c1 * vi + c2 * md_noise((unsigned long long)seed, (unsigned long long)step, (unsigned long long)e);
        xi += h * vi;
#else
        xi += dt * vi;
#endif
        xi -= box * floor(xi / box);
        v[e] = vi;
        x[e] = xi;
        packed[d] = (REAL)xi;
    }
    packed[3] = 0;
#pragma unroll
    for (int d = 0; d < 4; d++) pos[4 * i + d] = packed[d];
}
#else
__device__ __forceinline__ double warp_sum(double s)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    return s;
}

// One block per chunk of CHUNK atoms, each thread taking every BLOCK-th.
extern "C" __global__ void __launch_bounds__(BLOCK)
md_verlet(double *__restrict__ v, const REAL *__restrict__ f, const double *__restrict__ ev,
          double *__restrict__ sums, double dt)
{
    __shared__ double part[3][BLOCK / 32];
    const double h = 0.5 * dt;
    double term[3] = {0, 0, 0};
    for (int a = threadIdx.x; a < CHUNK; a += BLOCK) {
        const long long i = (long long)blockIdx.x * CHUNK + a;
        if (i >= N) break;
#pragma unroll
        for (int d = 0; d < 3; d++) {
            const double vi = v[3 * i + d] + h * (double)f[3 * i + d];
            v[3 * i + d] = vi;
            term[0] += vi * vi;
        }
        term[1] += ev[2 * i];
        term[2] += ev[2 * i + 1];
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
    for (int q = 0; q < 3; q++) {
        term[q] = warp_sum(term[q]);
        if (lane == 0) part[q][warp] = term[q];
    }
    __syncthreads();
    if (warp == 0) {
#pragma unroll
        for (int q = 0; q < 3; q++) {
            double s = lane < BLOCK / 32 ? part[q][lane] : 0;
            s = warp_sum(s);
            if (lane == 0) sums[3 * blockIdx.x + q] = s;
        }
    }
}
#endif
