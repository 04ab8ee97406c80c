/* axis_reduce.c - the C/OpenMP kernel of `reduce` over (OUTER, N, INNER):
 * y[o][i] = FINISH(COMBINE over k of x[o][k][i]). Defined above this text:
 * OUTER, N, INNER, THREADS, TILE, INIT, COMBINE(a, b), OMP_REDUCTION (the
 * reduction clause's operator), FINISH(a), and storage.c's macros. */
#include <math.h>

void tess_reduce(void *const *buffers) {
    const storage_t *restrict x = buffers[0];
    storage_t *restrict y = buffers[1];
#if INNER == 1
    /* contiguous rows: one vectorized reduction each */
    #pragma omp parallel for num_threads(THREADS) schedule(static)
    for (long long o = 0; o < OUTER; o++) {
        const storage_t *restrict xo = x + o * N;
        float acc = INIT;
        #pragma omp simd reduction(OMP_REDUCTION : acc)
        for (long long k = 0; k < N; k++) acc = COMBINE(acc, load_real(xo, k));
        store_real(y, o, FINISH(acc));
    }
#else
    /* TILE columns at a time, each plane of the reduced axis added to them
     * as vectors */
    #pragma omp parallel for collapse(2) num_threads(THREADS) schedule(static)
    for (long long o = 0; o < OUTER; o++)
        for (long long i0 = 0; i0 < INNER; i0 += TILE) {
            const long long w = INNER - i0 < TILE ? INNER - i0 : TILE;
            float acc[TILE];
            for (long long i = 0; i < w; i++) acc[i] = INIT;
            for (long long k = 0; k < N; k++) {
                const storage_t *restrict xk = x + (o * N + k) * INNER + i0;
                #pragma omp simd
                for (long long i = 0; i < w; i++) acc[i] = COMBINE(acc[i], load_real(xk, i));
            }
            for (long long i = 0; i < w; i++) store_real(y, o * INNER + i0 + i, FINISH(acc[i]));
        }
#endif
}
