/*
 * test_rowwise_gpu.c - the row-wise operators' CUDA kernels on the GPU: the
 * default, the largest and random configs of softmax, layernorm, rmsnorm,
 * log_softmax, cross_entropy and add_rmsnorm in bf16, f16 and f32, on short, odd, medium and long rows, verified by the
 * hardware evaluator (random inputs, a second seed, typical inputs), the
 * shortcuts under an error budget included, and of the activations (gelu,
 * gelu_tanh, silu, swiglu) in f32 and bf16, and of `reduce` (sum, max,
 * mean along each axis of a 3D array); and the planted unsafe shortcut
 * (softmax without max-subtraction) rejected on typical inputs only.
 */
#include "cuda_harness.h"
#include "reductions/axis_reduce.h"
#include "reductions/rowwise.h"
#include "rowwise_check.h"
#include "transfer/builtin.h"

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
    check_planted_shortcut(cuda, &dev, "vec=8,threads_per_row=32,rows_per_block=4,cache=registers,unroll=1,"
                                       "online=0,fast_exp=0");
    gsl_rng_free(rng);
    return check_finish("test_rowwise_gpu");
}
