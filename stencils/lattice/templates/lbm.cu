// lbm.cu - the grid of a CUDA lattice Boltzmann step: one thread per cell
// along x, CPT cells per thread along y (BY rows apart), CPZ consecutive z
// planes per blockIdx.z, one after another (a plane's populations and flags
// that the next plane reads again are then still in L1). Above it the
// generator defines BX, BY, CPT, CPZ, MIN_BLOCKS (0: no occupancy request),
// LBM_TILE (1: the cell kinds come from a tile in shared memory, lbm_sk, of
// LBM_PLANES planes of LBM_TH x LBM_TW kinds, the block's cells and a
// neighbour on each side, a ring over z), the storage conversions,
// lbm_pull() and lbm_update().

#if MIN_BLOCKS > 0
#define LBM_BOUNDS __launch_bounds__(BX * BY, MIN_BLOCKS)
#else
#define LBM_BOUNDS __launch_bounds__(BX * BY)
#endif

#if LBM_TILE
// Loads the kinds of planes first..last (unwrapped: -1 and NZ are the
// periodic neighbours) into their ring slots, each read once from global
// memory for the whole block instead of once per pulling neighbour. A kind
// other than 0..3 acts as a wall (1) in every rule, so it is kept as one.
__device__ __forceinline__ void lbm_tile_load(const int *__restrict__ flags, int first, int last)
{
    __syncthreads();   // every pull from the slots overwritten here is done
    const int xb = (int)blockIdx.x * BX - 1, yb = (int)blockIdx.y * (BY * CPT) - 1;
    for (int p = first; p <= last; p++) {
        const int zz = (p % NZ + NZ) % NZ;
        for (int e = (int)(threadIdx.y * BX + threadIdx.x); e < LBM_TH * LBM_TW; e += BX * BY) {
            const int ly = e / LBM_TW, lx = e - ly * LBM_TW;
            int gx = xb + lx, gy = yb + ly;
            gx = gx < 0 ? gx + NX : gx % NX;
            gy = gy < 0 ? gy + NY : gy % NY;
            const int k = flags[((lbm_index)zz * NY + gy) * NX + gx];
            lbm_sk[LBM_SLOT(p)][ly][lx] = (unsigned char)((unsigned)k > 3u ? 1 : k);
        }
    }
    __syncthreads();
}
#endif

extern "C" __global__ void LBM_BOUNDS
tess_lbm(const STORE *__restrict__ g, const int *__restrict__ flags, STORE *__restrict__ go)
{
    const int x = blockIdx.x * BX + threadIdx.x;
#if !LBM_TILE
    if (x >= NX) return;
#endif
    const int y0 = blockIdx.y * BY * CPT + threadIdx.y, z0 = blockIdx.z * CPZ;
    for (int z = z0; z < z0 + CPZ && z < NZ; z++) {
        // every cell's loads first, so that a thread has CPT cells' loads in flight
        lbm_pulled in[CPT];
        if (x < NX) {
#pragma unroll
            for (int k = 0; k < CPT; k++)
                if (y0 + k * BY < NY) lbm_pull(g, flags, x, y0 + k * BY, z, &in[k]);
        }
#if LBM_TILE
        // while the populations' loads are in flight, the whole block (threads
        // past the grid's edge too) fills the tile; then the kinds come from it
        lbm_tile_load(flags, z == z0 ? z - LBM_HALO_Z : z + LBM_HALO_Z, z + LBM_HALO_Z);
        if (x >= NX) continue;
#pragma unroll
        for (int k = 0; k < CPT; k++)
            if (y0 + k * BY < NY) lbm_pull_kinds(x, y0 + k * BY, z, &in[k]);
#endif
#pragma unroll
        for (int k = 0; k < CPT; k++)
            if (y0 + k * BY < NY) lbm_update(g, go, &in[k]);
    }
}
