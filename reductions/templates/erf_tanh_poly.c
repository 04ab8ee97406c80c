/* erf_tanh_poly.c - erff and tanhf in straight-line arithmetic, so that
 * `omp simd` vectorizes the activations in C (libm's are a call per
 * element) and a GPU spends fewer instructions than libdevice's erff. Both
 * are within 1.5e-7 of the exact values in absolute terms, well inside the
 * error of an f32 or 16-bit result of the activations built on them (|x|
 * times that, halved). Defined above this text: POLY_FN (the functions'
 * qualifiers), POLY_SIMD (a pragma that vectorizes them, or nothing),
 * POLY_EXP (an exp of that accuracy: exp_poly.c's in C, __expf on the GPU)
 * and POLY_RCP(v) (1 / v for erf: exact in C, __fdividef on the GPU).
 *   erf: 1 - (a1 t + ... + a5 t^5) exp(-x^2), t = 1 / (1 + p |x|), with the
 *        sign of x (Abramowitz and Stegun 7.1.26: |error| <= 1.5e-7)
 *   tanh: 1 - 2 / (1 + exp(2 |u|)), with the sign of u */

POLY_SIMD
POLY_FN float erf_poly(float x) {
    const float a = x < 0 ? -x : x, t = POLY_RCP(1.0f + 0.3275911f * a);
    float p = 1.061405429f;
    p = fmaf(p, t, -1.453152027f);
    p = fmaf(p, t, 1.421413741f);
    p = fmaf(p, t, -0.284496736f);
    p = fmaf(p, t, 0.254829592f);
    const float e = 1.0f - p * t * POLY_EXP(-a * a);
    return x < 0 ? -e : e;
}

POLY_SIMD
POLY_FN float tanh_poly(float u) {
    const float a = u < 0 ? -u : u, e = 1.0f - 2.0f / (1.0f + POLY_EXP(2.0f * a));
    return u < 0 ? -e : e;
}
