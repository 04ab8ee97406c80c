// heat3d.cu - one sweep of the 3D 7-point heat stencil:
//     out = in + ALPHA * (sum of the 6 neighbours - 6 * in)   on the interior,
//     out = in                                                on the boundary.
//
// Parameters, defined by the generator above this text:
//   REAL, VEC, REAL_V   element type, vector width, the VEC-wide vector type
//   NZ, NY, NX          grid extents, x fastest;  ALPHA  the diffusion number
//   BLOCK_X/Y/Z         threads per block in x, y, z
//   ITEMS_X             vectors per thread in x, BLOCK_X*VEC points apart, so
//                       each warp's access to one item is contiguous
//   CHUNK_Z             planes per thread. Above 1 the thread streams along z
//                       (2.5D): the values of planes z-1, z, z+1 at its own
//                       points stay in registers as a queue, so each step reads
//                       one new plane; x and y neighbours come through the cache
//   UNROLL              unroll factor of the z loop (lets loads of later planes
//                       start before earlier results are stored)
//   MIN_BLOCKS          resident blocks per SM promised to the register
//                       allocator (0: no promise)
//   STREAMING_STORE     1: store with the evict-first hint, keeping L2 for inputs

#define THREADS (BLOCK_X * BLOCK_Y * BLOCK_Z)
#if MIN_BLOCKS > 0
#define LAUNCH_BOUNDS __launch_bounds__(THREADS, MIN_BLOCKS)
#else
#define LAUNCH_BOUNDS __launch_bounds__(THREADS)
#endif

// #pragma unroll with a macro argument, expanded first.
#define PRAGMA_(text) _Pragma(#text)
#define UNROLL_BY(n) PRAGMA_(unroll n)

typedef long long index_t;
// Linear index of point (z, y, x).
#define AT(z, y, x) (((index_t)(z) * NY + (y)) * (index_t)NX + (x))

// VEC consecutive values from p (aligned to VEC elements), read-only path.
__device__ __forceinline__ void load_vec(REAL (&v)[VEC], const REAL *__restrict__ p)
{
#if VEC == 1
    v[0] = __ldg(p);
#else
    const REAL_V t = __ldg(reinterpret_cast<const REAL_V *>(p));
    v[0] = t.x;
    v[1] = t.y;
#if VEC == 4
    v[2] = t.z;
    v[3] = t.w;
#endif
#endif
}

__device__ __forceinline__ void store_vec(REAL *__restrict__ p, const REAL (&v)[VEC])
{
#if VEC == 1
    const REAL_V t = v[0];
#elif VEC == 2
    const REAL_V t = {v[0], v[1]};
#else
    const REAL_V t = {v[0], v[1], v[2], v[3]};
#endif
    // The intrinsics keep the store one instruction wide (a plain assignment
    // of the vector may be split into scalar stores).
#if STREAMING_STORE
    __stcs(reinterpret_cast<REAL_V *>(p), t);
#else
    __stwb(reinterpret_cast<REAL_V *>(p), t);
#endif
}

extern "C" __global__ void LAUNCH_BOUNDS
heat3d(const REAL *__restrict__ in, REAL *__restrict__ out)
{
    const int x0 = (blockIdx.x * (BLOCK_X * ITEMS_X) + threadIdx.x) * VEC;
    const int y = blockIdx.y * BLOCK_Y + threadIdx.y;
    const int z0 = (blockIdx.z * BLOCK_Z + threadIdx.z) * CHUNK_Z;
    if (y >= NY || z0 >= NZ) return;

    // Neighbour rows, clamped at the boundary (where the result is a copy).
    const int ym = max(y - 1, 0), yp = min(y + 1, NY - 1);
    const bool y_inner = y > 0 && y < NY - 1;

    // The register queue: planes z-1, z and z+1 at this thread's points.
    REAL below[ITEMS_X][VEC], here[ITEMS_X][VEC], above[ITEMS_X][VEC];
#pragma unroll
    for (int k = 0; k < ITEMS_X; ++k) {
        const int x = x0 + k * BLOCK_X * VEC;
        if (x < NX) {
            load_vec(below[k], in + AT(max(z0 - 1, 0), y, x));
            load_vec(here[k], in + AT(z0, y, x));
        }
    }

    UNROLL_BY(UNROLL)
    for (int s = 0; s < CHUNK_Z; ++s) {
        const int z = z0 + s;
        if (NZ % CHUNK_Z != 0 && z >= NZ) break;
        const int zp = min(z + 1, NZ - 1);
        const bool yz_inner = y_inner && z > 0 && z < NZ - 1;
#pragma unroll
        for (int k = 0; k < ITEMS_X; ++k) {
            const int x = x0 + k * BLOCK_X * VEC;
            if (x >= NX) continue;
            REAL south[VEC], north[VEC], res[VEC];
            load_vec(above[k], in + AT(zp, y, x));
            load_vec(south, in + AT(z, ym, x));
            load_vec(north, in + AT(z, yp, x));
            const REAL west = __ldg(in + AT(z, y, max(x - 1, 0)));
            const REAL east = __ldg(in + AT(z, y, min(x + VEC, NX - 1)));
#pragma unroll
            for (int v = 0; v < VEC; ++v) {
                const REAL c = here[k][v];
                const REAL l = v == 0 ? west : here[k][v > 0 ? v - 1 : 0];
                const REAL r = v == VEC - 1 ? east : here[k][v < VEC - 1 ? v + 1 : 0];
                const REAL lap = (l + r) + (south[v] + north[v]) + (below[k][v] + above[k][v]) -
                                 (REAL)6 * c;
                const bool inner = yz_inner && x + v > 0 && x + v < NX - 1;
                res[v] = inner ? c + (REAL)ALPHA * lap : c;
            }
            store_vec(out + AT(z, y, x), res);
#pragma unroll
            for (int v = 0; v < VEC; ++v) {
                below[k][v] = here[k][v];
                here[k][v] = above[k][v];
            }
        }
    }
}
