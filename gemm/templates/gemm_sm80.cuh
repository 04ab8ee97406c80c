// gemm_sm80.cuh - the sm_80 instructions the mma and skinny paths share:
// cp.async of 16 bytes into shared memory, and one mma.sync m16n8k16
// tensor-core product of 16-bit inputs (IN_BF16, else f16) accumulated in
// f32, the fragments as the PTX ISA lays them out: a[4] of A's 16 x 16
// (rows g and g + 8 for the lane's group g = lane / 4, columns 2t, 2t + 1
// and 2t + 8, 2t + 9 for t = lane % 4), b[2] of B's 16 x 8 (rows 2t, 2t + 1
// and 2t + 8, 2t + 9 of column g), c[4] of D's 16 x 8 (rows g, g + 8,
// columns 2t, 2t + 1).

__device__ __forceinline__ unsigned smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

// 16 bytes from src to dst (shared), or 16 zeros when not valid.
__device__ __forceinline__ void cp_async16(void *dst, const void *src, bool valid)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
                 "r"(valid ? 16 : 0));
}

__device__ __forceinline__ void mma16816(float c[4], const unsigned a[4], const unsigned b[2])
{
#if IN_BF16
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
#else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
#endif
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
