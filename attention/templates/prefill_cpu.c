/* prefill_cpu.c - attention prefill in C/OpenMP. A task of the parallel
 * loop is one tile of BQ query rows of one head; it walks the key/value
 * rows in tiles of BKV, converted to f32 once per tile, keeping each row's
 * running max m, running sum l and unnormalized output acc (the online
 * softmax: no score matrix beyond one tile). A causal tile stops at the
 * last key its last row sees. Defined above this text: the storage macros,
 * B, H, HKV, SQ, SKV_CAP, D, CAUSAL, SCALE, THREADS, BQ, BKV. */
#include <math.h>

#define SKV SKV_CAP
#define GROUP (H / HKV)
#define NQT ((SQ + BQ - 1) / BQ)
#define MIN(a, b) ((a) < (b) ? (a) : (b))

void tess_attention(void *const *buffers) {
    const storage_t *restrict q = buffers[0], *restrict k = buffers[1], *restrict v = buffers[2];
    storage_t *restrict o = buffers[3];
    float *restrict lse = buffers[4];
    #pragma omp parallel for num_threads(THREADS) schedule(dynamic, 1)
    for (long long task = 0; task < (long long)B * H * NQT; task++) {
        const long long qt = task % NQT, bh = task / NQT, b = bh / H, h = bh % H;
        const long long q0 = qt * BQ, nq = MIN(BQ, SQ - q0), kv_head = b * HKV + h / GROUP;
        const long long kv_end = CAUSAL ? MIN(SKV, q0 + nq + SKV - SQ) : SKV;
        float qf[BQ][D], kf[BKV][D], vf[BKV][D], p[BKV], acc[BQ][D], m[BQ], l[BQ];
        for (long long i = 0; i < nq; i++) {
            for (int e = 0; e < D; e++) {
                qf[i][e] = load_f32(q, ((bh * SQ) + q0 + i) * D + e) * SCALE;
                acc[i][e] = 0;
            }
            m[i] = -INFINITY;
            l[i] = 0;
        }
        for (long long k0 = 0; k0 < kv_end; k0 += BKV) {
            const long long nk = MIN(BKV, kv_end - k0);
            for (long long j = 0; j < nk; j++)
                for (int e = 0; e < D; e++) {
                    kf[j][e] = load_f32(k, (kv_head * SKV + k0 + j) * D + e);
                    vf[j][e] = load_f32(v, (kv_head * SKV + k0 + j) * D + e);
                }
            for (long long i = 0; i < nq; i++) {
                const long long visible = CAUSAL ? MIN(nk, q0 + i + SKV - SQ + 1 - k0) : nk;
                if (visible <= 0) continue;
                float mt = m[i];
                for (long long j = 0; j < visible; j++) {
                    float s = 0;
                    #pragma omp simd reduction(+ : s)
                    for (int e = 0; e < D; e++) s += qf[i][e] * kf[j][e];
                    p[j] = s;
                    mt = fmaxf(mt, s);
                }
                const float alpha = expf(m[i] - mt);
                float sum = 0;
                for (long long j = 0; j < visible; j++) {
                    p[j] = expf(p[j] - mt);
                    sum += p[j];
                }
                l[i] = l[i] * alpha + sum;
                m[i] = mt;
                #pragma omp simd
                for (int e = 0; e < D; e++) acc[i][e] *= alpha;
                for (long long j = 0; j < visible; j++) {
                    #pragma omp simd
                    for (int e = 0; e < D; e++) acc[i][e] += p[j] * vf[j][e];
                }
            }
        }
        for (long long i = 0; i < nq; i++) {
            const float inv = 1 / l[i];
            for (int e = 0; e < D; e++) store_f32(o, ((bh * SQ) + q0 + i) * D + e, acc[i][e] * inv);
            lse[bh * SQ + q0 + i] = m[i] + logf(l[i]);
        }
    }
}
