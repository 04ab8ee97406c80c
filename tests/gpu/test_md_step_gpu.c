/*
 * test_md_step_gpu.c - the CUDA kernels of the MD time-step operators
 * (md_verlet, md_displace, md_bin, md_list) on the GPU: the default, the
 * largest and random configs of the tasks md_step_check.h lists, verified
 * by the hardware evaluator against the float64 reference (two seeds of
 * inputs; md_bin's atoms within a cell compared as a set).
 */
#include "cuda_harness.h"
#include "md_step_check.h"
#include "transfer/builtin.h"

int main(void) {
    CHECK_OK(tess_register_builtin());
    tess_device dev;
    const tess_backend_ops *cuda = cuda_backend_or_skip(&dev);
    if (!cuda) return 77;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 21);
    check_md_step_kernels(cuda, &dev, 4, rng);
    gsl_rng_free(rng);
    return check_finish("test_md_step_gpu");
}
