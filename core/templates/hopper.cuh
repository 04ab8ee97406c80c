// hopper.cuh - the sm_90a primitives that the warpgroup-MMA kernels share:
// shared-memory addresses, wgmma operand descriptors for tiles swizzled in
// 128-, 64- or 32-byte atoms, mbarriers, TMA loads of 2D boxes through a
// tensor map, and the wgmma fences. The MMA instructions themselves are
// generated for their shapes (core/wgmma_emit.c).

struct __align__(64) tensor_map { unsigned long long opaque[16]; };   // a CUtensorMap

__device__ __forceinline__ unsigned smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

// The descriptor of an operand at shared address addr (its atoms 1024-byte
// aligned): lbo and sbo in bytes (K-major: sbo between groups of 8 rows, lbo
// unused; MN-major: lbo between atoms along M or N, sbo between groups of 8
// rows along K), swizzle_mode 1 for 128-byte atoms, 2 for 64, 3 for 32.
__device__ __forceinline__ unsigned long long wgmma_desc(unsigned addr, unsigned lbo, unsigned sbo,
                                                         unsigned swizzle_mode)
{
    return (unsigned long long)((addr & 0x3ffff) >> 4) | (unsigned long long)((lbo >> 4) & 0x3fff) << 16 |
           (unsigned long long)((sbo >> 4) & 0x3fff) << 32 | (unsigned long long)swizzle_mode << 62;
}

__device__ __forceinline__ void bar_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count));
}

// Makes the initialized barriers visible to the async proxy (TMA) and the other threads' waits.
__device__ __forceinline__ void bar_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }

__device__ __forceinline__ void bar_wait(unsigned bar, unsigned parity)
{
    unsigned done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
}

__device__ __forceinline__ void bar_arrive(unsigned bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

// Arrives on bar and tells it to wait for `bytes` more of asynchronous copies.
__device__ __forceinline__ void bar_expect_bytes(unsigned bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

// The box of a 2D tensor map whose first element is (x, y), fastest dimension first, into shared dst.
__device__ __forceinline__ void tma_load(unsigned dst, const tensor_map *map, int x, int y, unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];"
                 ::"r"(dst), "l"((unsigned long long)map), "r"(x), "r"(y), "r"(bar)
                 : "memory");
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory"); }
