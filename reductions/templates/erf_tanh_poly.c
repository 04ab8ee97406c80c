/* erf_tanh_poly.c - erff and tanhf in straight-line arithmetic on top of
 * exp_poly (exp_poly.c, above this text), so that `omp simd` vectorizes the
 * activations (libm's are a call per element). Both are within 1.5e-7 of
 * the exact values in absolute terms, well inside the error of an f32 or
 * 16-bit result of the activations built on them (|x| times that, halved).
 *   erf: 1 - (a1 t + ... + a5 t^5) exp(-x^2), t = 1 / (1 + p |x|), with the
 *        sign of x (Abramowitz and Stegun 7.1.26: |error| <= 1.5e-7)
 *   tanh: 1 - 2 / (1 + exp(2 |u|)), with the sign of u */

#pragma omp declare simd notinbranch
static inline float erf_poly(float x) {
    const float a = x < 0 ? -x : x, t = 1.0f / (1.0f + 0.3275911f * a);
    float p = 1.061405429f;
    p = fmaf(p, t, -1.453152027f);
    p = fmaf(p, t, 1.421413741f);
    p = fmaf(p, t, -0.284496736f);
    p = fmaf(p, t, 0.254829592f);
    const float e = 1.0f - p * t * exp_poly(-a * a);
    return x < 0 ? -e : e;
}

#pragma omp declare simd notinbranch
static inline float tanh_poly(float u) {
    const float a = u < 0 ? -u : u, e = 1.0f - 2.0f / (1.0f + exp_poly(2.0f * a));
    return u < 0 ? -e : e;
}
