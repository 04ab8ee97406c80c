// lbm.cu - the grid of a CUDA lattice Boltzmann step: one thread per cell
// along x, CPT cells per thread along y (BY rows apart), one z plane per
// blockIdx.z. Above it the generator defines BX, BY, CPT, the storage
// conversions and lbm_cell().

extern "C" __global__ void __launch_bounds__(BX * BY)
tess_lbm(const STORE *__restrict__ g, const int *__restrict__ flags, STORE *__restrict__ go)
{
    const int x = blockIdx.x * BX + threadIdx.x;
    if (x >= NX) return;
    const int z = blockIdx.z;
    const int y0 = blockIdx.y * BY * CPT + threadIdx.y;
#pragma unroll
    for (int k = 0; k < CPT; k++) {
        const int y = y0 + k * BY;
        if (y < NY) lbm_cell(g, flags, go, x, y, z);
    }
}
