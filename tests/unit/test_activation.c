/*
 * test_activation.c - the elementwise activations (gelu, gelu_tanh, silu,
 * swiglu) and their shortcuts on the cpu:
 *   - the float64 references against known values;
 *   - buffers (the gated form reads two inputs) and compulsory bytes;
 *   - the cpu kernels: the default, the largest and random configs in f32,
 *     bf16 and f16 on lengths that leave remainders, verified by the
 *     hardware evaluator on random, second-seed and typical inputs;
 *   - gelu's guarded approximation (the tanh form on |x| <= 3, within 4.8e-4
 *     of the erf form): accepted under a budget of 1e-3 on typical inputs
 *     (magnitudes up to 1e4 take the exact path), rejected under 1e-5, so
 *     its error is measured, not assumed.
 */
#include <math.h>
#include "reductions/activation.h"
#include "rowwise_check.h"
#include "transfer/builtin.h"

static const tess_backend_ops *cpu;
static tess_device cpu_dev;

static double reference_of(const char *op_name, double x, double up) {
    const tess_op *op = tess_op_find(op_name);
    const int64_t shape[1] = {1};
    tess_task t;
    CHECK_OK(tess_op_make_task(op, TESS_F32, TESS_F32, TESS_F32, shape, 1, NULL, &t));
    float in[2] = {(float)x, (float)up}, y = NAN;
    void *bufs[3] = {&in[0], &in[1], &y};
    if (tess_activation_of(op)->ninputs == 1) bufs[1] = &y;
    CHECK_OK(op->reference(op, &t, bufs));
    return y;
}

static void check_references(void) {
    CHECK_NEAR(reference_of("gelu", 1, 0), 0.8413447460685429, 1e-7);
    CHECK_NEAR(reference_of("gelu", -2, 0), -0.04550026389635842, 1e-8);
    CHECK_NEAR(reference_of("gelu_tanh", 1, 0), 0.8411919906082768, 1e-7);
    CHECK_NEAR(reference_of("silu", 1, 0), 0.7310585786300049, 1e-7);
    CHECK_NEAR(reference_of("silu", -100, 0), -100 / (1 + exp(100.0)), 1e-40);
    CHECK_NEAR(reference_of("swiglu", 1, 2), 2 * 0.7310585786300049, 1e-6);

    const tess_op *sw = tess_op_find("swiglu");
    const int64_t shape[2] = {4, 8};
    tess_task t;
    CHECK_OK(tess_op_make_task(sw, TESS_BF16, TESS_BF16, TESS_BF16, shape, 2, NULL, &t));
    tess_buffer_list bufs;
    CHECK_OK(tess_op_buffers(sw, &t, &bufs));
    CHECK(bufs.n == 3 && strcmp(bufs.spec[1].name, "up") == 0 && bufs.spec[2].role == TESS_BUF_OUT);
    tess_buffer_list_free(&bufs);
    CHECK_NEAR(sw->bytes(sw, &t), 3.0 * 32 * 2, 0);
}

/* The gelu approximation: in budget at 1e-3, out of it at 1e-5 (f32 storage). */
static void check_guarded_approximation(void) {
    const tess_op *gelu = tess_op_find("gelu");
    static const char *const budgets[] = {"error_budget=0.001", "error_budget=1e-05"};
    for (int i = 0; i < 2; i++) {
        tess_task t = rowwise_task("gelu", TESS_F32, 4, 4099, budgets[i]);
        tess_space *s = NULL;
        CHECK_OK(tess_op_space(gelu, &t, &cpu_dev, &s));
        if (!s) return;
        tess_config c;
        CHECK_OK(tess_config_parse(s, "threads=1,simd=1,approx=1,fast_math=0", &c));
        tess_space_destroy(s);
        outcomes o = evaluate(cpu, &cpu_dev, gelu, &t, &c, 1);
        if (i == 0)
            CHECK_MSG(o.n[TESS_RESULT_OK] == 1, "gelu approx=1 under %s: %s", budgets[i], o.message);
        else
            CHECK_MSG(o.n[TESS_RESULT_WRONG_RESULT] == 1, "gelu approx=1 under %s: '%s'", budgets[i], o.message);
    }
}

/* silu compiled with -ffast-math: x / (1 + exp(-x)) assumes exp(-x) is
 * finite, which for x below -88 (typical inputs reach -100) libm's expf is
 * not; the C kernels' exp_poly clamps its argument, so the shortcut holds
 * there too, as the exact kernel does. */
static void check_fast_math_silu(void) {
    const tess_op *silu = tess_op_find("silu");
    tess_task t = rowwise_task("silu", TESS_BF16, 4, 1000, "error_budget=0.001");
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(silu, &t, &cpu_dev, &s));
    if (!s) return;
    tess_config c[2];
    CHECK_OK(tess_config_parse(s, "threads=1,simd=1,fast_math=1", &c[0]));
    CHECK_OK(tess_config_parse(s, "threads=1,simd=1,fast_math=0", &c[1]));
    tess_space_destroy(s);
    outcomes o = evaluate(cpu, &cpu_dev, silu, &t, &c[0], 1);
    CHECK_MSG(o.n[TESS_RESULT_OK] == 1, "silu fast_math=1: %s", o.message);
    o = evaluate(cpu, &cpu_dev, silu, &t, &c[1], 1);
    CHECK_MSG(o.n[TESS_RESULT_OK] == 1, "silu fast_math=0: %s", o.message);
}

int main(void) {
    CHECK_OK(tess_register_builtin());
    cpu = tess_backend_find("cpu");
    CHECK(cpu != NULL);
    if (!cpu) return check_finish("test_activation");
    CHECK_OK(cpu->probe(&cpu_dev));
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 5);
    check_references();
    static const char *const ops[] = {"gelu", "gelu_tanh", "silu", "swiglu"};
    for (int i = 0; i < 4; i++) {
        check_kernels(cpu, &cpu_dev, ops[i], TESS_F32, 3, 333, NULL, 2, rng);
        /* silu's fast-math shortcut fails typical inputs (check_fast_math_silu) */
        check_kernels(cpu, &cpu_dev, ops[i], TESS_BF16, 1, 1001, i < 2 ? "error_budget=0.001" : NULL, 2, rng);
        check_kernels(cpu, &cpu_dev, ops[i], TESS_F16, 2, 64, NULL, 2, rng);
    }
    check_guarded_approximation();
    check_fast_math_silu();
    gsl_rng_free(rng);
    return check_finish("test_activation");
}
