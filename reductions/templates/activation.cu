// activation.cu - an elementwise activation over N elements: y = f(x), or
// y = f(gate, up) for the gated form (ACT_SWIGLU). Thread t of block b
// handles vectors b * BLOCK * ITEMS + t + k * BLOCK, k < ITEMS (VEC elements
// each: coalesced 16-byte loads at most). All ITEMS loads are issued before
// the first result is computed (predicated, not behind a branch each), so
// they are in flight together however long the activation's arithmetic;
// block 0 also handles the N % VEC elements after the last whole vector.
//
// Defined by the generator above this text, besides storage.cuh's and
// activation.h's macros: N, BLOCK, ITEMS.

typedef long long index_t;
#define NV (N / VEC)

#if ACT_SWIGLU
#define APPLY(k) f[k] = activate2(f[k], g[k])
#else
#define APPLY(k) f[k] = activate(f[k])
#endif

extern "C" __global__ void __launch_bounds__(BLOCK)
#if ACT_GELU
gelu_elementwise(const storage_t *__restrict__ x, storage_t *__restrict__ y)
#elif ACT_GELU_TANH
gelu_tanh_elementwise(const storage_t *__restrict__ x, storage_t *__restrict__ y)
#elif ACT_SILU
silu_elementwise(const storage_t *__restrict__ x, storage_t *__restrict__ y)
#else
swiglu_elementwise(const storage_t *__restrict__ x, const storage_t *__restrict__ up, storage_t *__restrict__ y)
#endif
{
    const index_t first = (index_t)blockIdx.x * BLOCK * ITEMS + threadIdx.x;
    float f[VEC];
#if ACT_SWIGLU
    float g[VEC];
    vec_t held_up[ITEMS];
#endif
    vec_t held[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const index_t v = first + (index_t)i * BLOCK;
        if (v < NV) {
            held[i] = *reinterpret_cast<const vec_t *>(x + v * VEC);
#if ACT_SWIGLU
            held_up[i] = *reinterpret_cast<const vec_t *>(up + v * VEC);
#endif
        }
    }
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const index_t v = first + (index_t)i * BLOCK;
        if (v < NV) {
            unpack_vec(held[i], f);
#if ACT_SWIGLU
            unpack_vec(held_up[i], g);
#endif
#pragma unroll
            for (int k = 0; k < VEC; ++k) APPLY(k);
            store_vec(y + v * VEC, f);
        }
    }
    if (N % VEC != 0 && blockIdx.x == 0 && threadIdx.x < N % VEC) {
        const index_t e = (index_t)NV * VEC + threadIdx.x;
        f[0] = to_float(x[e]);
#if ACT_SWIGLU
        g[0] = to_float(up[e]);
#endif
        APPLY(0);
        y[e] = from_float(f[0]);
    }
}
