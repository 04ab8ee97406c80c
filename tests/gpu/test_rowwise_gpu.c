/*
 * test_rowwise_gpu.c - the row-wise operators' CUDA kernels on the GPU: the
 * default, the largest and random configs of softmax, layernorm, rmsnorm,
 * log_softmax, cross_entropy and add_rmsnorm in bf16, f16 and f32, on short, odd, medium and long rows, verified by the
 * hardware evaluator (random inputs, a second seed, typical inputs), the
 * shortcuts under an error budget included, and of the activations (gelu,
 * gelu_tanh, silu, swiglu) in f32 and bf16, and of `reduce` (sum, max,
 * mean along each axis of a 3D array); slices copied in by bulk copies
 * (one buffer, or two with row groups one after another, the last group
 * short of rows), the outputs copied out by bulk copies or not; softmax's
 * exponentials kept and the norms' weights held in registers; and the
 * planted unsafe shortcut (softmax without max-subtraction) rejected on
 * typical inputs only.
 */
#include "cuda_harness.h"
#include "reductions/axis_reduce.h"
#include "reductions/rowwise.h"
#include "rowwise_check.h"
#include "transfer/builtin.h"

/* The config `pin` fixes (its other parameters at their defaults) verified. */
static void check_pinned(const tess_backend_ops *be, const tess_device *dev, const char *op_name, int64_t rows,
                         int64_t cols, const char *pin) {
    const tess_op *op = tess_op_find(op_name);
    tess_task t = rowwise_task(op_name, TESS_BF16, rows, cols, NULL);
    tess_config c;
    tess_space *s = pinned_space(op, &t, dev, pin, &c);
    if (!s) return;
    tess_space_destroy(s);
    outcomes o = evaluate(be, dev, op, &t, &c, 1);
    CHECK_MSG(o.n[TESS_RESULT_OK] == 1, "%s %lldx%lld %s: %s", op_name, (long long)rows, (long long)cols, pin, o.message);
    printf("%s %lldx%lld %s verified\n", op_name, (long long)rows, (long long)cols, pin);
}

int main(void) {
    CHECK_OK(tess_register_builtin());
    tess_device dev;
    const tess_backend_ops *cuda = cuda_backend_or_skip(&dev);
    if (!cuda) return 77;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 11);
    static const char *const ops[] = {"softmax", "layernorm", "rmsnorm", "log_softmax", "cross_entropy", "add_rmsnorm"};
    for (int i = 0; i < 6; i++) {
        check_kernels(cuda, &dev, ops[i], TESS_F32, 17, 19, NULL, 6, rng);
        check_kernels(cuda, &dev, ops[i], TESS_BF16, 333, 1024, "error_budget=0.001", 8, rng);
        check_kernels(cuda, &dev, ops[i], TESS_F16, 64, 8192, NULL, 6, rng);
        check_kernels(cuda, &dev, ops[i], TESS_BF16, 8, 65536, "error_budget=0.001", 6, rng);
    }
    static const char *const acts[] = {"gelu", "gelu_tanh", "silu", "swiglu"};
    for (int i = 0; i < 4; i++) {
        check_kernels(cuda, &dev, acts[i], TESS_F32, 3, 1000003, NULL, 4, rng);
        check_kernels(cuda, &dev, acts[i], TESS_BF16, 1024, 4099, "error_budget=0.001", 6, rng);
    }
    static const char *const kinds[] = {"sum", "max", "mean"};
    const int64_t shape[3] = {9, 130, 1001};
    for (int k = 0; k < 3; k++)
        for (int axis = 0; axis < 3; axis++) {
            char attrs[64];
            snprintf(attrs, sizeof attrs, "kind=%s,axis=%d", kinds[k], axis);
            tess_task t;
            CHECK_OK(tess_op_make_task(&tess_op_reduce, TESS_BF16, TESS_BF16, TESS_BF16, shape, 3, attrs, &t));
            check_task_kernels(cuda, &dev, &tess_op_reduce, &t, 4, rng);
        }
    static const char *const bulk_ops[] = {"softmax", "layernorm", "rmsnorm", "log_softmax"};
    static const char *const bulk_pins[] = {
        "bulk=1,cache=shared,cluster=2,row_loop=1,vec=8,threads_per_row=512,rows_per_block=1",
        "bulk=1,cache=shared,cluster=4,row_loop=4,vec=8,threads_per_row=256,rows_per_block=1",
        "bulk=1,cache=shared,cluster=1,row_loop=2,vec=4,threads_per_row=64,rows_per_block=2",
        "bulk=1,bulk_store=1,cache=shared,cluster=2,row_loop=1,vec=8,threads_per_row=512,rows_per_block=1",
        "bulk=1,bulk_store=1,cache=shared,cluster=4,row_loop=4,vec=8,threads_per_row=256,rows_per_block=1",
        "bulk=1,bulk_store=1,cache=shared,cluster=1,row_loop=2,vec=4,threads_per_row=64,rows_per_block=2"};
    const int64_t bulk_rows[] = {8, 37, 333, 8, 37, 333}, bulk_cols[] = {65536, 65536, 1024, 65536, 65536, 1024};
    for (int i = 0; i < 4; i++)
        for (int p = 0; p < 6; p++) {
            char pin[160];
            /* softmax keeps its exponentials by default, beside a row in registers only */
            snprintf(pin, sizeof pin, "%s%s", bulk_pins[p], i == 0 ? ",keep_exp=0" : "");
            check_pinned(cuda, &dev, bulk_ops[i], bulk_rows[p], bulk_cols[p], pin);
        }
    check_pinned(cuda, &dev, "cross_entropy", 8, 65536, "bulk=1,cache=shared,cluster=2,online=0,vec=8,threads_per_row=256");
    /* softmax's exponentials kept beside a row in shared memory; the norms' weights held in registers */
    check_pinned(cuda, &dev, "softmax", 37, 65536,
                 "keep_exp=1,bulk=1,cache=shared,online=0,cluster=2,row_loop=2,vec=8,threads_per_row=512,unroll=1");
    check_pinned(cuda, &dev, "softmax", 37, 65536,
                 "keep_exp=1,bulk=1,cache=shared,online=1,cluster=4,row_loop=2,vec=8,threads_per_row=512,unroll=1");
    check_pinned(cuda, &dev, "softmax", 333, 1024,
                 "keep_exp=1,cache=registers,online=1,cluster=1,vec=8,threads_per_row=32,rows_per_block=4,unroll=1");
    static const char *const norms[] = {"layernorm", "rmsnorm", "add_rmsnorm"};
    for (int i = 0; i < 3; i++) {
        if (i < 2)
            check_pinned(cuda, &dev, norms[i], 37, 65536,
                         "hold_weights=1,bulk=1,bulk_store=1,row_loop=4,cache=shared,cluster=4,vec=8,threads_per_row=512,unroll=1");
        check_pinned(cuda, &dev, norms[i], 333, 1024,
                     "hold_weights=1,cache=global,cluster=1,vec=4,threads_per_row=128,rows_per_block=2,unroll=1");
        check_pinned(cuda, &dev, norms[i], 37, 65536,
                     "hold_weights=2,cache=registers,cluster=4,vec=8,threads_per_row=512,rows_per_block=1,unroll=1");
        check_pinned(cuda, &dev, norms[i], 333, 1024,
                     "hold_weights=2,cache=shared,cluster=1,vec=4,threads_per_row=64,rows_per_block=2,unroll=2");
    }
    check_planted_shortcut(cuda, &dev, ROWWISE_CUDA_PLANTED_PIN);
    gsl_rng_free(rng);
    return check_finish("test_rowwise_gpu");
}
