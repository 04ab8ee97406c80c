// ljforce.cu - Lennard-Jones forces over a neighbour list (see ljforce.h).
// TPP threads share an atom: each takes every TPP-th listed neighbour, and
// the group adds its sums with warp shuffles; its first thread stores them.
//
// Parameters, defined by the generator above this text:
//   REAL          the data's type (float, double)
//   ACC           energy and virial sums (double, or float for precision=single)
//   N, M          atoms, list width
//   COLS          1: nbr[k*N + i] (transposed), 0: nbr[i*M + k]
//   TPP, BLOCK    threads per atom (dividing 32), threads per block
//   UNROLL        pair iterations unrolled
//   RC2, ESHIFT   the squared cut-off, the energy subtracted per pair

typedef long long index_t;

__device__ __forceinline__ void load_pos(const REAL *__restrict__ pos, index_t j, REAL &x, REAL &y, REAL &z)
{
#if REAL_IS_FLOAT
    const float4 p = __ldg(reinterpret_cast<const float4 *>(pos) + j);
    x = p.x;
    y = p.y;
    z = p.z;
#else
    x = __ldg(pos + 4 * j);
    y = __ldg(pos + 4 * j + 1);
    z = __ldg(pos + 4 * j + 2);
#endif
}

template <typename T>
__device__ __forceinline__ T group_sum(T v)
{
#pragma unroll
    for (int offset = TPP / 2; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
ljforce(const REAL *__restrict__ pos, const int *__restrict__ nbr, const int *__restrict__ count,
        REAL *__restrict__ force, double *__restrict__ ev, double box_arg)
{
    // Every thread of a warp reaches the shuffles: atoms past N count no pairs.
    const index_t t = (index_t)blockIdx.x * BLOCK + threadIdx.x;
    const index_t i = t / TPP;
    const int lane = (int)(t % TPP);
    const bool valid = i < N;
    const REAL box = (REAL)box_arg, inv_box = (REAL)1 / box;
    REAL xi = 0, yi = 0, zi = 0;
    int n = 0;
    if (valid) {
        load_pos(pos, i, xi, yi, zi);
        n = __ldg(count + i);
    }
    REAL fx = 0, fy = 0, fz = 0;
    ACC e = 0, w = 0;
#pragma unroll UNROLL
    for (int k = lane; k < n; k += TPP) {
        const index_t j = __ldg(nbr + (COLS ? (index_t)k * N + i : i * M + k));
        REAL xj, yj, zj;
        load_pos(pos, j, xj, yj, zj);
        REAL dx = xi - xj, dy = yi - yj, dz = zi - zj;
        dx -= box * rint(dx * inv_box);
        dy -= box * rint(dy * inv_box);
        dz -= box * rint(dz * inv_box);
        const REAL r2 = dx * dx + dy * dy + dz * dz;
        if (r2 < RC2) {
            const REAL ir2 = (REAL)1 / r2, ir6 = ir2 * ir2 * ir2;
            const REAL fr = (REAL)24 * ir6 * ((REAL)2 * ir6 - (REAL)1) * ir2;
            fx += fr * dx;
            fy += fr * dy;
            fz += fr * dz;
            e += (ACC)((REAL)4 * ir6 * (ir6 - (REAL)1) - ESHIFT);
            w += (ACC)(fr * r2);
        }
    }
    fx = group_sum(fx);
    fy = group_sum(fy);
    fz = group_sum(fz);
    e = group_sum(e);
    w = group_sum(w);
    if (valid && lane == 0) {
        force[3 * i] = fx;
        force[3 * i + 1] = fy;
        force[3 * i + 2] = fz;
        ev[2 * i] = 0.5 * (double)e;
        ev[2 * i + 1] = 0.5 * (double)w;
    }
}
