// storage.cuh - the storage type of a generated CUDA kernel, its
// conversions to and from float (round to nearest even, through PTX so no
// header is needed) and the VEC-wide vector of it that one load moves.
// Defined by the generator above this text: one of STORAGE_F32,
// STORAGE_BF16, STORAGE_F16; STORAGE_BYTES; VEC.

#if defined(STORAGE_F32)
typedef float storage_t;
__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float from_float(float v) { return v; }
#elif defined(STORAGE_BF16)
typedef unsigned short storage_t;
__device__ __forceinline__ float to_float(unsigned short v) { return __uint_as_float((unsigned)v << 16); }
__device__ __forceinline__ unsigned short from_float(float v)
{
    unsigned short r;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(v));
    return r;
}
#elif defined(STORAGE_F16)
typedef unsigned short storage_t;
__device__ __forceinline__ float to_float(unsigned short v)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v));
    return f;
}
__device__ __forceinline__ unsigned short from_float(float v)
{
    unsigned short r;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(v));
    return r;
}
#else
#error "no STORAGE_ type defined"
#endif

// VEC consecutive elements, aligned to their size (up to 16 bytes): one load.
struct __align__(VEC * STORAGE_BYTES) vec_t {
    storage_t v[VEC];
};

__device__ __forceinline__ void unpack_vec(const vec_t &u, float f[VEC])
{
#pragma unroll
    for (int k = 0; k < VEC; ++k) f[k] = to_float(u.v[k]);
}

__device__ __forceinline__ void load_vec(const storage_t *p, float f[VEC])
{
    unpack_vec(*reinterpret_cast<const vec_t *>(p), f);
}

__device__ __forceinline__ vec_t pack_vec(const float f[VEC])
{
    vec_t u;
#pragma unroll
    for (int k = 0; k < VEC; ++k) u.v[k] = from_float(f[k]);
    return u;
}

__device__ __forceinline__ void store_vec(storage_t *p, const float f[VEC])
{
    *reinterpret_cast<vec_t *>(p) = pack_vec(f);
}
