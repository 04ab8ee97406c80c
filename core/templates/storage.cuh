// storage.cuh - the storage type of a generated CUDA kernel and its
// conversions to and from float (round to nearest even, through PTX so that
// no header is needed). The families' own storage.cuh follow it.
// Defined by the generator above this text: one of STORAGE_F32,
// STORAGE_BF16, STORAGE_F16.

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
