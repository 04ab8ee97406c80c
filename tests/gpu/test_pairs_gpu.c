/*
 * test_pairs_gpu.c - ljforce's CUDA kernels on the GPU: the default, the
 * largest and random configs, both list layouts, shifted and not, f32 and
 * f64, an atom count that leaves a partial block, verified by the hardware
 * evaluator against the float64 reference (two seeds of inputs).
 */
#include "cuda_harness.h"
#include "rowwise_check.h"
#include "transfer/builtin.h"

int main(void) {
    CHECK_OK(tess_register_builtin());
    tess_device dev;
    const tess_backend_ops *cuda = cuda_backend_or_skip(&dev);
    if (!cuda) return 77;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 13);
    check_kernels(cuda, &dev, "ljforce", TESS_F32, 4001, 128, NULL, 6, rng);
    check_kernels(cuda, &dev, "ljforce", TESS_F32, 4001, 128, "layout=cols,shift=1", 6, rng);
    check_kernels(cuda, &dev, "ljforce", TESS_F64, 2000, 128, "layout=cols", 4, rng);
    check_kernels(cuda, &dev, "ljforce", TESS_F32, 300, 176, "rc=3,density=0.776", 4, rng);
    gsl_rng_free(rng);
    return check_finish("test_pairs_gpu");
}
