/*
 * test_rowwise.c - the row-wise operators (softmax, log_softmax,
 * cross_entropy, layernorm, rmsnorm, add_rmsnorm) and their error budget
 * on the cpu:
 *   - the float64 references against values worked out by hand;
 *   - tolerances: one unit in the last place of bf16 and f16 storage, the
 *     budget added on top; tasks that are not R x C, mixed dtypes, a
 *     negative budget or eps refused with a message;
 *   - the cpu kernels: the default, the largest and random configs of each
 *     operator in f32, bf16 and f16 on small shapes with remainders, verified
 *     by the hardware evaluator (random inputs, a second seed and typical
 *     inputs);
 *   - shortcuts appear in the spaces only under a budget; the planted unsafe
 *     one, softmax without max-subtraction, passes uniform [-1, 1] inputs
 *     and is recorded wrong_result on typical inputs (logits of magnitude 100).
 */
#include <math.h>
#include "core/problem.h"
#include "reductions/rowwise.h"
#include "rowwise_check.h"
#include "transfer/builtin.h"

static const tess_backend_ops *cpu;
static tess_device cpu_dev;

/* ---- references ------------------------------------------------------------------ */

static void check_references(void) {
    /* softmax of (0, ln 2, ln 3) is (1, 2, 3) / 6, also shifted by 100 */
    const tess_op *sm = tess_op_find("softmax");
    tess_task t = rowwise_task("softmax", TESS_F32, 2, 3, NULL);
    float x[6] = {0, (float)log(2.0), (float)log(3.0), 100, 100 + (float)log(2.0), 100 + (float)log(3.0)}, y[6];
    void *bufs[2] = {x, y};
    CHECK_OK(sm->reference(sm, &t, bufs));
    for (int i = 0; i < 6; i++) CHECK_NEAR(y[i], (i % 3 + 1) / 6.0, 1e-6);

    /* layernorm of (1, 2, 3, 6): mean 3, variance 3.5; weight 2, bias 1 */
    const tess_op *ln = tess_op_find("layernorm");
    t = rowwise_task("layernorm", TESS_F32, 1, 4, "eps=0.5");
    float lx[4] = {1, 2, 3, 6}, w[4] = {2, 2, 2, 2}, b[4] = {1, 1, 1, 1}, ly[4];
    void *lbufs[4] = {lx, w, b, ly};
    CHECK_OK(ln->reference(ln, &t, lbufs));
    for (int i = 0; i < 4; i++) CHECK_NEAR(ly[i], (lx[i] - 3) / 2.0 * 2 + 1, 1e-6);   /* sqrt(3.5 + 0.5) = 2 */

    /* rmsnorm of (3, 4): mean square 12.5, plus eps 3.5 is 16 */
    const tess_op *rms = tess_op_find("rmsnorm");
    t = rowwise_task("rmsnorm", TESS_F32, 1, 2, "eps=3.5");
    float rx[2] = {3, 4}, rw[2] = {1, -2}, ry[2];
    void *rbufs[3] = {rx, rw, ry};
    CHECK_OK(rms->reference(rms, &t, rbufs));
    CHECK_NEAR(ry[0], 0.75, 1e-7);
    CHECK_NEAR(ry[1], -2.0, 1e-7);

    /* log_softmax of (0, ln 2, ln 3): ln(k / 6) */
    const tess_op *lsm = tess_op_find("log_softmax");
    t = rowwise_task("log_softmax", TESS_F32, 2, 3, NULL);
    CHECK_OK(lsm->reference(lsm, &t, bufs));
    for (int i = 0; i < 6; i++) CHECK_NEAR(y[i], log((i % 3 + 1) / 6.0), 1e-5);   /* 100 + ln 2 as a float */

    /* cross-entropy of the same rows: lse = ln 6 (+ 100), loss = ln 6 - ln(k + 1) for label k */
    const tess_op *ce = tess_op_find("cross_entropy");
    t = rowwise_task("cross_entropy", TESS_F32, 2, 3, NULL);
    int32_t labels[2] = {2, 0};
    float loss[2], lse[2];
    void *cbufs[4] = {x, labels, loss, lse};
    CHECK_OK(ce->reference(ce, &t, cbufs));
    CHECK_NEAR(loss[0], log(6.0) - log(3.0), 1e-6);
    CHECK_NEAR(loss[1], log(6.0), 1e-5);
    CHECK_NEAR(lse[0], log(6.0), 1e-6);
    CHECK_NEAR(lse[1], 100 + log(6.0), 1e-5);
    labels[1] = 3;
    CHECK(ce->reference(ce, &t, cbufs) == TESS_ERR_ARG && strstr(tess_errmsg(), "label 3 of row 1"));

    /* add_rmsnorm: h = (1, 2) + (2, 2) = (3, 4), then rmsnorm as above; h written */
    const tess_op *add = tess_op_find("add_rmsnorm");
    t = rowwise_task("add_rmsnorm", TESS_F32, 1, 2, "eps=3.5");
    float ax[2] = {1, 2}, ares[2] = {2, 2}, ay[2], ah[2];
    void *abufs[5] = {ax, ares, rw, ay, ah};
    CHECK_OK(add->reference(add, &t, abufs));
    CHECK_NEAR(ah[0], 3, 0);
    CHECK_NEAR(ah[1], 4, 0);
    CHECK_NEAR(ay[0], 0.75, 1e-7);
    CHECK_NEAR(ay[1], -2.0, 1e-7);
}

/* Inputs come in chunks of their own seeds, filled in parallel: the same
 * values whatever the host's cores; labels within the row. */
static void check_inputs(void) {
    const tess_op *ce = tess_op_find("cross_entropy");
    tess_task t = rowwise_task("cross_entropy", TESS_BF16, 300, 1000, NULL);
    tess_problem *a = NULL, *b = NULL;
    CHECK_OK(tess_problem_create(ce, &t, 5, &a));
    CHECK_OK(tess_problem_create(ce, &t, 5, &b));
    if (!a || !b) return;
    CHECK(memcmp(a->host[0], b->host[0], 300 * 1000 * 2) == 0 && memcmp(a->host[1], b->host[1], 300 * 4) == 0);
    const int32_t *labels = a->host[1];
    int distinct = 0;
    double lo = 1, hi = -1;
    for (int64_t r = 0; r < 300; r++) {
        CHECK_MSG(labels[r] >= 0 && labels[r] < 1000, "label %d", labels[r]);
        distinct += r > 0 && labels[r] != labels[r - 1];
    }
    for (int64_t i = 0; i < 300 * 1000; i++) {
        lo = fmin(lo, tess_dtype_load(a->host[0], TESS_BF16, i));
        hi = fmax(hi, tess_dtype_load(a->host[0], TESS_BF16, i));
    }
    CHECK_MSG(distinct > 250 && lo < -0.99 && hi > 0.99 && lo >= -1 && hi <= 1, "labels %d distinct, x in [%g, %g]",
              distinct, lo, hi);
    /* chunks differ: the second chunk does not repeat the first */
    CHECK(memcmp(a->host[0], (const char *)a->host[0] + 65536 * 2, 1024) != 0);
    tess_problem_destroy(a);
    tess_problem_destroy(b);
}

/* ---- tasks and tolerances ---------------------------------------------------------- */

static void check_tasks(void) {
    const tess_op *sm = tess_op_find("softmax");
    tess_task t = rowwise_task("softmax", TESS_BF16, 4, 8, NULL);
    double exact = sm->tolerance(sm, &t);
    CHECK_MSG(exact >= 0x1p-7 && exact < 0x1p-6, "bf16 tolerance %g", exact);
    t = rowwise_task("softmax", TESS_F16, 4, 8, NULL);
    CHECK(sm->tolerance(sm, &t) >= 0x1p-10 && sm->tolerance(sm, &t) < 0x1p-9);
    t = rowwise_task("softmax", TESS_BF16, 4, 8, "error_budget=1e-3");
    CHECK_NEAR(sm->tolerance(sm, &t), exact + 1e-3, 1e-12);
    char key[TESS_KEY_MAX];
    CHECK_OK(tess_task_key(&t, key, sizeof key));
    CHECK_MSG(strcmp(key, "softmax:bf16:4x8:error_budget=0.001") == 0, "key %s", key);
    t = rowwise_task("layernorm", TESS_F32, 4, 8, NULL);
    CHECK_OK(tess_task_key(&t, key, sizeof key));
    CHECK_MSG(strcmp(key, "layernorm:f32:4x8:eps=1e-05,error_budget=0") == 0, "key %s", key);
    /* bytes: x read, y written, weight and bias read once */
    const tess_op *ln = tess_op_find("layernorm");
    CHECK_NEAR(ln->bytes(ln, &t), 4.0 * (2 * 32 + 2 * 8), 0);

    tess_task bad;
    const int64_t flat[1] = {64}, rc[2] = {4, 8};
    CHECK(tess_op_make_task(sm, TESS_F32, TESS_F32, TESS_F32, flat, 1, NULL, &bad) == TESS_ERR_ARG &&
          strstr(tess_errmsg(), "RxC"));
    CHECK(tess_op_make_task(sm, TESS_BF16, TESS_F32, TESS_BF16, rc, 2, NULL, &bad) == TESS_ERR_ARG &&
          strstr(tess_errmsg(), "one dtype"));
    CHECK(tess_op_make_task(sm, TESS_F64, TESS_F64, TESS_F64, rc, 2, NULL, &bad) == TESS_ERR_ARG &&
          strstr(tess_errmsg(), "not f64"));
    CHECK(tess_op_make_task(sm, TESS_F32, TESS_F32, TESS_F32, rc, 2, "error_budget=-1", &bad) == TESS_ERR_ARG &&
          strstr(tess_errmsg(), "error_budget"));
    CHECK(tess_op_make_task(ln, TESS_F32, TESS_F32, TESS_F32, rc, 2, "eps=0", &bad) == TESS_ERR_ARG &&
          strstr(tess_errmsg(), "eps"));
}

/* The typical rows hold what they promise: logits of magnitude 100,
 * near-constant rows, one outlier; shortcuts only under a budget. */
static void check_typical_inputs(void) {
    const tess_op *sm = tess_op_find("softmax");
    tess_task budget = rowwise_task("softmax", TESS_BF16, 8, 256, "error_budget=0.01");
    CHECK(has_param(&cpu_dev, sm, &budget, "fast_math"));
    tess_task exact = rowwise_task("rmsnorm", TESS_BF16, 8, 256, NULL);
    CHECK(!has_param(&cpu_dev, tess_op_find("rmsnorm"), &exact, "fast_math"));
    tess_problem *p = NULL;
    CHECK_OK(tess_problem_create_typical(sm, &budget, 3, &p));
    if (!p) return;
    double big = 0, lo = INFINITY, hi = -INFINITY, outlier = 0, tiny = 0;
    for (int64_t c = 0; c < 256; c++) {
        big = fmax(big, fabs(tess_dtype_load(p->host[0], TESS_BF16, c)));
        lo = fmin(lo, tess_dtype_load(p->host[0], TESS_BF16, 256 + c));
        hi = fmax(hi, tess_dtype_load(p->host[0], TESS_BF16, 256 + c));
        outlier = fmax(outlier, tess_dtype_load(p->host[0], TESS_BF16, 512 + c));
        tiny = fmax(tiny, fabs(tess_dtype_load(p->host[0], TESS_BF16, 768 + c)));
    }
    CHECK_MSG(big > 90 && big <= 100, "largest logit %g", big);
    CHECK_MSG(lo >= 9 && hi <= 11, "near-constant row in [%g, %g]", lo, hi);
    CHECK_MSG(outlier > 9000, "outlier %g", outlier);
    CHECK_MSG(tiny > 0 && tiny < 0x1p-126, "denormal row up to %g", tiny);
    tess_problem_destroy(p);
    CHECK(tess_problem_create_typical(tess_op_find("sum"), &budget, 3, &p) == TESS_ERR_ARG && !p);
}

int main(void) {
    CHECK_OK(tess_register_builtin());
    cpu = tess_backend_find("cpu");
    CHECK(cpu != NULL);
    if (!cpu) return check_finish("test_rowwise");
    CHECK_OK(cpu->probe(&cpu_dev));
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 7);
    check_references();
    check_tasks();
    check_typical_inputs();
    check_inputs();
    static const char *const ops[] = {"softmax", "layernorm", "rmsnorm", "log_softmax", "cross_entropy", "add_rmsnorm"};
    for (int i = 0; i < 6; i++) {
        check_kernels(cpu, &cpu_dev, ops[i], TESS_F32, 5, 19, NULL, 2, rng);
        check_kernels(cpu, &cpu_dev, ops[i], TESS_BF16, 3, 1000, "error_budget=0.001", 2, rng);
        check_kernels(cpu, &cpu_dev, ops[i], TESS_F16, 4, 64, NULL, 2, rng);
    }
    check_planted_shortcut(cpu, &cpu_dev, "threads=1,simd=1,online=0,fast_math=0");
    gsl_rng_free(rng);
    return check_finish("test_rowwise");
}
