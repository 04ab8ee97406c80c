/*
 * test_cuda_fault.c - planted bad kernels end as TESS_ERR_RUNTIME with the
 * CUDA error's name: an illegal address (through run and through time), a
 * misaligned access, a launch the device refuses, and a missing entry.
 *
 * A fault leaves the CUDA context unusable, so each case runs in its own
 * forked process, as the runner does; this process never initializes the
 * driver. Skipped (77) where there is no CUDA device.
 */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "gpu/cuda_harness.h"

static const char fault_source[] =
    "extern \"C\" __global__ void wild_write(float *p)\n"
    "{\n"
    "    p[((size_t)1 << 40) + threadIdx.x] = 1.0f;   // far outside any allocation\n"
    "}\n"
    "extern \"C\" __global__ void misaligned(float *p)\n"
    "{\n"
    "    float4 *q = reinterpret_cast<float4 *>(p + 1);   // 4-byte aligned float4\n"
    "    q[threadIdx.x] = make_float4(1.0f, 2.0f, 3.0f, 4.0f);\n"
    "}\n"
    "extern \"C\" __global__ void fine(float *p)\n"
    "{\n"
    "    p[threadIdx.x] = 1.0f;\n"
    "}\n";

typedef enum { CASE_RUN, CASE_TIME, CASE_MISALIGNED, CASE_REFUSED, CASE_MISSING } fault_case;

static const struct {
    const char *entry;
    unsigned block;
    const char *expect;   /* in the message */
    const char *what;
} cases[] = {
    [CASE_RUN] = {"wild_write", 32, "CUDA_ERROR_ILLEGAL_ADDRESS", "illegal address through run"},
    [CASE_TIME] = {"wild_write", 32, "CUDA_ERROR_ILLEGAL_ADDRESS", "illegal address through time"},
    [CASE_MISALIGNED] = {"misaligned", 32, "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned access"},
    [CASE_REFUSED] = {"fine", 4096, "CUDA_ERROR_INVALID_VALUE", "4096 threads per block"},
    [CASE_MISSING] = {"no_such_kernel", 32, "CUDA_ERROR_NOT_FOUND", "missing entry"},
};

/* Runs one case in this (child) process; returns 0 when it failed as expected. */
static int run_case(const tess_backend_ops *be, const tess_device *dev, fault_case k) {
    tess_kernel_source src = {.code = (char *)fault_source, .nlaunches = 1};
    snprintf(src.launch[0].entry, sizeof src.launch[0].entry, "%s", cases[k].entry);
    src.launch[0].grid[0] = src.launch[0].grid[1] = src.launch[0].grid[2] = 1;
    src.launch[0].block[0] = cases[k].block;
    src.launch[0].block[1] = src.launch[0].block[2] = 1;
    void *ctx = NULL, *buf = NULL, *module = NULL;
    if (be->open(dev, &ctx) != TESS_OK || be->alloc(ctx, 1 << 20, &buf) != TESS_OK) {
        fprintf(stderr, "%s: setup failed: %s\n", cases[k].what, tess_errmsg());
        return 2;
    }
    tess_status st = cuda_build(be, dev, ctx, &src, &module, NULL);
    if (st == TESS_OK) {
        void *bufs[1] = {buf};
        if (k == CASE_TIME) {
            void *const *sets[1] = {bufs};
            double ms[4];
            st = be->time(ctx, module, sets, 1, 1, 4, 1, ms, NULL);
        } else {
            st = be->run(ctx, module, bufs, 1);
        }
    }
    const char *msg = tess_errmsg();
    int ok = st == TESS_ERR_RUNTIME && strstr(msg, cases[k].expect) != NULL;
    printf("%s: status %d, \"%s\"\n", cases[k].what, st, msg);
    if (module) be->unload(ctx, module);
    be->release(ctx, buf);
    be->close(ctx);
    return ok ? 0 : 1;
}

int main(void) {
    tess_device dev;
    const tess_backend_ops *be = cuda_backend_or_skip(&dev);
    if (!be) return 77;
    for (int k = 0; k < (int)(sizeof cases / sizeof cases[0]); k++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) _exit(run_case(be, &dev, (fault_case)k));
        int status = -1;
        waitpid(pid, &status, 0);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s did not end as %s", cases[k].what,
                  cases[k].expect);
    }
    /* This process still has a clean driver state, as a tuner must. */
    tess_device again;
    CHECK_OK(be->probe(&again));
    return check_finish("test_cuda_fault");
}
