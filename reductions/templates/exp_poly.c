/* exp_poly.c - expf in straight-line arithmetic that `omp simd` can
 * vectorize (libm's expf is a call per element). exp(x) = 2^k exp(r) with
 * k = round(x / ln 2) and r = x - k ln 2 in two parts, |r| <= ln 2 / 2,
 * exp(r) by its Taylor polynomial of degree 7: relative error below 1e-7
 * before rounding, as exact as expf for the row-wise operators. Arguments
 * are clamped to [-87.33, 88.72]; where 2^k would be subnormal the result
 * is 0, an absolute error under 2.4e-38. k is rounded by adding and
 * subtracting 1.5 * 2^23 (exact for |k| < 2^22), not by floorf, which GCC
 * does not vectorize unless traps are ruled out (-fno-trapping-math);
 * under -ffast-math, whose reassociation would undo the addition, by floorf. */
#include <stdint.h>
#include <string.h>

#pragma omp declare simd notinbranch
static inline float exp_poly(float x) {
    /* comparisons, not fminf and fmaxf: those are calls unless NaNs are ruled out */
    x = x < -87.33f ? -87.33f : x > 88.72f ? 88.72f : x;
#ifdef __FAST_MATH__
    const float k = floorf(x * 1.44269504f + 0.5f);
#else
    const float k = (x * 1.44269504f + 0x1.8p23f) - 0x1.8p23f;
#endif
    float r = fmaf(k, -0.693145751953125f, x);
    r = fmaf(k, -1.428606765330187e-06f, r);
    float p = 1.0f / 5040;
    p = fmaf(p, r, 1.0f / 720);
    p = fmaf(p, r, 1.0f / 120);
    p = fmaf(p, r, 1.0f / 24);
    p = fmaf(p, r, 1.0f / 6);
    p = fmaf(p, r, 0.5f);
    p = fmaf(p, r, 1.0f);
    p = fmaf(p, r, 1.0f);
    const int32_t e = (int32_t)k + 126;   /* 2^k as 2 * 2^(k-1): k = 128 stays finite */
    const uint32_t bits = (uint32_t)e << 23;
    float half_scale;
    memcpy(&half_scale, &bits, sizeof half_scale);
    return 2.0f * p * half_scale;
}
