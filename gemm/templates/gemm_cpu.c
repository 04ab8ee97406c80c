/* gemm_cpu.c - the blocked C/OpenMP GEMM. Defined above this text by the
 * generator: IN_T, OUT_T, ACC_T and LOAD_IN, LOAD_OUT, STORE_OUT (element
 * i of a buffer as ACC_T, and back), GM GN GK, A_TRANS B_TRANS, ALPHA BETA
 * HAS_C, EPI_* (one of NONE, BIAS, GELU, SILU), ERF_F EXP_F, the buffer
 * indices BUF_*, the cache blocks MC NC KC, the register tile MR x NR,
 * THREADS; and for a convolution CONV with IMG_H IMG_W CH FS STRIDE
 * PAD OUT_P OUT_Q.
 *
 * Each thread takes MC x NC blocks of D; for each KC slice it packs A's
 * rows in panels of MR and B's columns in panels of NR (converted to ACC_T,
 * zero past the edges, so the register tile never checks bounds), sums
 * MR x NR tiles into its block of ACC_T, and applies the epilogue once. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline float bf16_to_float(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline uint16_t float_to_bf16(float v) {
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((bits >> 16) | 0x40u);   /* NaN stays NaN */
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return (uint16_t)(bits >> 16);
}

/* Element (i, k) of A: for a convolution, of the im2col view of x. */
static inline ACC_T a_at(const IN_T *a, long i, long k) {
#if CONV
    const long img = i / (OUT_P * OUT_Q), p = i / OUT_Q % OUT_P, q = i % OUT_Q;
    const long r = k / (FS * CH), s = k / CH % FS, c = k % CH;
    const long y = p * STRIDE - PAD + r, x = q * STRIDE - PAD + s;
    if (y < 0 || y >= IMG_H || x < 0 || x >= IMG_W) return 0;
    return LOAD_IN(a, ((img * IMG_H + y) * IMG_W + x) * CH + c);
#else
    return LOAD_IN(a, A_TRANS ? k * GM + i : i * GK + k);
#endif
}

static inline ACC_T b_at(const IN_T *b, long k, long j) { return LOAD_IN(b, B_TRANS ? j * GK + k : k * GN + j); }

/* pa[panel][kk][r]: rows i0.. of A in panels of MR, columns k0..k0+kc. */
static void pack_a(const IN_T *a, long i0, long mc, long k0, long kc, ACC_T *restrict pa) {
    for (long ir = 0; ir < mc; ir += MR)
        for (long kk = 0; kk < kc; kk++)
            for (long r = 0; r < MR; r++)
                pa[ir * kc + kk * MR + r] = ir + r < mc ? a_at(a, i0 + ir + r, k0 + kk) : 0;
}

/* pb[panel][kk][j]: columns j0.. of B in panels of NR, rows k0..k0+kc. */
static void pack_b(const IN_T *b, long j0, long nc, long k0, long kc, ACC_T *restrict pb) {
    for (long jr = 0; jr < nc; jr += NR)
        for (long kk = 0; kk < kc; kk++)
            for (long j = 0; j < NR; j++)
                pb[jr * kc + kk * NR + j] = jr + j < nc ? b_at(b, k0 + kk, j0 + jr + j) : 0;
}

/* c[r][j] += sum over kc of pa[kk][r] pb[kk][j], the tile held in registers. */
static inline void tile(const ACC_T *restrict pa, const ACC_T *restrict pb, long kc, ACC_T *restrict c) {
    ACC_T acc[MR][NR];
    memset(acc, 0, sizeof acc);
    for (long kk = 0; kk < kc; kk++)
        for (int r = 0; r < MR; r++) {
            const ACC_T av = pa[kk * MR + r];
#pragma omp simd
            for (int j = 0; j < NR; j++) acc[r][j] += av * pb[kk * NR + j];
        }
    for (int r = 0; r < MR; r++)
#pragma omp simd
        for (int j = 0; j < NR; j++) c[r * NC + j] += acc[r][j];
}

static inline ACC_T epilogue(void *const *buffers, long i, long j, ACC_T acc) {
    ACC_T v = (ACC_T)ALPHA * acc;
#if HAS_C
    v += (ACC_T)BETA * LOAD_OUT((const OUT_T *)buffers[BUF_C], i * GN + j);
#endif
#if EPI_BIAS
    v += LOAD_OUT((const OUT_T *)buffers[BUF_BIAS], j);
#elif EPI_GELU
    v = (ACC_T)0.5 * v * ((ACC_T)1 + ERF_F(v * (ACC_T)0.70710678118654752440));
#elif EPI_SILU
    v = v / ((ACC_T)1 + EXP_F(-v));
#endif
    (void)buffers, (void)i, (void)j;
    return v;
}

/* The kernel; the generator adds its entry point. */
static void gemm_blocks(void *const *buffers) {
    const IN_T *a = buffers[BUF_A], *b = buffers[BUF_B];
    OUT_T *d = buffers[BUF_D];
    const long mblocks = (GM + MC - 1) / MC, nblocks = (GN + NC - 1) / NC;
#pragma omp parallel num_threads(THREADS)
    {
        ACC_T *pa = malloc(sizeof(ACC_T) * MC * KC), *pb = malloc(sizeof(ACC_T) * NC * KC),
              *cb = malloc(sizeof(ACC_T) * MC * NC);
        const int ok = pa && pb && cb;   /* else D stays unwritten, and verification says so */
#pragma omp for collapse(2) schedule(dynamic)
        for (long ib = 0; ib < mblocks; ib++)
            for (long jb = 0; jb < nblocks; jb++) {
                if (!ok) continue;
                {
                    const long i0 = ib * MC, j0 = jb * NC;
                    const long mc = GM - i0 < MC ? GM - i0 : MC, nc = GN - j0 < NC ? GN - j0 : NC;
                    memset(cb, 0, sizeof(ACC_T) * MC * NC);
                    for (long k0 = 0; k0 < GK; k0 += KC) {
                        const long kc = GK - k0 < KC ? GK - k0 : KC;
                        pack_a(a, i0, mc, k0, kc, pa);
                        pack_b(b, j0, nc, k0, kc, pb);
                        for (long ir = 0; ir < mc; ir += MR)
                            for (long jr = 0; jr < nc; jr += NR) tile(pa + ir * kc, pb + jr * kc, kc, cb + ir * NC + jr);
                    }
                    for (long r = 0; r < mc; r++)
                        for (long j = 0; j < nc; j++)
                            STORE_OUT(d, (i0 + r) * GN + j0 + j, epilogue(buffers, i0 + r, j0 + j, cb[r * NC + j]));
                }
        }
        free(pa);
        free(pb);
        free(cb);
    }
}
