/* decode_cpu.c - split-KV attention decode in C/OpenMP over a paged (or
 * unpaged) KV cache. The first parallel loop gives each (sequence, K/V
 * head, split) to a thread: it walks the split's keys once for the GROUP
 * query heads that share them, keeping each head's running max, sum and
 * output, and writes each head's normalized partial output and
 * log-sum-exp; the second loop combines the splits of each query row,
 * weighting each by exp(lse_split - lse). The KV length is the run-time
 * scalar Skv (at most SKV_CAP, the capacity the buffers have). Defined
 * above this text: the storage macros, B, H, HKV, SKV_CAP, D, SCALE, PAGE
 * (0: unpaged), PAGES_PER_SEQ, THREADS, SPLITS, MAX_SPLITS. */
#include <math.h>

#define GROUP (H / HKV)
#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* element offset of key row j of K/V head hk of sequence b */
static inline long long kv_row(const int *table, long long b, long long hk, long long j) {
#if PAGE
    return (((long long)table[b * PAGES_PER_SEQ + j / PAGE] * HKV + hk) * PAGE + j % PAGE) * D;
#else
    (void)table;
    return ((b * HKV + hk) * SKV_CAP + j) * D;
#endif
}

void tess_attention_decode(void *const *buffers, const void *const *scalars) {
    const long long skv = *(const long long *)scalars[0];
    const storage_t *restrict q = buffers[0], *restrict k = buffers[1], *restrict v = buffers[2];
#if PAGE
    const int *restrict table = buffers[3];
    storage_t *restrict o = buffers[4];
    float *restrict lse = buffers[5], *restrict part_o = buffers[6], *restrict part_lse = buffers[7];
#else
    const int *table = 0;
    storage_t *restrict o = buffers[3];
    float *restrict lse = buffers[4], *restrict part_o = buffers[5], *restrict part_lse = buffers[6];
#endif
    const long long chunk = (skv + SPLITS - 1) / SPLITS;
    #pragma omp parallel num_threads(THREADS)
    {
        #pragma omp for schedule(static)
        for (long long task = 0; task < (long long)B * HKV * SPLITS; task++) {
            const long long split = task % SPLITS, hk = task / SPLITS % HKV, b = task / (SPLITS * HKV);
            const long long j0 = split * chunk, j1 = MIN(skv, j0 + chunk);
            float qf[GROUP][D], acc[GROUP][D], m[GROUP], l[GROUP], kf[D], vf[D];
            for (int g = 0; g < GROUP; g++) {
                for (int e = 0; e < D; e++) {
                    qf[g][e] = load_f32(q, ((b * H) + hk * GROUP + g) * D + e) * SCALE;
                    acc[g][e] = 0;
                }
                m[g] = -INFINITY;
                l[g] = 0;
            }
            for (long long j = j0; j < j1; j++) {
                const long long row = kv_row(table, b, hk, j);
                for (int e = 0; e < D; e++) {
                    kf[e] = load_f32(k, row + e);
                    vf[e] = load_f32(v, row + e);
                }
                for (int g = 0; g < GROUP; g++) {
                    float s = 0;
                    #pragma omp simd reduction(+ : s)
                    for (int e = 0; e < D; e++) s += qf[g][e] * kf[e];
                    if (s > m[g]) {   /* a new max: rescale what was summed */
                        const float alpha = expf(m[g] - s);
                        l[g] *= alpha;
                        for (int e = 0; e < D; e++) acc[g][e] *= alpha;
                        m[g] = s;
                    }
                    const float p = expf(s - m[g]);
                    l[g] += p;
                    #pragma omp simd
                    for (int e = 0; e < D; e++) acc[g][e] += p * vf[e];
                }
            }
            for (int g = 0; g < GROUP; g++) {
                const long long slot = (b * H + hk * GROUP + g) * MAX_SPLITS + split;
                const float inv = l[g] > 0 ? 1 / l[g] : 0;
                for (int e = 0; e < D; e++) part_o[slot * D + e] = acc[g][e] * inv;
                part_lse[slot] = l[g] > 0 ? m[g] + logf(l[g]) : -INFINITY;
            }
        }
        #pragma omp for schedule(static)
        for (long long row = 0; row < (long long)B * H; row++) {
            const float *pl = part_lse + row * MAX_SPLITS;
            float mx = -INFINITY, sum = 0, out[D];
            for (int s = 0; s < SPLITS; s++) mx = fmaxf(mx, pl[s]);
            for (int e = 0; e < D; e++) out[e] = 0;
            for (int s = 0; s < SPLITS; s++) {
                if (pl[s] == -INFINITY) continue;   /* a split past the KV length */
                const float w = expf(pl[s] - mx);
                sum += w;
                for (int e = 0; e < D; e++) out[e] += w * part_o[(row * MAX_SPLITS + s) * D + e];
            }
            for (int e = 0; e < D; e++) store_f32(o, row * D + e, out[e] / sum);
            lse[row] = mx + logf(sum);
        }
    }
}
