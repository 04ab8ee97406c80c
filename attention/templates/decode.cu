// decode.cu - split-KV attention decode (flash-decoding) over a paged or
// unpaged KV cache, in two launches with the same arguments.
//
// attention_decode_split: a block per (split, K/V head and GB of the GROUP
// query heads that share it, sequence) walks the split's keys once for its
// GB heads. A key is
// the work of LPK lanes, each holding EPL of its D elements (vector loads
// of VEC elements); a warp takes 32 / LPK keys at a time, UNROLL of them
// per lane group loaded before any is used. Each lane group keeps, per
// query head, the running max and sum (log2 domain) and its part of the
// output; the groups merge by shuffles, the warps through shared memory,
// and the block writes each head's normalized partial output and
// log-sum-exp to the scratch buffers.
// attention_decode_combine: a block per query row weights the splits by
// exp(lse_split - lse) and writes O and the log-sum-exp.
//
// The KV length is the run-time argument Skv (at most SKV_CAP, which sizes
// the buffers). Defined above this text: storage.cuh's macros, B, H, HKV,
// SKV_CAP, D, SCALE, PAGE (0: unpaged), PAGES_PER_SEQ, SPLITS, MAX_SPLITS,
// WARPS, LPK, EPL, VEC, UNROLL, GB (GROUP a multiple of it).

#define GROUP (H / HKV)
#define KPW (32 / LPK)   // keys a warp takes at once
#define SCALE_LOG2 (SCALE * LOG2E)

struct __align__(VEC * STORAGE_BYTES) vec_t {
    storage_t v[VEC];
};

#if PAGE
#define TABLE_ARG const int *__restrict__ table,
__device__ __forceinline__ long long kv_row(const int *table, long long b, long long hk, long long j)
{
    return (((long long)table[b * PAGES_PER_SEQ + j / PAGE] * HKV + hk) * PAGE + j % PAGE) * D;
}
#else
#define TABLE_ARG
__device__ __forceinline__ long long kv_row(const int *table, long long b, long long hk, long long j)
{
    return ((b * HKV + hk) * SKV_CAP + j) * D;
}
#endif

// The EPL elements of a row this lane holds (zeros past D).
__device__ __forceinline__ void load_part(const storage_t *row, int first, float out[EPL])
{
#pragma unroll
    for (int c = 0; c < EPL; c += VEC) {
        if (first + c < D) {
            const vec_t u = *reinterpret_cast<const vec_t *>(row + first + c);
#pragma unroll
            for (int x = 0; x < VEC; ++x) out[c + x] = to_float(u.v[x]);
        } else {
#pragma unroll
            for (int x = 0; x < VEC; ++x) out[c + x] = 0;
        }
    }
}

// (m, l, acc) merged with the state `offset` lanes away, in log2 units.
__device__ __forceinline__ void merge_lanes(float &m, float &l, float acc[EPL], int offset)
{
    const float m2 = __shfl_xor_sync(0xffffffffu, m, offset), l2 = __shfl_xor_sync(0xffffffffu, l, offset);
    const float mx = fmaxf(m, m2);
    const float a = mx == NEG_INF ? 0 : exp2f(m - mx), a2 = mx == NEG_INF ? 0 : exp2f(m2 - mx);
#pragma unroll
    for (int e = 0; e < EPL; ++e) acc[e] = acc[e] * a + __shfl_xor_sync(0xffffffffu, acc[e], offset) * a2;
    l = l * a + l2 * a2;
    m = mx;
}

extern "C" __global__ void __launch_bounds__(WARPS * 32)
attention_decode_split(const storage_t *__restrict__ q, const storage_t *__restrict__ k,
                       const storage_t *__restrict__ v, TABLE_ARG storage_t *__restrict__ o, float *__restrict__ lse,
                       float *__restrict__ part_o, float *__restrict__ part_lse, long long Skv)
{
#if !PAGE
    const int *table = 0;
#endif
    __shared__ float red_m[WARPS][GB], red_l[WARPS][GB], red_o[WARPS][GB][LPK * EPL];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, gl = lane % LPK, key_lane = lane / LPK;
    const long long split = blockIdx.x, hk = blockIdx.y / (GROUP / GB), b = blockIdx.z;
    const long long h0 = hk * GROUP + blockIdx.y % (GROUP / GB) * GB;   // the block's first query head
    const long long chunk = (Skv + SPLITS - 1) / SPLITS, j0 = split * chunk, j1 = min(Skv, j0 + chunk);
    const int first = gl * EPL;

    float qf[GB][EPL], acc[GB][EPL], m[GB], l[GB];
#pragma unroll
    for (int g = 0; g < GB; ++g) {
        load_part(q + ((b * H) + h0 + g) * D, first, qf[g]);
#pragma unroll
        for (int e = 0; e < EPL; ++e) {
            qf[g][e] *= SCALE_LOG2;
            acc[g][e] = 0;
        }
        m[g] = NEG_INF;
        l[g] = 0;
    }
    for (long long base = j0 + (long long)warp * KPW * UNROLL; base < j1; base += (long long)WARPS * KPW * UNROLL) {
        float kf[UNROLL][EPL], vf[UNROLL][EPL];
        bool valid[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const long long j = base + u * KPW + key_lane;
            valid[u] = j < j1;
            const long long row = valid[u] ? kv_row(table, b, hk, j) : 0;
            load_part(k + row, first, kf[u]);
            load_part(v + row, first, vf[u]);
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
#pragma unroll
            for (int g = 0; g < GB; ++g) {
                float s = 0;
#pragma unroll
                for (int e = 0; e < EPL; ++e) s += qf[g][e] * kf[u][e];
#pragma unroll
                for (int off = LPK / 2; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
                if (!valid[u]) continue;
                if (s > m[g]) {   // a new max: rescale what was summed
                    const float alpha = exp2f(m[g] - s);
                    l[g] *= alpha;
#pragma unroll
                    for (int e = 0; e < EPL; ++e) acc[g][e] *= alpha;
                    m[g] = s;
                }
                const float p = exp2f(s - m[g]);
                l[g] += p;
#pragma unroll
                for (int e = 0; e < EPL; ++e) acc[g][e] += p * vf[u][e];
            }
    }
#pragma unroll
    for (int g = 0; g < GB; ++g) {
#pragma unroll
        for (int off = LPK; off < 32; off <<= 1) merge_lanes(m[g], l[g], acc[g], off);
        if (key_lane == 0) {
#pragma unroll
            for (int e = 0; e < EPL; ++e) red_o[warp][g][first + e] = acc[g][e];
            if (gl == 0) {
                red_m[warp][g] = m[g];
                red_l[warp][g] = l[g];
            }
        }
    }
    __syncthreads();
    for (int x = threadIdx.x; x < GB * D; x += WARPS * 32) {
        const int g = x / D, e = x % D;
        float mx = NEG_INF;
        for (int w = 0; w < WARPS; ++w) mx = fmaxf(mx, red_m[w][g]);
        float sum = 0, out = 0;
        for (int w = 0; w < WARPS && mx != NEG_INF; ++w) {
            const float a = exp2f(red_m[w][g] - mx);
            sum += red_l[w][g] * a;
            out += red_o[w][g][e] * a;
        }
        const long long slot = ((b * H) + h0 + g) * MAX_SPLITS + split;
        part_o[slot * D + e] = sum > 0 ? out / sum : 0;
        if (e == 0) part_lse[slot] = sum > 0 ? (mx + log2f(sum)) * LN2 : NEG_INF;
    }
}

extern "C" __global__ void __launch_bounds__(COMBINE_THREADS)
attention_decode_combine(const storage_t *__restrict__ q, const storage_t *__restrict__ k,
                         const storage_t *__restrict__ v, TABLE_ARG storage_t *__restrict__ o,
                         float *__restrict__ lse, float *__restrict__ part_o, float *__restrict__ part_lse,
                         long long Skv)
{
    const long long row = blockIdx.x;
    const float *pl = part_lse + row * MAX_SPLITS;
    float mx = NEG_INF;
    for (int s = 0; s < SPLITS; ++s) mx = fmaxf(mx, pl[s]);
    float sum = 0;
    for (int s = 0; s < SPLITS; ++s) sum += pl[s] == NEG_INF ? 0 : expf(pl[s] - mx);
    for (int e = threadIdx.x; e < D; e += COMBINE_THREADS) {
        float out = 0;
        for (int s = 0; s < SPLITS; ++s)
            if (pl[s] != NEG_INF) out += expf(pl[s] - mx) * part_o[(row * MAX_SPLITS + s) * D + e];
        o[row * D + e] = from_float(out / sum);
    }
    if (threadIdx.x == 0) lse[row] = mx + logf(sum);
}
