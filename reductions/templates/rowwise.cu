// rowwise.cu - one row-wise operator over R rows of C elements: softmax,
// log_softmax, cross-entropy (a loss and a log-sum-exp per row, from the
// row's label), layernorm, rmsnorm, or add_rmsnorm (h = x + residual
// written as stored, then the rmsnorm of h). A block holds RPB rows, TPR threads each; thread t
// of a row owns its vectors t, t + TPR, t + 2 TPR, ... (VEC elements each,
// one 16-byte load at most), ITEMS of them. A row is read from memory once
// and written once; the passes after the first read it from where CACHE
// keeps it:
//   CACHE_REGISTERS  ITEMS vectors per thread, as stored (bf16 and f16
//                    take half the registers floats would)
//   CACHE_SHARED     the block's rows in dynamic shared memory, as stored
//                    (a thread reads back only what it wrote: no barrier),
//                    or with BULK loaded there by bulk copies (sm_90
//                    cp.async.bulk, completion counted on an mbarrier):
//                    a few instructions put the whole slice in flight,
//                    and with ROW_LOOP > 1 the next row group's slice is
//                    copied into a second buffer while this one is
//                    combined and written
//   CACHE_GLOBAL     read again from memory (hits in L2 for rows in flight)
// Statistics are summed in f32 over a thread's elements, then over the row's
// threads: shuffles within a warp, then one slot per warp in shared memory.
// With CLUSTER > 1 (sm_90) a row is cut into CLUSTER slices, one per block
// of a thread-block cluster, and the blocks' partial statistics are
// combined through distributed shared memory: long rows get CLUSTER times
// the blocks, each holding a slice in registers or shared memory. Each
// combination has slots of its own, so it costs one cluster barrier; the
// last one's readers are waited for only before the block exits, after its
// writes (a block's shared memory must outlive the remote reads of it).
//
// Defined by the generator above this text, besides storage.cuh's macros:
//   OP_SOFTMAX, OP_LOG_SOFTMAX, OP_CROSS_ENTROPY, OP_LAYERNORM, OP_RMSNORM,
//   OP_ADD_RMSNORM        the operator (one of them is 1)
//   R, C                  rows, row length (C a multiple of VEC)
//   TPR, RPB, ITEMS       threads per row, rows per block, vectors per thread
//   CLUSTER               blocks sharing a row (1: none)
//   CACHE, UNROLL         where the row stays; unroll of the passes that read it
//   ONLINE                softmax: max and sum in one pass, the sum rescaled
//                         when the max grows (two passes over the row, not three)
//   KEEP_EXP              softmax: the exponentials of the sum's pass kept
//                         in registers as floats for the output's (one exp
//                         per element), wherever the row is kept; with
//                         ONLINE each thread's against its own max, the
//                         row's (max, sum) then combined once and the
//                         output rescaled (one combination, not two)
//   HOLD_WEIGHTS          the norms: the weight (and bias) vectors of the
//                         thread's columns loaded before the first row's
//                         statistics and kept for every row group, so the
//                         write pass waits for no load from memory: 1 in
//                         registers, 2 in dynamic shared memory after the
//                         row buffers (each thread reads back what it wrote)
//   ROW_LOOP              row groups a block takes one after another (1:
//                         one); the next group's slice is loaded into
//                         registers while the current one is combined and
//                         written, so loads stay in flight across the
//                         barriers (the row in registers, or in shared
//                         memory with BULK; softmax, log_softmax,
//                         layernorm, rmsnorm)
//   BULK                  the row's slice copied into shared memory by bulk
//                         copies (CACHE_SHARED; not add_rmsnorm)
//   BULK_STORE            with BULK, the outputs written over the slice in
//                         shared memory and copied out by bulk copies (not
//                         cross-entropy, whose outputs are two per row)
//   EPS                   the norms' epsilon
// Shortcuts, offered only under an error budget:
//   FAST_EXP 1            __expf instead of expf
//   MAX_SUB 0             softmax without subtracting the row's max
//                         (exp overflows for logits above ~88: unsafe)
//   FAST_RSQRT 1          rsqrtf instead of 1 / sqrtf

#define CACHE_REGISTERS 0
#define CACHE_SHARED 1
#define CACHE_GLOBAL 2

#define NV (C / VEC)                   // vectors per row
#define NVS (NV / CLUSTER)             // vectors of a block's slice of the row
#define WPR (TPR > 32 ? TPR / 32 : 1)  // warps per row
#define NEG_INF __int_as_float(0xff800000u)

#define PRAGMA_(text) _Pragma(#text)
#define UNROLL_BY(n) PRAGMA_(unroll n)
#if CACHE == CACHE_REGISTERS || KEEP_EXP || HOLD_WEIGHTS == 1
#define PASS_UNROLL UNROLL_BY(ITEMS)   // held[i], ex[i], w_held[i] must stay in registers
#else
#define PASS_UNROLL UNROLL_BY(UNROLL)
#endif

#define SOFTMAX_KIND (OP_SOFTMAX || OP_LOG_SOFTMAX || OP_CROSS_ENTROPY)
#if ROW_LOOP > 1 && ((CACHE != CACHE_REGISTERS && !BULK) || OP_CROSS_ENTROPY || OP_ADD_RMSNORM)
#error "ROW_LOOP needs the row in registers or bulk copies, and neither cross-entropy nor add_rmsnorm"
#endif
#if BULK && (CACHE != CACHE_SHARED || OP_ADD_RMSNORM || (C / CLUSTER * STORAGE_BYTES) % 16 != 0)
#error "BULK needs the row in shared memory, slices of a multiple of 16 bytes, and not add_rmsnorm"
#endif
#if BULK_STORE && (!BULK || OP_CROSS_ENTROPY)
#error "BULK_STORE needs BULK, and not cross-entropy"
#endif
#define REG_LOOP (ROW_LOOP > 1 && CACHE == CACHE_REGISTERS)   // the next slice in registers
#define NBUF (ROW_LOOP > 1 && BULK ? 2 : 1)                    // shared memory buffers of row groups
#if KEEP_EXP && !(OP_SOFTMAX && MAX_SUB)
#error "KEEP_EXP needs softmax and max_sub=1"
#endif
#if HOLD_WEIGHTS && !(OP_LAYERNORM || OP_RMSNORM || OP_ADD_RMSNORM)
#error "HOLD_WEIGHTS needs a norm"
#endif
#if FAST_EXP
#define EXP(x) __expf(x)
#define LOG(x) __logf(x)
#else
#define EXP(x) expf(x)
#define LOG(x) logf(x)
#endif
#if FAST_RSQRT
#define RSQRT(x) rsqrtf(x)
#else
#define RSQRT(x) (1.0f / sqrtf(x))
#endif

typedef long long index_t;

struct sum_op {
    __device__ __forceinline__ static float apply(float a, float b) { return a + b; }
};
struct max_op {
    __device__ __forceinline__ static float apply(float a, float b) { return fmaxf(a, b); }
};

// v combined over the lanes of a warp that are n apart or closer (n a power
// of two, at most 32): every lane ends with its group's total.
template <class Op>
__device__ __forceinline__ float warp_reduce(float v, int n)
{
#pragma unroll
    for (int o = n / 2; o > 0; o >>= 1) v = Op::apply(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// v combined over the TPR threads of the row, in every one of them. Every
// thread of the block calls it (there are barriers when TPR > 32); red is
// the block's WPR slots per row, which every warp of the row then combines
// by shuffles (lane k reads slot k % WPR: each WPR lanes hold all of them),
// not one slot after another.
template <class Op>
__device__ __forceinline__ float row_reduce(float v, float (*red)[WPR])
{
    v = warp_reduce<Op>(v, TPR < 32 ? TPR : 32);
#if TPR > 32
    const int rib = threadIdx.x / TPR, w = (threadIdx.x % TPR) / 32, lane = threadIdx.x % 32;
    if (lane == 0) red[rib][w] = v;
    __syncthreads();
    v = warp_reduce<Op>(red[rib][lane % WPR], WPR);
    __syncthreads();   // the slots are free again
#endif
    return v;
}

#if CLUSTER > 1
// The cluster's barrier (every thread of every block) and loads from
// another block's shared memory, in PTX: the kernels include no headers.
__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// The exit barrier in two halves: arrive once the block has read the others'
// slots for the last time, wait just before it leaves.
__device__ __forceinline__ void cluster_arrive()
{
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}
__device__ __forceinline__ void cluster_wait()
{
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
}
__device__ __forceinline__ float cluster_load(const float *p, unsigned rank)
{
    unsigned long long shared;
    asm("cvta.to.shared.u64 %0, %1;" : "=l"(shared) : "l"(p));
    unsigned remote;
    float v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"((unsigned)shared), "r"(rank));
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote) : "memory");
    return v;
}
#endif

#if BULK
// Bulk copies from global into shared memory, counted on an mbarrier: the
// PTX of sm_90, the kernels include no headers.
#define BULK_CHUNK 4096   // bytes per copy; each lane of warp 0 issues some
__device__ __forceinline__ unsigned shared_address(const void *p)
{
    unsigned long long a;
    asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
    return (unsigned)a;
}
__device__ __forceinline__ void bar_init(unsigned long long *bar)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(bar)) : "memory");
}
// The mbarriers' initialization made visible to the bulk copies' completions.
__device__ __forceinline__ void bar_init_fence()
{
    asm volatile("fence.mbarrier_init.release.cluster;\n\tfence.proxy.async.shared::cta;" ::: "memory");
}
// The one arrival of a phase, which then waits for `bytes` to land.
__device__ __forceinline__ void bar_expect(unsigned long long *bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)), "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void bar_wait(unsigned long long *bar, unsigned parity)
{
    asm volatile("{\n\t.reg .pred done;\n"
                 "BULK_WAIT:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
                 "@!done bra.uni BULK_WAIT;\n\t}" ::"r"(shared_address(bar)), "r"(parity)
                 : "memory");
}
__device__ __forceinline__ void bulk_copy(void *dst, const void *src, unsigned bytes, unsigned long long *bar)
{
    unsigned long long g;
    asm("cvta.to.global.u64 %0, %1;" : "=l"(g) : "l"(src));
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(shared_address(dst)), "l"(g), "r"(bytes), "r"(shared_address(bar)) : "memory");
}
__device__ __forceinline__ void bulk_store(void *dst, const void *src, unsigned bytes)
{
    unsigned long long g;
    asm("cvta.to.global.u64 %0, %1;" : "=l"(g) : "l"(dst));
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(g), "r"(shared_address(src)),
                 "r"(bytes) : "memory");
}
// The rows of row group `group` that exist (at most RPB).
__device__ __forceinline__ long long rows_of_group(long long group)
{
    const long long first = group * RPB;
    return first + RPB <= R ? RPB : (first < R ? R - first : 0);
}
// Warp 0 copies the block's slices of row group `group` (RPB slices of
// C / CLUSTER elements, rows past the last skipped) from x into smem
// (one arrival on bar expecting their bytes) or, with out, from smem to
// out (one bulk group per lane).
__device__ __forceinline__ void copy_group(storage_t *smem, const storage_t *x, storage_t *out, long long group,
                                           long long col0, unsigned long long *bar)
{
    const unsigned slice = C / CLUSTER * STORAGE_BYTES, chunks = (slice + BULK_CHUNK - 1) / BULK_CHUNK;
    const long long first = group * RPB, rows = rows_of_group(group);
    const unsigned lane = threadIdx.x % 32;
    if (!out && lane == 0) bar_expect(bar, (unsigned)rows * slice);
    __syncwarp();
    for (unsigned k = lane; k < (unsigned)rows * chunks; k += 32) {
        const unsigned r = k / chunks, at = k % chunks * BULK_CHUNK;
        const unsigned bytes = slice - at < BULK_CHUNK ? slice - at : BULK_CHUNK;
        unsigned char *s = reinterpret_cast<unsigned char *>(smem + (long long)r * (C / CLUSTER)) + at;
        const long long g = (first + r) * (long long)C + col0;
        if (out) bulk_store(reinterpret_cast<unsigned char *>(out + g) + at, s, bytes);
        else bulk_copy(s, reinterpret_cast<const unsigned char *>(x + g) + at, bytes, bar);
    }
    if (out) asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
// This thread's bulk stores done reading shared memory (READ) or done.
#define BULK_STORES_READ() asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory")
#define BULK_STORES_DONE() asm volatile("cp.async.bulk.wait_group 0;" ::: "memory")
#endif

// v combined over the whole row: its threads, then the cluster's blocks
// through part, the call's own RPB slots (unused without a cluster).
template <class Op>
__device__ __forceinline__ float row_total(float v, float (*red)[WPR], float *part)
{
    v = row_reduce<Op>(v, red);
#if CLUSTER > 1
    const int rib = threadIdx.x / TPR;
    if (threadIdx.x % TPR == 0) part[rib] = v;
    cluster_sync();
    // lane k reads block k % CLUSTER's slot: one remote load per thread, each
    // CLUSTER lanes hold them all
    v = cluster_load(&part[rib], threadIdx.x % CLUSTER);
    v = warp_reduce<Op>(v, CLUSTER);
#else
    (void)part;
#endif
    return v;
}

#if SOFTMAX_KIND
// (m, s) += (m2, s2): running maxima and sums of exp(x - max).
__device__ __forceinline__ void online_merge(float &m, float &s, float m2, float s2)
{
    const float mx = fmaxf(m, m2);
    if (mx == NEG_INF) return;   // both empty
    s = s * EXP(m - mx) + s2 * EXP(m2 - mx);
    m = mx;
}

// (m, s) merged over the lanes of a warp that are n apart or closer.
__device__ __forceinline__ void warp_reduce_online(float &m, float &s, int n)
{
#pragma unroll
    for (int o = n / 2; o > 0; o >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, o), s2 = __shfl_xor_sync(0xffffffffu, s, o);
        online_merge(m, s, m2, s2);
    }
}

// row_reduce and row_total for the pair (m, s).
__device__ __forceinline__ void row_reduce_online(float &m, float &s, float (*red_m)[WPR], float (*red_s)[WPR],
                                                  float *part_m, float *part_s)
{
    warp_reduce_online(m, s, TPR < 32 ? TPR : 32);
#if TPR > 32
    const int rib = threadIdx.x / TPR, w = (threadIdx.x % TPR) / 32, lane = threadIdx.x % 32;
    if (lane == 0) {
        red_m[rib][w] = m;
        red_s[rib][w] = s;
    }
    __syncthreads();
    m = red_m[rib][lane % WPR];
    s = red_s[rib][lane % WPR];
    warp_reduce_online(m, s, WPR);
    __syncthreads();
#endif
#if CLUSTER > 1
    const int slot = threadIdx.x / TPR;
    if (threadIdx.x % TPR == 0) {
        part_m[slot] = m;
        part_s[slot] = s;
    }
    cluster_sync();
    m = cluster_load(&part_m[slot], threadIdx.x % CLUSTER);
    s = cluster_load(&part_s[slot], threadIdx.x % CLUSTER);
    warp_reduce_online(m, s, CLUSTER);
#else
    (void)part_m;
    (void)part_s;
#endif
}
#endif

#if OP_LAYERNORM
// A part of a row: its count, mean and sum of squared deviations from that
// mean. Parts merge exactly (Chan et al.), so the mean and the variance
// about it come from one combination over the row, not one each.
struct moments {
    float n, mean, m2;
};
__device__ __forceinline__ void moments_merge(moments &a, float n, float mean, float m2)
{
    const float total = a.n + n;
    if (total == 0.0f) return;   // both empty
    const float d = mean - a.mean, wb = n / total;
    a.mean += d * wb;
    a.m2 += m2 + d * d * a.n * wb;
    a.n = total;
}
__device__ __forceinline__ void warp_reduce_moments(moments &a, int n)
{
#pragma unroll
    for (int o = n / 2; o > 0; o >>= 1) {
        const float n2 = __shfl_xor_sync(0xffffffffu, a.n, o), mean2 = __shfl_xor_sync(0xffffffffu, a.mean, o),
                    m22 = __shfl_xor_sync(0xffffffffu, a.m2, o);
        moments_merge(a, n2, mean2, m22);
    }
}
// row_total for moments: red holds WPR parts per row, part RPB.
__device__ __forceinline__ moments row_total_moments(moments a, moments (*red)[WPR], moments *part)
{
    warp_reduce_moments(a, TPR < 32 ? TPR : 32);
#if TPR > 32
    const int rib = threadIdx.x / TPR, w = (threadIdx.x % TPR) / 32, lane = threadIdx.x % 32;
    if (lane == 0) red[rib][w] = a;
    __syncthreads();
    a = red[rib][lane % WPR];
    warp_reduce_moments(a, WPR);
    __syncthreads();
#endif
#if CLUSTER > 1
    const int slot = threadIdx.x / TPR;
    if (threadIdx.x % TPR == 0) part[slot] = a;
    cluster_sync();
    const unsigned r = threadIdx.x % CLUSTER;
    a = moments{cluster_load(&part[slot].n, r), cluster_load(&part[slot].mean, r), cluster_load(&part[slot].m2, r)};
    warp_reduce_moments(a, CLUSTER);
#else
    (void)part;
#endif
    return a;
}
#endif

#if CACHE == CACHE_REGISTERS
// A kept vector unpacked afresh in each pass: the empty asm hides that the
// words are the same, so the compiler cannot keep an earlier pass's floats
// alive instead (twice the registers for 16-bit storage).
__device__ __forceinline__ void unpack_held(vec_t u, float f[VEC])
{
    unsigned *w = reinterpret_cast<unsigned *>(&u);
#pragma unroll
    for (int q = 0; q < (int)(sizeof(vec_t) / 4); ++q) asm volatile("" : "+r"(w[q]));
    unpack_vec(u, f);
}
#endif

// After a block's last read of the cluster's slots (in its last row group):
// its half of the exit barrier, whose other half (STATS_READ_BY_ALL) ends
// the kernel.
#if CLUSTER > 1
#define STATS_DONE() if (it == ROW_LOOP - 1) cluster_arrive()
#define STATS_READ_BY_ALL() cluster_wait()
#else
#define STATS_DONE()
#define STATS_READ_BY_ALL()
#endif

// The loop over a thread's vectors of its row: i counts them, j is the
// vector's index in the row.
#define FOR_MINE(i, j) for (int i = 0, j = t; i < ITEMS; ++i, j += TPR) if (valid && j < NVS)

extern "C" __global__ void __launch_bounds__(TPR * RPB)
#if OP_SOFTMAX
softmax_rows(const storage_t *__restrict__ x, storage_t *__restrict__ y)
#elif OP_LOG_SOFTMAX
log_softmax_rows(const storage_t *__restrict__ x, storage_t *__restrict__ y)
#elif OP_CROSS_ENTROPY
cross_entropy_rows(const storage_t *__restrict__ x, const int *__restrict__ labels, float *__restrict__ loss,
                   float *__restrict__ lse)
#elif OP_ADD_RMSNORM
add_rmsnorm_rows(const storage_t *__restrict__ x, const storage_t *__restrict__ residual,
                 const storage_t *__restrict__ weight, storage_t *__restrict__ y, storage_t *__restrict__ h)
#elif OP_LAYERNORM
layernorm_rows(const storage_t *__restrict__ x, const storage_t *__restrict__ weight,
               const storage_t *__restrict__ bias, storage_t *__restrict__ y)
#else
rmsnorm_rows(const storage_t *__restrict__ x, const storage_t *__restrict__ weight, storage_t *__restrict__ y)
#endif
{
    __shared__ float red[RPB][WPR];
    // a cluster's slots, one set per combination, and a second for the next
    // row group: a block may write them while another still reads these
    __shared__ float part_by_group[ROW_LOOP > 1 ? 2 : 1][2][RPB];
    const int rib = threadIdx.x / TPR, t = threadIdx.x % TPR;
#if CLUSTER > 1
    const unsigned rank = cluster_rank();
#else
    const unsigned rank = 0;
#endif
    const index_t col0 = (index_t)rank * NVS * VEC;   // the block's slice of the row starts here
    // row group g of a block is its first plus g times the blocks' count
    const index_t group0 = blockIdx.x / CLUSTER, groups_apart = gridDim.x / CLUSTER;
#if CACHE == CACHE_SHARED || HOLD_WEIGHTS == 2
    extern __shared__ __align__(16) unsigned char tess_smem[];
#endif
#if BULK
    __shared__ __align__(8) unsigned long long bulk_bar[NBUF];
    if (threadIdx.x < NBUF) bar_init(&bulk_bar[threadIdx.x]);
    if (threadIdx.x == 0) bar_init_fence();
    __syncthreads();
    if (threadIdx.x < 32) copy_group(reinterpret_cast<storage_t *>(tess_smem), x, nullptr, group0, col0, &bulk_bar[0]);
#endif
#if HOLD_WEIGHTS == 2
    // the weights' (and bias') slices after the row buffers
    storage_t *const w_smem = reinterpret_cast<storage_t *>(tess_smem) +
                              (CACHE == CACHE_SHARED ? (index_t)NBUF * RPB * (C / CLUSTER) : 0);
#if OP_LAYERNORM
    storage_t *const b_smem = w_smem + C / CLUSTER;
#endif
    for (int j = t; j < NVS; j += TPR) {
        *reinterpret_cast<vec_t *>(w_smem + (index_t)j * VEC) =
            *reinterpret_cast<const vec_t *>(weight + col0 + (index_t)j * VEC);
#if OP_LAYERNORM
        *reinterpret_cast<vec_t *>(b_smem + (index_t)j * VEC) =
            *reinterpret_cast<const vec_t *>(bias + col0 + (index_t)j * VEC);
#endif
    }
#define LOAD_WEIGHTS(i, j, w, b) load_vec(w_smem + (index_t)(j) * VEC, w); load_vec(b_smem + (index_t)(j) * VEC, b)
#define LOAD_WEIGHT(i, j, w) load_vec(w_smem + (index_t)(j) * VEC, w)
#elif HOLD_WEIGHTS
    vec_t w_held[ITEMS];
#if OP_LAYERNORM
    vec_t b_held[ITEMS];
#endif
#pragma unroll
    for (int i = 0; i < ITEMS; ++i)
        if (NVS % TPR == 0 || t + i * TPR < NVS) {
            w_held[i] = *reinterpret_cast<const vec_t *>(weight + col0 + (index_t)(t + i * TPR) * VEC);
#if OP_LAYERNORM
            b_held[i] = *reinterpret_cast<const vec_t *>(bias + col0 + (index_t)(t + i * TPR) * VEC);
#endif
        }
#define LOAD_WEIGHTS(i, j, w, b) unpack_vec(w_held[i], w); unpack_vec(b_held[i], b)
#define LOAD_WEIGHT(i, j, w) unpack_vec(w_held[i], w)
#else
#define LOAD_WEIGHTS(i, j, w, b)                                                                   \
    load_vec(weight + col0 + (index_t)(j) * VEC, w);                                               \
    load_vec(bias + col0 + (index_t)(j) * VEC, b)
#define LOAD_WEIGHT(i, j, w) load_vec(weight + col0 + (index_t)(j) * VEC, w)
#endif
#if REG_LOOP
    vec_t held[ITEMS], pre[ITEMS];
    // the block's slice of row rw into dst (past the last row, the last
    // row's: loaded for nothing, but without a test per vector)
#define LOAD_SLICE(dst, rw)                                                                     \
    {                                                                                           \
        const storage_t *src = x + ((rw) < R ? (rw) : R - 1) * (index_t)C + col0 + (index_t)t * VEC; \
        _Pragma("unroll") for (int i = 0; i < ITEMS; ++i) if (NVS % TPR == 0 || t + i * TPR < NVS) \
            dst[i] = *reinterpret_cast<const vec_t *>(src + (index_t)i * TPR * VEC);            \
    }
    LOAD_SLICE(held, group0 * RPB + rib);
#endif
    for (int it = 0; it < ROW_LOOP; ++it) {
    const index_t row = (group0 + it * groups_apart) * RPB + rib;
    const bool valid = row < R;
    float (*part)[RPB] = part_by_group[(ROW_LOOP > 1 ? it % 2 : 0)];
#if REG_LOOP
    if (it + 1 < ROW_LOOP) LOAD_SLICE(pre, row + groups_apart * RPB);
#elif BULK
    storage_t *const buffer = reinterpret_cast<storage_t *>(tess_smem) + (index_t)(it % NBUF) * RPB * (C / CLUSTER);
    // the other buffer was last read in the previous group's write pass,
    // which a barrier at its end closed (and, with BULK_STORE, by the bulk
    // stores this warp issued after it)
    if (NBUF > 1 && it + 1 < ROW_LOOP && threadIdx.x < 32) {
#if BULK_STORE
        BULK_STORES_READ();
#endif
        copy_group(reinterpret_cast<storage_t *>(tess_smem) + (index_t)((it + 1) % NBUF) * RPB * (C / CLUSTER), x,
                   nullptr, group0 + (it + 1) * groups_apart, col0, &bulk_bar[(it + 1) % NBUF]);
    }
    bar_wait(&bulk_bar[it % NBUF], (unsigned)(it / NBUF) & 1u);
#endif
    const storage_t *xrow = x + (valid ? row : 0) * (index_t)C, *xr = xrow + col0;
#if !OP_CROSS_ENTROPY
    storage_t *yr = y + (valid ? row : 0) * (index_t)C + col0;
#endif
    float f[VEC];
#if OP_ADD_RMSNORM
// The first pass: vector j of x + residual into f as stored, written to h,
// and kept where CACHE says (read back from h when it is not kept).
    const storage_t *rr = residual + (valid ? row : 0) * (index_t)C + col0;
    storage_t *hr = h + (valid ? row : 0) * (index_t)C + col0;
    float g[VEC];
#define LOAD_AND_KEEP(i, j)                                                     \
    load_vec(xr + (index_t)(j) * VEC, f);                                       \
    load_vec(rr + (index_t)(j) * VEC, g);                                       \
    _Pragma("unroll") for (int k = 0; k < VEC; ++k) f[k] += g[k];              \
    const vec_t u = pack_vec(f);                                                \
    unpack_vec(u, f);                                                           \
    *reinterpret_cast<vec_t *>(hr + (index_t)(j) * VEC) = u;                    \
    KEEP(i, j)
#define KEPT hr
#else
// The first pass: vector j of the row into f, and kept where CACHE says.
#define LOAD_AND_KEEP(i, j)                                                    \
    const vec_t u = *reinterpret_cast<const vec_t *>(xr + (index_t)(j) * VEC); \
    unpack_vec(u, f);                                                          \
    KEEP(i, j)
#define KEPT xr
#endif
#if REG_LOOP
#undef LOAD_AND_KEEP
#define LOAD_AND_KEEP(i, j) FETCH(i, j)   // loaded before
    (void)xr;
#define FETCH(i, j) unpack_held(held[i], f)
#elif CACHE == CACHE_REGISTERS
    vec_t held[ITEMS];
#define KEEP(i, j) held[i] = u
#define FETCH(i, j) unpack_held(held[i], f)
#elif CACHE == CACHE_SHARED && BULK
#undef LOAD_AND_KEEP
#define LOAD_AND_KEEP(i, j) FETCH(i, j)   // copied there before
    (void)xr;
    storage_t *const held = buffer + (index_t)rib * (C / CLUSTER);
#define FETCH(i, j) load_vec(held + (index_t)(j) * VEC, f)
#elif CACHE == CACHE_SHARED
    storage_t *held = reinterpret_cast<storage_t *>(tess_smem) + (index_t)rib * (C / CLUSTER);
#define KEEP(i, j) *reinterpret_cast<vec_t *>(held + (index_t)(j) * VEC) = u
#define FETCH(i, j) load_vec(held + (index_t)(j) * VEC, f)
#else
#define KEEP(i, j)
#define FETCH(i, j) load_vec(KEPT + (index_t)(j) * VEC, f)
#endif

#if BULK_STORE
    // over the vector just read, by the thread that read it
#define STORE_OUT(j) store_vec(held + (index_t)(j) * VEC, f)
    (void)yr;
#elif !OP_CROSS_ENTROPY
#define STORE_OUT(j) store_vec(yr + (index_t)(j) * VEC, f)
#endif

#if SOFTMAX_KIND
    // ---- the row's max (unless skipped) and the sum of exp(x - max)
    float m = MAX_SUB ? NEG_INF : 0.0f, s = 0.0f;
    PASS_UNROLL
    FOR_MINE(i, j) {
        LOAD_AND_KEEP(i, j);
#if MAX_SUB && ONLINE && !KEEP_EXP
        float mv = f[0];
#pragma unroll
        for (int k = 1; k < VEC; ++k) mv = fmaxf(mv, f[k]);
        const float mx = fmaxf(m, mv);
        float sv = 0.0f;
#pragma unroll
        for (int k = 0; k < VEC; ++k) sv += EXP(f[k] - mx);
        s = s * EXP(m - mx) + sv;   // m == -inf: s is 0 and stays 0
        m = mx;
#elif MAX_SUB
#pragma unroll
        for (int k = 0; k < VEC; ++k) m = fmaxf(m, f[k]);
#else
#pragma unroll
        for (int k = 0; k < VEC; ++k) s += EXP(f[k]);
#endif
    }
#if MAX_SUB && ONLINE && KEEP_EXP
    // the exponentials against this thread's own max, kept, then one
    // combination of (max, sum) over the row; the output rescales them
    const float m_own = m, m_ref = m == NEG_INF ? 0.0f : m;   // -inf: no elements, or all -inf
    float ex[ITEMS][VEC];
    PASS_UNROLL
    FOR_MINE(i, j) {
        FETCH(i, j);
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
            ex[i][k] = EXP(f[k] - m_ref);
            s += ex[i][k];
        }
    }
    __shared__ float red_s[RPB][WPR];
    row_reduce_online(m, s, red, red_s, part[0], part[1]);
    const float rescale = m_own == NEG_INF ? 0.0f : EXP(m_own - m);
#elif MAX_SUB && ONLINE
    __shared__ float red_s[RPB][WPR];
    row_reduce_online(m, s, red, red_s, part[0], part[1]);
#elif MAX_SUB
    m = row_total<max_op>(m, red, part[0]);
#if KEEP_EXP
    float ex[ITEMS][VEC];
#endif
    PASS_UNROLL
    FOR_MINE(i, j) {
        FETCH(i, j);
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
            const float e = EXP(f[k] - m);
#if KEEP_EXP
            ex[i][k] = e;
#endif
            s += e;
        }
    }
    s = row_total<sum_op>(s, red, part[1]);
#else
    s = row_total<sum_op>(s, red, part[1]);
#endif
    STATS_DONE();
#if OP_CROSS_ENTROPY
    // ---- one loss and log-sum-exp per row, from its first thread
    if (valid && t == 0 && rank == 0) {
        const float l = m + LOG(s);
        lse[row] = l;
        loss[row] = l - to_float(xrow[labels[row]]);
    }
#elif OP_LOG_SOFTMAX
    const float shift = m + LOG(s);
    PASS_UNROLL
    FOR_MINE(i, j) {
        FETCH(i, j);
#pragma unroll
        for (int k = 0; k < VEC; ++k) f[k] -= shift;
        STORE_OUT(j);
    }
#else
    const float inv = 1.0f / s;
#if KEEP_EXP && ONLINE
    const float scale = rescale * inv;
#elif KEEP_EXP
    const float scale = inv;
#endif
    PASS_UNROLL
    FOR_MINE(i, j) {
#if KEEP_EXP
#pragma unroll
        for (int k = 0; k < VEC; ++k) f[k] = ex[i][k] * scale;
#else
        FETCH(i, j);
#pragma unroll
        for (int k = 0; k < VEC; ++k) f[k] = EXP(f[k] - m) * inv;
#endif
        STORE_OUT(j);
    }
#endif

#elif OP_LAYERNORM
    // ---- each thread's mean, then its squared deviations from it (two
    // passes over what it keeps), merged over the row in one combination
    moments mine = {0.0f, 0.0f, 0.0f};
    PASS_UNROLL
    FOR_MINE(i, j) {
        LOAD_AND_KEEP(i, j);
#pragma unroll
        for (int k = 0; k < VEC; ++k) mine.mean += f[k];
        mine.n += VEC;
    }
    if (mine.n > 0.0f) mine.mean /= mine.n;
    PASS_UNROLL
    FOR_MINE(i, j) {
        FETCH(i, j);
#pragma unroll
        for (int k = 0; k < VEC; ++k) mine.m2 += (f[k] - mine.mean) * (f[k] - mine.mean);
    }
    __shared__ moments red_mo[RPB][WPR], part_mo[ROW_LOOP > 1 ? 2 : 1][RPB];
    const moments all = row_total_moments(mine, red_mo, part_mo[(ROW_LOOP > 1 ? it % 2 : 0)]);
    const float mean = all.mean, rstd = RSQRT(all.m2 * (1.0f / C) + EPS);
    STATS_DONE();
    float w[VEC], b[VEC];
    PASS_UNROLL
    FOR_MINE(i, j) {
        FETCH(i, j);
        LOAD_WEIGHTS(i, j, w, b);
#pragma unroll
        for (int k = 0; k < VEC; ++k) f[k] = (f[k] - mean) * rstd * w[k] + b[k];
        STORE_OUT(j);
    }

#else
    // ---- rmsnorm (of h for add_rmsnorm): the mean of squares
    float q = 0.0f;
    PASS_UNROLL
    FOR_MINE(i, j) {
        LOAD_AND_KEEP(i, j);
#pragma unroll
        for (int k = 0; k < VEC; ++k) q += f[k] * f[k];
    }
    const float rstd = RSQRT(row_total<sum_op>(q, red, part[1]) * (1.0f / C) + EPS);
    STATS_DONE();
    float w[VEC];
    PASS_UNROLL
    FOR_MINE(i, j) {
        FETCH(i, j);
        LOAD_WEIGHT(i, j, w);
#pragma unroll
        for (int k = 0; k < VEC; ++k) f[k] = f[k] * rstd * w[k];
        STORE_OUT(j);
    }
#endif
#if REG_LOOP
    if (it + 1 < ROW_LOOP) {
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) held[i] = pre[i];
    }
#endif
#if BULK_STORE
    // the outputs over the slices, seen by the bulk copies, copied out
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x < 32) copy_group(buffer, x, y, group0 + it * groups_apart, col0, nullptr);
#elif BULK
    if (NBUF > 1) __syncthreads();   // this buffer is free for the group after next
#endif
    }
#if BULK_STORE
    if (threadIdx.x < 32) BULK_STORES_DONE();
#endif
    STATS_READ_BY_ALL();
}
