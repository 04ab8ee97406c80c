/* test_evaluator.c - the hardware evaluator on the cpu backend, with planted
 * bad kernels (planted_suite.h). */
#include "core/backend_cpu.h"
#include "planted_suite.h"

int main(void) {
    CHECK_OK(tess_cpu_register());
    const tess_backend_ops *cpu = tess_backend_find("cpu");
    tess_device dev;
    CHECK_OK(cpu->probe(&dev));
    return planted_suite(cpu, &dev, "test_evaluator");
}
