/* activation.h - the activations' formulas in f32, shared by the generated
 * C and CUDA kernels. Defined above this text: ACT_FN (the functions'
 * qualifiers), EXP_F, ERF_F and TANH_F (the exact functions: libdevice's on
 * the GPU, or erf_tanh_poly.c's erf, straight-line ones that vectorize in
 * C), FAST_EXP_F (an exp,
 * fast where the target has one), HW_TANH
 * (1: the GPU's tanh.approx.f32, one instruction with a relative error
 * below 2^-10.9; 0: tanh from the fast exp), one of ACT_GELU, ACT_GELU_TANH,
 * ACT_SILU, ACT_SWIGLU, and the shortcuts, 0 or 1:
 *   APPROX     gelu: the tanh form with the fast tanh on |x| <= 3 (within
 *              4.8e-4 of the erf form there), the exact erf outside: the
 *              guard keeps every input, not only typical ones, in budget
 *   FAST_TANH  gelu_tanh: the fast tanh
 *   FAST_EXP   silu, swiglu: the fast exp */

#if HW_TANH
ACT_FN float fast_tanh(float u) {
    float t;
    asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(u));
    return t;
}
#else
ACT_FN float fast_tanh(float u) { return 1.0f - 2.0f / (1.0f + FAST_EXP_F(2.0f * u)); }
#endif

ACT_FN float gelu_tanh_form(float x, int fast) {
    const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);   /* sqrt(2/pi) (x + 0.044715 x^3) */
    return 0.5f * x * (1.0f + (fast ? fast_tanh(u) : TANH_F(u)));
}

ACT_FN float sigmoid_times(float x, int fast) { return x / (1.0f + (fast ? FAST_EXP_F(-x) : EXP_F(-x))); }

#if ACT_GELU
ACT_FN float activate(float x) {
    if (APPROX && fabsf(x) <= 3.0f) return gelu_tanh_form(x, 1);
    return 0.5f * x * (1.0f + ERF_F(x * 0.7071067811865476f));
}
#elif ACT_GELU_TANH
ACT_FN float activate(float x) { return gelu_tanh_form(x, FAST_TANH); }
#elif ACT_SILU
ACT_FN float activate(float x) { return sigmoid_times(x, FAST_EXP); }
#elif ACT_SWIGLU
ACT_FN float activate2(float gate, float up) { return sigmoid_times(gate, FAST_EXP) * up; }
#else
#error "no ACT_ operator defined"
#endif
