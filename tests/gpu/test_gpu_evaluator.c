/* test_gpu_evaluator.c - the hardware evaluator on the cuda backend, with
 * planted bad kernels (planted_suite.h): a faulting and a hanging kernel each
 * end as a recorded failure and the run goes on. */
#include "core/cuda/cuda_backend.h"
#include "planted_suite.h"

int main(void) {
    CHECK_OK(tess_cuda_register());
    const tess_backend_ops *cuda = tess_backend_find("cuda");
    tess_device dev;
    if (!cuda || cuda->probe(&dev) != TESS_OK) {
        printf("skipped: no CUDA device (%s)\n", tess_errmsg());
        return 77;
    }
    return planted_suite(cuda, &dev, "test_gpu_evaluator");
}
