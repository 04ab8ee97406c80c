/*
 * test_cuda_abi_compile.c - CUDA kernels using the kernel ABI compile with
 * NVRTC for an H200 (sm_90, sm_90a) through the cuda backend's compile op:
 * scalars after the buffers (scaled.h), a cluster kernel (launch-time and
 * __cluster_dims__), and a TMA copy taking a __grid_constant__ tensor map
 * (cp.async.bulk.tensor). Tensor map declarations are checked as
 * cuTensorMapEncodeTiled requires, each error naming what is wrong. NVRTC
 * needs no GPU; without it (or the toolkit at build time) the test skips.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "cuda_abi_kernels.h"
#include "h200.h"
#include "scaled.h"
#include "core/backend.h"
#include "core/error.h"
#ifdef TESS_HAVE_CUDA
#include "core/cuda/cuda_internal.h"

extern tess_status tess_cuda_register(void);

/* Compiles src; false when NVRTC is missing. */
static bool compiles(const tess_backend_ops *be, const tess_device *dev, const tess_kernel_source *src) {
    tess_blob bin = {0};
    char *log = NULL;
    tess_status st = be->compile(dev, src, &bin, &log);
    if (st == TESS_ERR_UNAVAILABLE) {
        printf("skipped: %s\n", tess_errmsg());
        return false;
    }
    CHECK_MSG(st == TESS_OK, "%s: %s\n%s", src->launch[0].entry, tess_errmsg(), log ? log : "");
    for (int i = 0; st == TESS_OK && i < src->nlaunches; i++)
        CHECK_MSG(memmem(bin.data, bin.size, src->launch[i].entry, strlen(src->launch[i].entry)),
                  "entry %s missing from the cubin", src->launch[i].entry);
    free(log);
    tess_blob_free(&bin);
    return true;
}

/* Declaration d with one field changed fails with a message naming `what`. */
static void check_refused(tess_tensor_map d, const char *what) {
    CHECK_MSG(tess_cuda_tensor_map_check(&d, 0) == TESS_ERR_ARG, "a bad %s passed", what);
    CHECK_MSG(strstr(tess_errmsg(), what) != NULL, "%s: %s", what, tess_errmsg());
}

static void check_tensor_map_rules(void) {
    const tess_tensor_map good = tma_kernel().tensor_map[0];
    CHECK_OK(tess_cuda_tensor_map_check(&good, 0));
    tess_tensor_map d = good;
    d.rank = 6;
    check_refused(d, "rank");
    d = good;
    d.strides[0] = TMA_W * sizeof(float) + 4;   /* not a multiple of 16 */
    check_refused(d, "strides[0]");
    d = good;
    d.strides[0] = 64;                           /* shorter than a row */
    check_refused(d, "strides[0]");
    d = good;
    d.box[1] = 300;
    check_refused(d, "box[1]");
    d = good;
    d.box[0] = 6;                                /* 24 bytes */
    check_refused(d, "box[0]");
    d = good;
    d.swizzle = 16;
    check_refused(d, "swizzle");
    d = good;
    d.swizzle = 64;                              /* a 128-byte row */
    check_refused(d, "swizzle");
    d.swizzle = 128;
    CHECK_OK(tess_cuda_tensor_map_check(&d, 0));
    d = good;
    d.dims[1] = 0;
    check_refused(d, "dims[1]");
}

int main(void) {
    CHECK_OK(tess_cuda_register());
    const tess_backend_ops *be = tess_backend_find("cuda");
    CHECK(be != NULL);
    if (!be) return check_finish("test_cuda_abi_compile");
    check_tensor_map_rules();
    tess_device dev = tess_test_h200("NVIDIA H200");

    tess_task t;
    const int64_t n = 5000;
    CHECK_OK(tess_op_make_task(&scaled_axpb, TESS_F32, TESS_F32, TESS_F32, &n, 1, NULL, &t));
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(&scaled_axpb, &t, &dev, &s));
    tess_config c;
    tess_space_default(s, &c);
    tess_kernel_source axpb;
    CHECK_OK(tess_op_emit(&scaled_axpb, &t, &dev, s, &c, &axpb));
    tess_space_destroy(s);
    bool ran = compiles(be, &dev, &axpb);
    tess_kernel_source_free(&axpb);
    if (!ran) return 77;
    tess_kernel_source cluster = cluster_kernel("cluster_rank", 2), tma = tma_kernel();
    compiles(be, &dev, &cluster);
    compiles(be, &dev, &tma);
    return check_finish("test_cuda_abi_compile");
}
#else
int main(void) {
    printf("skipped: built without the CUDA toolkit\n");
    return 77;
}
#endif
