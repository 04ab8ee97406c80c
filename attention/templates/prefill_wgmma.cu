// prefill_wgmma.cu - flash-attention prefill for sm_90a: warpgroup MMA
// (wgmma.mma_async, bf16 or f16 operands, f32 accumulators) fed by the
// tensor memory accelerator. A block takes BM = 64 CONSUMERS query rows of
// one head (grid: query tiles, heaviest first when causal; H; B) and runs
// CONSUMERS + 1 warpgroups:
//   - the producer, whose first thread loads the Q tile once and then the K
//     and V tiles of BN rows into a ring of STAGES slots with TMA (rows of D
//     elements stored as D/64 slabs of 64 columns, each row of a slab 128
//     bytes swizzled by the TMA in 1024-byte atoms), each tile announced by
//     its `full` mbarrier; it waits for a slot's `empty` barrier (every
//     consumer thread arrives) before it refills it, K and V separately;
//   - the consumers, 64 query rows each. Per tile j: S = Q K^T (wgmma with
//     both operands in shared memory, K-major), issued together with
//     O += P V of tile j - 1, so the softmax of one tile overlaps the MMA of
//     the other; P goes from registers as the A operand of the second wgmma
//     (V read N-major: imm-trans-b). The running max and sum are in the log2
//     domain (scores times SCALE * log2 e) as in the mma kernel; O is
//     rescaled once its MMA of the previous tile is complete.
// The producer gives registers to the consumers (setmaxnreg) when there are
// two of them; with PINGPONG the two take turns issuing their MMAs (named
// barriers 1 and 2), so that one's softmax runs while the other's MMAs do.
// Causal tiles past the last key of a block's last row are never loaded;
// the tiles that cross a warpgroup's diagonal are masked.
// Defined above this text: hopper.cuh, storage.cuh's macros (STORAGE_BF16 or
// STORAGE_F16), B, H, HKV, SQ, SKV_CAP, D (64 or 128), CAUSAL, SCALE, BM, BN,
// STAGES, CONSUMERS, PINGPONG (0 or 1; 1 only with two consumers); wgmma_qk
// (m64nBNk16, A and B from shared memory) and wgmma_pv (m64nDk16, A from
// registers, B N-major); SQ % BM == 0, SKV_CAP % BN == 0.

#define SKV SKV_CAP
#define GROUP (H / HKV)
#define THREADS (128 * (CONSUMERS + 1))
#define SLABS (D / 64)              // 64-column slabs of a row
#define SLAB_ROW 128                // bytes of a row of a slab
#define ATOM 1024                   // bytes of a swizzle atom: 8 rows of a slab
#define Q_BYTES (BM * D * 2)
#define TILE_BYTES (BN * D * 2)     // one K or V tile
#define SCALE_LOG2 (SCALE * LOG2E)

// K-major operand: rows of a slab at SLAB_ROW bytes, 8-row groups ATOM apart
__device__ __forceinline__ unsigned long long k_major(unsigned addr) { return wgmma_desc(addr, 16, ATOM, 1); }

// Issues S = Q K^T for a warpgroup's 64 rows of Q (rows of BM in the tile at qa) and the K tile at kt.
__device__ __forceinline__ void issue_qk(float (&s)[BN / 2], unsigned qa, unsigned kt)
{
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
        const unsigned at = (kk % 4) * 32;   // the step's 16 columns in its slab's rows
        wgmma_qk(s, k_major(qa + (kk / 4) * BM * SLAB_ROW + at), k_major(kt + (kk / 4) * BN * SLAB_ROW + at), kk > 0);
    }
    wgmma_commit();
}

// Issues O += P V for the V tile at vt: N-major, the D/64 slabs BN rows apart, 8-key groups ATOM apart.
__device__ __forceinline__ void issue_pv(float (&acc)[D / 2], const unsigned (&p)[BN / 16][4], unsigned vt)
{
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk)
        wgmma_pv(acc, p[kk], wgmma_desc(vt + kk * 16 * SLAB_ROW, BN * SLAB_ROW, ATOM, 1), 1);
    wgmma_commit();
}

// 2^x by the special function unit (2 ulp; 0 for -inf)
__device__ __forceinline__ float fast_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// The online softmax of one tile of scores (keys k0..k0+BN-1; this thread's rows row0 and row0 + 8):
// masks when asked, updates the running max m (of the scores times SCALE_LOG2) and sum l, leaves the
// probabilities in s and returns in alpha the factors that bring O to the new max. The max is taken over
// the raw scores (negated for a negative scale), so each probability costs one fma and one exp2.
__device__ __forceinline__ void softmax_tile(float (&s)[BN / 2], float (&m)[2], float (&l)[2], float (&alpha)[2],
                                             bool masked, long long k0, long long row0, int t)
{
    const float sign = SCALE_LOG2 > 0 ? 1.0f : -1.0f, hidden = sign * NEG_INF;   // hidden * SCALE_LOG2 = -inf
    float mx[2] = {NEG_INF, NEG_INF};
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) {
        const int hf = (i >> 1) & 1;
        if (masked && k0 + (i / 4) * 8 + 2 * t + (i & 1) > row0 + hf * 8 + SKV - SQ) s[i] = hidden;
        mx[hf] = fmaxf(mx[hf], sign * s[i]);
    }
    float neg_m[2];
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
        mx[hf] = fmaxf(mx[hf], __shfl_xor_sync(0xffffffffu, mx[hf], 1));
        mx[hf] = fmaxf(mx[hf], __shfl_xor_sync(0xffffffffu, mx[hf], 2));
        const float m_new = fmaxf(m[hf], mx[hf] * (sign * SCALE_LOG2));
        alpha[hf] = fast_exp2(m[hf] - m_new);   // 0 on the first tile (m = -inf, m_new finite: key 0 is seen)
        m[hf] = m_new;
        neg_m[hf] = -m_new;
        l[hf] *= alpha[hf];
    }
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) {
        const int hf = (i >> 1) & 1;
        s[i] = fast_exp2(fmaf(s[i], SCALE_LOG2, neg_m[hf]));
        l[hf] += s[i];
    }
}

// Pingpong: consumer c waits for its turn to issue MMAs (barrier 1 + c), then passes it to the other.
__device__ __forceinline__ void turn_wait(int c)
{
    if (PINGPONG) asm volatile("bar.sync %0, 256;" ::"r"(1 + c) : "memory");
}

__device__ __forceinline__ void turn_pass(int c)
{
    if (PINGPONG) asm volatile("bar.arrive %0, 256;" ::"r"(2 - c) : "memory");
}

// P rounded to the storage type as the A fragments of the 16-key steps.
__device__ __forceinline__ void pack_p(unsigned (&p)[BN / 16][4], const float (&s)[BN / 2])
{
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
        p[kk][0] = pack2(s[8 * kk], s[8 * kk + 1]);
        p[kk][1] = pack2(s[8 * kk + 2], s[8 * kk + 3]);
        p[kk][2] = pack2(s[8 * kk + 4], s[8 * kk + 5]);
        p[kk][3] = pack2(s[8 * kk + 6], s[8 * kk + 7]);
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
attention_wgmma(const storage_t *__restrict__ q, const storage_t *__restrict__ k, const storage_t *__restrict__ v,
                storage_t *__restrict__ o, float *__restrict__ lse, const __grid_constant__ tensor_map map_q,
                const __grid_constant__ tensor_map map_k, const __grid_constant__ tensor_map map_v)
{
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    // swizzled tiles start on 1024-byte boundaries; the launch reserves the slack
    const unsigned base = (smem_addr(smem_raw) + 1023) & ~1023u;
    const unsigned qs = base, ks = qs + Q_BYTES, vs = ks + STAGES * TILE_BYTES;
    const unsigned q_full = vs + STAGES * TILE_BYTES, k_full = q_full + 8, v_full = k_full + 8 * STAGES,
                   k_empty = v_full + 8 * STAGES, v_empty = k_empty + 8 * STAGES;
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const long long b = blockIdx.z, h = blockIdx.y;
    const int qt = CAUSAL ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
    const long long q0 = (long long)qt * BM;
    const long long last_key = q0 + BM - 1 + SKV - SQ;   // the last key the block's last row sees
    const int ntiles = CAUSAL ? (int)min((long long)(SKV / BN), last_key / BN + 1) : SKV / BN;
    (void)q, (void)k, (void)v;
    if (threadIdx.x == 0) {
        bar_init(q_full, 1);
        for (int s = 0; s < STAGES; ++s) {
            bar_init(k_full + 8 * s, 1);
            bar_init(v_full + 8 * s, 1);
            bar_init(k_empty + 8 * s, CONSUMERS * 128);
            bar_init(v_empty + 8 * s, CONSUMERS * 128);
        }
        bar_init_fence();
    }
    __syncthreads();

    if (wg == 0) {
#if CONSUMERS == 2
        asm volatile("setmaxnreg.dec.sync.aligned.u32 24;");
#endif
        if (tid == 0) {
            const int q_row = (int)((b * H + h) * SQ + q0), kv_row = (int)((b * HKV + h / GROUP) * SKV);
            bar_expect_bytes(q_full, Q_BYTES);
            for (int c = 0; c < SLABS; ++c) tma_load(qs + c * BM * SLAB_ROW, &map_q, c * 64, q_row, q_full);
            for (int j = 0; j < ntiles; ++j) {
                const int s = j % STAGES;
                const unsigned refill = ((j / STAGES) & 1) ^ 1;   // the parity of the slot's previous release
                if (j >= STAGES) bar_wait(k_empty + 8 * s, refill);
                bar_expect_bytes(k_full + 8 * s, TILE_BYTES);
                for (int c = 0; c < SLABS; ++c)
                    tma_load(ks + s * TILE_BYTES + c * BN * SLAB_ROW, &map_k, c * 64, kv_row + j * BN, k_full + 8 * s);
                if (j >= STAGES) bar_wait(v_empty + 8 * s, refill);
                bar_expect_bytes(v_full + 8 * s, TILE_BYTES);
                for (int c = 0; c < SLABS; ++c)
                    tma_load(vs + s * TILE_BYTES + c * BN * SLAB_ROW, &map_v, c * 64, kv_row + j * BN, v_full + 8 * s);
            }
        }
        return;
    }

#if CONSUMERS == 2
    asm volatile("setmaxnreg.inc.sync.aligned.u32 240;");
#endif
    const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    const long long first = q0 + (wg - 1) * 64;           // the warpgroup's first row
    const long long row0 = first + warp * 16 + g;         // this thread's rows: row0 and row0 + 8
    const unsigned qa = qs + (wg - 1) * 64 * SLAB_ROW;
    // accumulator 4i + e: row 16 warp + g + 8 (e / 2), column 8i + 2t + e % 2
    float acc[D / 2], s[BN / 2], m[2] = {NEG_INF, NEG_INF}, l[2] = {0, 0};
    unsigned p[BN / 16][4];   // P of the previous tile: the A fragments of its 16-key steps
#pragma unroll
    for (int i = 0; i < D / 2; ++i) acc[i] = 0;
    const long long diag = first + SKV - SQ;   // the last key the warpgroup's first row sees
    const int c = wg - 1;
    float alpha[2];
    if (c == 1) turn_pass(c);   // the first consumer goes first
    bar_wait(q_full, 0);
    bar_wait(k_full, 0);
    turn_wait(c);
    wgmma_fence();
    issue_qk(s, qa, ks);
    turn_pass(c);
    wgmma_wait<0>();
    bar_arrive(k_empty);
    softmax_tile(s, m, l, alpha, CAUSAL && BN - 1 > diag, 0, row0, t);
    pack_p(p, s);
    for (int j = 1; j < ntiles; ++j) {
        // S of tile j and P V of tile j - 1 in flight together; the softmax waits for S alone
        const int cur = j % STAGES, prev = (j - 1) % STAGES;
        bar_wait(k_full + 8 * cur, (j / STAGES) & 1);
        bar_wait(v_full + 8 * prev, ((j - 1) / STAGES) & 1);
        turn_wait(c);
        wgmma_fence();
        issue_qk(s, qa, ks + cur * TILE_BYTES);
        issue_pv(acc, p, vs + prev * TILE_BYTES);
        turn_pass(c);
        wgmma_wait<1>();
        bar_arrive(k_empty + 8 * cur);
        const long long k0 = (long long)j * BN;
        softmax_tile(s, m, l, alpha, CAUSAL && k0 + BN - 1 > diag, k0, row0, t);
        wgmma_wait<0>();   // P V of tile j - 1 is complete: its V slot is free, O can be rescaled
        bar_arrive(v_empty + 8 * prev);
#pragma unroll
        for (int i = 0; i < D / 2; ++i) acc[i] *= alpha[(i >> 1) & 1];
        pack_p(p, s);
    }
    const int last = (ntiles - 1) % STAGES;
    bar_wait(v_full + 8 * last, ((ntiles - 1) / STAGES) & 1);
    turn_wait(c);
    wgmma_fence();
    issue_pv(acc, p, vs + last * TILE_BYTES);
    if (c == 0) turn_pass(c);   // the second consumer's last pass would be one more than the first's waits
    wgmma_wait<0>();

#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
        float sum = l[hf];
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        const float inv = 1.0f / sum;
        const long long row = (b * H + h) * SQ + row0 + hf * 8;
#pragma unroll
        for (int i = 0; i < D / 8; ++i)
            *(unsigned *)(o + row * D + 8 * i + 2 * t) =
                pack2(acc[4 * i + 2 * hf] * inv, acc[4 * i + 2 * hf + 1] * inv);
        if (t == 0) lse[row] = (m[hf] + log2f(sum)) * LN2;
    }
}
