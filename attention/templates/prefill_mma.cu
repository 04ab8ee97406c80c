// prefill_mma.cu - flash-attention prefill on the tensor cores of sm_80 and
// later (mma.sync m16n8k16, bf16 or f16 operands, f32 accumulators). A
// block takes BM query rows of one head (grid: query tiles, heaviest first
// when causal; H; B); warp w owns MT tiles of 16 rows. The Q tile is
// loaded once into registers (ldmatrix); the K and V tiles of BN rows
// stream through a ring of STAGES shared-memory slots filled by cp.async,
// STAGES - 1 tiles ahead of the one in use. Per tile: S = Q K^T on the
// tensor cores, the mask on the tiles that cross the diagonal, the
// running max and sum in the log2 domain (exp2 of scores prescaled by
// SCALE * log2 e), O rescaled by exp2(m_old - m_new), P rounded to the
// storage type and O += P V (V fragments by ldmatrix.trans). Tiles past the
// last key a causal tile's last row sees are skipped. Shared rows are
// swizzled (16-byte chunk c of row r at c ^ (r % 8)), so ldmatrix and
// cp.async meet no bank conflicts.
// Defined above this text: storage.cuh's macros (STORAGE_BF16 or
// STORAGE_F16), B, H, HKV, SQ, SKV_CAP, D (64 or 128), CAUSAL, SCALE, BM, BN,
// WARPS, STAGES; SQ % BM == 0, SKV_CAP % BN == 0, BM % (16 WARPS) == 0.

#define SKV SKV_CAP
#define GROUP (H / HKV)
#define MT (BM / (16 * WARPS))   // 16-row tiles per warp
#define NT (BN / 8)              // 8-key column tiles of S
#define KT (D / 16)              // 16-wide steps over the head dimension
#define DT (D / 8)               // 8-wide column tiles of O
#define CHUNKS (D / 8)           // 16-byte chunks per row
#define NTHREADS (WARPS * 32)
#define SCALE_LOG2 (SCALE * LOG2E)

#if defined(STORAGE_BF16)
#define MMA_TYPES "bf16.bf16"
#else
#define MMA_TYPES "f16.f16"
#endif

__device__ __forceinline__ unsigned smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

// element offset of chunk c of row r in a swizzled tile
__device__ __forceinline__ int swz(int r, int c) { return r * D + ((c ^ (r & 7)) << 3); }

// Copies `rows` rows of D elements from global memory into a swizzled tile.
__device__ __forceinline__ void load_tile(storage_t *tile, const storage_t *src, int rows)
{
    for (int x = threadIdx.x; x < rows * CHUNKS; x += NTHREADS) {
        const int r = x / CHUNKS, c = x % CHUNKS;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_addr(tile + swz(r, c))),
                     "l"(src + (long long)r * D + c * 8));
    }
}

__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;"); }
template <int N>
__device__ __forceinline__ void wait_pending() { asm volatile("cp.async.wait_group %0;" ::"n"(N)); }

__device__ __forceinline__ void ldsm4(unsigned r[4], const storage_t *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_addr(p)));
}

__device__ __forceinline__ void ldsm4_t(unsigned r[4], const storage_t *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_addr(p)));
}

// c += a b for one m16n8k16 tile
__device__ __forceinline__ void mma(float c[4], const unsigned a[4], unsigned b0, unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." MMA_TYPES ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

extern "C" __global__ void __launch_bounds__(NTHREADS)
attention_mma(const storage_t *__restrict__ q, const storage_t *__restrict__ k, const storage_t *__restrict__ v,
              storage_t *__restrict__ o, float *__restrict__ lse)
{
    extern __shared__ __align__(128) unsigned char smem_raw[];
    storage_t *qs = (storage_t *)smem_raw, *ks = qs + BM * D, *vs = ks + STAGES * BN * D;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int lrow = lane % 8, lmat = lane / 8;   // the row and the matrix whose address a lane gives ldmatrix
    const long long b = blockIdx.z, h = blockIdx.y, bh = b * H + h, kv_head = b * HKV + h / GROUP;
    const int qt = CAUSAL ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
    const long long q0 = (long long)qt * BM;
    const storage_t *kg = k + kv_head * SKV * D, *vg = v + kv_head * SKV * D;
    const long long last_key = q0 + BM - 1 + SKV - SQ;   // the last key the tile's last row sees
    const int ntiles = CAUSAL ? (int)min((long long)(SKV / BN), last_key / BN + 1) : SKV / BN;

    load_tile(qs, q + (bh * SQ + q0) * D, BM);
    commit();
    wait_pending<0>();
    __syncthreads();
    unsigned qa[MT][KT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int kk = 0; kk < KT; ++kk)
            ldsm4(qa[mt][kk], qs + swz((warp * MT + mt) * 16 + lrow + (lmat & 1) * 8, kk * 2 + (lmat >> 1)));

    float acc[MT][DT][4], m[MT][2], l[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int dt = 0; dt < DT; ++dt) acc[mt][dt][0] = acc[mt][dt][1] = acc[mt][dt][2] = acc[mt][dt][3] = 0;
        m[mt][0] = m[mt][1] = NEG_INF;
        l[mt][0] = l[mt][1] = 0;
    }

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < ntiles) {
            load_tile(ks + s * BN * D, kg + (long long)s * BN * D, BN);
            load_tile(vs + s * BN * D, vg + (long long)s * BN * D, BN);
        }
        commit();
    }
    for (int tile = 0; tile < ntiles; ++tile) {
        const int ahead = tile + STAGES - 1;
        if (ahead < ntiles) {
            load_tile(ks + (ahead % STAGES) * BN * D, kg + (long long)ahead * BN * D, BN);
            load_tile(vs + (ahead % STAGES) * BN * D, vg + (long long)ahead * BN * D, BN);
        }
        commit();
        wait_pending<STAGES - 1>();   // this tile's group is complete
        __syncthreads();
        const storage_t *kt = ks + (tile % STAGES) * BN * D, *vt = vs + (tile % STAGES) * BN * D;
        const long long k0 = (long long)tile * BN;
        const bool masked = CAUSAL && k0 + BN - 1 > q0 + SKV - SQ;

#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
            float s[NT][4];
#pragma unroll
            for (int n = 0; n < NT; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0;
#pragma unroll
            for (int kk = 0; kk < KT; ++kk)
#pragma unroll
                for (int np = 0; np < NT / 2; ++np) {
                    unsigned kb[4];
                    ldsm4(kb, kt + swz(np * 16 + lrow + (lmat >> 1) * 8, kk * 2 + (lmat & 1)));
                    mma(s[2 * np], qa[mt][kk], kb[0], kb[1]);
                    mma(s[2 * np + 1], qa[mt][kk], kb[2], kb[3]);
                }
            const long long row0 = q0 + (warp * MT + mt) * 16 + g;   // rows row0 and row0 + 8
            float mx[2] = {m[mt][0], m[mt][1]};
#pragma unroll
            for (int n = 0; n < NT; ++n)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    float x = s[n][e] * SCALE_LOG2;
                    if (masked && k0 + n * 8 + 2 * t + (e & 1) > row0 + (e >> 1) * 8 + SKV - SQ) x = NEG_INF;
                    s[n][e] = x;
                    mx[e >> 1] = fmaxf(mx[e >> 1], x);
                }
            float alpha[2];
#pragma unroll
            for (int hf = 0; hf < 2; ++hf) {
                mx[hf] = fmaxf(mx[hf], __shfl_xor_sync(0xffffffffu, mx[hf], 1));
                mx[hf] = fmaxf(mx[hf], __shfl_xor_sync(0xffffffffu, mx[hf], 2));
                alpha[hf] = exp2f(m[mt][hf] - mx[hf]);   // 0 on the first tile (m = -inf, mx finite: key 0 is seen)
                m[mt][hf] = mx[hf];
                l[mt][hf] *= alpha[hf];
            }
#pragma unroll
            for (int dt = 0; dt < DT; ++dt) {
                acc[mt][dt][0] *= alpha[0];
                acc[mt][dt][1] *= alpha[0];
                acc[mt][dt][2] *= alpha[1];
                acc[mt][dt][3] *= alpha[1];
            }
#pragma unroll
            for (int n = 0; n < NT; ++n)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const float p = exp2f(s[n][e] - mx[e >> 1]);
                    s[n][e] = p;
                    l[mt][e >> 1] += p;
                }
#pragma unroll
            for (int kk = 0; kk < BN / 16; ++kk) {
                const unsigned pa[4] = {pack2(s[2 * kk][0], s[2 * kk][1]), pack2(s[2 * kk][2], s[2 * kk][3]),
                                        pack2(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                                        pack2(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
                for (int dp = 0; dp < DT / 2; ++dp) {
                    unsigned vb[4];
                    ldsm4_t(vb, vt + swz(kk * 16 + lrow + (lmat & 1) * 8, dp * 2 + (lmat >> 1)));
                    mma(acc[mt][2 * dp], pa, vb[0], vb[1]);
                    mma(acc[mt][2 * dp + 1], pa, vb[2], vb[3]);
                }
            }
        }
        __syncthreads();   // the slot is free for the tile STAGES ahead
    }
    wait_pending<0>();

#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int hf = 0; hf < 2; ++hf) {
            float sum = l[mt][hf];
            sum += __shfl_xor_sync(0xffffffffu, sum, 1);
            sum += __shfl_xor_sync(0xffffffffu, sum, 2);
            const float inv = 1.0f / sum;
            const long long row = bh * SQ + q0 + (warp * MT + mt) * 16 + g + hf * 8;
#pragma unroll
            for (int dt = 0; dt < DT; ++dt) {
                storage_t pair[2] = {from_float(acc[mt][dt][2 * hf] * inv), from_float(acc[mt][dt][2 * hf + 1] * inv)};
                *(unsigned *)(o + row * D + dt * 8 + 2 * t) = (unsigned)pair[0] | ((unsigned)pair[1] << 16);
            }
            if (t == 0) lse[row] = (m[mt][hf] + log2f(sum)) * LN2;
        }
}
