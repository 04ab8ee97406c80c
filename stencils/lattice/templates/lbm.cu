// lbm.cu - the grid of a CUDA lattice Boltzmann step: CPX consecutive cells
// per thread along x (with CPX > 1 a row segment, lbm_pull_row and
// lbm_store_row), CPT cells (or segments) per thread along y (BY rows
// apart), CPZ consecutive z planes per blockIdx.z, one after another (a
// plane's populations and flags that the next plane reads again are then
// still in L1). Above it the generator defines BX, BY, CPT, CPZ, CPX,
// MIN_BLOCKS (0: no occupancy request),
// LBM_TILE (1: the cell kinds come from a tile in shared memory, lbm_sk, of
// LBM_PLANES planes of LBM_TH x LBM_TW kinds, the block's cells and a
// neighbour on each side, a ring over z), the storage conversions,
// lbm_pull(), lbm_update(), lbm_store() and with CPX > 1 the row functions.

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
__device__ __forceinline__ void lbm_tile_load(const unsigned char *__restrict__ flags, int first, int last)
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

#if CPX > 1
#define LBM_PULL(px, py, pz, pin) lbm_pull_row(g, flags, px, py, pz, (int)threadIdx.x & 31, pin)
#define LBM_STORE(pin, pout) lbm_store_row(go, (pin)[0].c, pout)
#else
#define LBM_PULL(px, py, pz, pin) lbm_pull(g, flags, px, py, pz, &(pin)[0])
#define LBM_STORE(pin, pout) lbm_store(go, (pin)[0].c, &(pout)[0])
#endif

extern "C" __global__ void LBM_BOUNDS
tess_lbm(const STORE *__restrict__ g, const unsigned char *__restrict__ flags, STORE *__restrict__ go)
{
    const int x = (blockIdx.x * BX + threadIdx.x) * CPX;
#if !LBM_TILE && CPX == 1
    if (x >= NX) return;
#endif
    // with CPX > 1 a thread past the grid's edge still loads (the last
    // segment): its lane's shuffles are the whole warp's
    const int xl = CPX > 1 && x >= NX ? NX - CPX : x;
    const int y0 = blockIdx.y * BY * CPT + threadIdx.y, z0 = blockIdx.z * CPZ;
    for (int z = z0; z < z0 + CPZ && z < NZ; z++) {
        // every cell's loads first, so that a thread has CPT x CPX cells' loads in flight
        lbm_pulled in[CPT][CPX];
        if (CPX > 1 || x < NX) {
#pragma unroll
            for (int k = 0; k < CPT; k++)
                if (y0 + k * BY < NY) LBM_PULL(xl, y0 + k * BY, z, in[k]);
        }
#if LBM_TILE
        // while the populations' loads are in flight, the whole block (threads
        // past the grid's edge too) fills the tile; then the kinds come from it
        lbm_tile_load(flags, z == z0 ? z - LBM_HALO_Z : z + LBM_HALO_Z, z + LBM_HALO_Z);
        if (x >= NX) continue;
#pragma unroll
        for (int k = 0; k < CPT; k++)
            if (y0 + k * BY < NY) lbm_pull_kinds(x, y0 + k * BY, z, &in[k][0]);
#else
        if (x >= NX) continue;   // CPX > 1: a thread past the edge only loaded
#endif
#pragma unroll
        for (int k = 0; k < CPT; k++)
            if (y0 + k * BY < NY) {
                lbm_result out[CPX];
#pragma unroll
                for (int j = 0; j < CPX; j++) lbm_update(g, &in[k][j], &out[j]);
                LBM_STORE(in[k], out);
            }
    }
}
