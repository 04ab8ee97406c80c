// storage.cuh - after core/templates/storage.cuh in a generated CUDA
// attention kernel: pack2, two floats rounded into the 32-bit register of a
// tensor-core fragment (the first in the low half), and constants.

#if defined(STORAGE_BF16)
__device__ __forceinline__ unsigned pack2(float lo, float hi)
{
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
#elif defined(STORAGE_F16)
__device__ __forceinline__ unsigned pack2(float lo, float hi)
{
    unsigned r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
#endif

#define NEG_INF __int_as_float(0xff800000u)
#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f
