// prefill_simple.cu - attention prefill for any architecture, dtype and
// shape: the reference-quality CUDA kernel. A block takes BQ query rows of
// one head (grid: query tiles, H, B); its Q rows and each tile of BKV key and
// value rows are held in shared memory as f32. Each warp owns the rows
// warp, warp + WARPS, ...: a lane scores the keys lane, lane + 32, ... of the
// tile, the warp reduces their max and sum, and a lane accumulates the
// output dimensions lane, lane + 32, ... with the online softmax.
// Defined above this text: storage.cuh's macros, B, H, HKV, SQ, SKV_CAP, D,
// CAUSAL, SCALE, BQ, BKV, WARPS.

#define SKV SKV_CAP
#define GROUP (H / HKV)
#define RPW ((BQ + WARPS - 1) / WARPS)   // rows per warp
#define DPL ((D + 31) / 32)              // output dimensions per lane
#define KSTRIDE (D + 1)                  // padded rows: lanes reading one dimension of 32 keys hit 32 banks

__device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

extern "C" __global__ void __launch_bounds__(WARPS * 32)
attention_simple(const storage_t *__restrict__ q, const storage_t *__restrict__ k, const storage_t *__restrict__ v,
                 storage_t *__restrict__ o, float *__restrict__ lse)
{
    extern __shared__ float smem[];
    float *qs = smem, *ks = qs + BQ * D, *vs = ks + BKV * KSTRIDE, *ps = vs + BKV * D;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const long long b = blockIdx.z, h = blockIdx.y, bh = b * H + h, kv_head = b * HKV + h / GROUP;
    const long long q0 = (long long)blockIdx.x * BQ;
    const int nq = SQ - q0 < BQ ? (int)(SQ - q0) : BQ;
    const long long kv_end = CAUSAL ? min((long long)SKV, q0 + nq + SKV - SQ) : SKV;
    float *pw = ps + warp * BKV;

    for (int x = threadIdx.x; x < nq * D; x += WARPS * 32) qs[x] = to_float(q[(bh * SQ + q0) * D + x]) * SCALE;
    float m[RPW], l[RPW], acc[RPW][DPL];
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
        m[r] = NEG_INF;
        l[r] = 0;
#pragma unroll
        for (int c = 0; c < DPL; ++c) acc[r][c] = 0;
    }
    for (long long k0 = 0; k0 < kv_end; k0 += BKV) {
        const int nk = kv_end - k0 < BKV ? (int)(kv_end - k0) : BKV;
        __syncthreads();   // the previous tile is used up (and the Q rows are in)
        for (int x = threadIdx.x; x < nk * D; x += WARPS * 32) {
            const long long g = (kv_head * SKV + k0) * D + x;
            ks[(x / D) * KSTRIDE + x % D] = to_float(k[g]);
            vs[x] = to_float(v[g]);
        }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < RPW; ++r) {
            const int i = warp + r * WARPS;
            if (i >= nq) continue;
            const long long vis = CAUSAL ? q0 + i + SKV - SQ + 1 - k0 : nk;
            const int visible = vis < nk ? (int)vis : nk;
            if (visible <= 0) continue;
            float mt = m[r];
            for (int j = lane; j < visible; j += 32) {
                float s = 0;
                for (int e = 0; e < D; ++e) s += qs[i * D + e] * ks[j * KSTRIDE + e];
                pw[j] = s;
                mt = fmaxf(mt, s);
            }
            mt = warp_max(mt);
            float sum = 0;
            for (int j = lane; j < visible; j += 32) {
                const float p = expf(pw[j] - mt);
                pw[j] = p;
                sum += p;
            }
            sum = warp_sum(sum);
            __syncwarp();   // the warp's probabilities are in pw
            const float alpha = expf(m[r] - mt);
            l[r] = l[r] * alpha + sum;
            m[r] = mt;
#pragma unroll
            for (int c = 0; c < DPL; ++c) {
                const int e = lane + 32 * c;
                if (e >= D) break;
                float a = acc[r][c] * alpha;
                for (int j = 0; j < visible; ++j) a += pw[j] * vs[j * D + e];
                acc[r][c] = a;
            }
            __syncwarp();   // pw is read before the next row writes it
        }
    }
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
        const int i = warp + r * WARPS;
        if (i >= nq) continue;
        const long long row = bh * SQ + q0 + i;
#pragma unroll
        for (int c = 0; c < DPL; ++c) {
            const int e = lane + 32 * c;
            if (e < D) o[row * D + e] = from_float(acc[r][c] / l[r]);
        }
        if (lane == 0) lse[row] = m[r] + logf(l[r]);
    }
}
