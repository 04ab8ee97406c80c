// lbm.cu - the grid of a CUDA lattice Boltzmann step: one thread per cell
// along x, CPT cells per thread along y (BY rows apart), CPZ consecutive z
// planes per blockIdx.z, one after another (a plane's populations and flags
// that the next plane reads again are then still in L1). Above it the
// generator defines BX, BY, CPT, CPZ, MIN_BLOCKS (0: no occupancy request),
// the storage conversions, lbm_pull() and lbm_update().

#if MIN_BLOCKS > 0
#define LBM_BOUNDS __launch_bounds__(BX * BY, MIN_BLOCKS)
#else
#define LBM_BOUNDS __launch_bounds__(BX * BY)
#endif

extern "C" __global__ void LBM_BOUNDS
tess_lbm(const STORE *__restrict__ g, const int *__restrict__ flags, STORE *__restrict__ go)
{
    const int x = blockIdx.x * BX + threadIdx.x;
    if (x >= NX) return;
    const int y0 = blockIdx.y * BY * CPT + threadIdx.y, z0 = blockIdx.z * CPZ;
    for (int z = z0; z < z0 + CPZ && z < NZ; z++) {
        // every cell's loads first, so that a thread has CPT cells' loads in flight
        lbm_pulled in[CPT];
#pragma unroll
        for (int k = 0; k < CPT; k++)
            if (y0 + k * BY < NY) lbm_pull(g, flags, x, y0 + k * BY, z, &in[k]);
#pragma unroll
        for (int k = 0; k < CPT; k++)
            if (y0 + k * BY < NY) lbm_update(g, go, &in[k]);
    }
}
