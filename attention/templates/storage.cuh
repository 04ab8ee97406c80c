// storage.cuh - the storage type of a generated CUDA attention kernel and
// its conversions, through PTX so that no header is needed: to_float and
// from_float (round to nearest even), and pack2, two floats rounded into
// the 32-bit register of a tensor-core fragment (the first in the low half).
// Defined above this text: one of STORAGE_F32, STORAGE_BF16, STORAGE_F16.

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
__device__ __forceinline__ unsigned pack2(float lo, float hi)
{
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
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
__device__ __forceinline__ unsigned pack2(float lo, float hi)
{
    unsigned r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
#else
#error "no STORAGE_ type defined"
#endif

#define NEG_INF __int_as_float(0xff800000u)
#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f
