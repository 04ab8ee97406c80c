/*
 * test_cuda_abi.c - the kernel ABI on a GPU: scalars passed by value and
 * changed per run (scaled.h), cluster ranks with the cluster given at
 * launch and in the source, a grid that does not hold whole clusters
 * refused at load, a TMA copy of a 2D matrix through shared memory checked
 * element by element (sm_90), and an in-place kernel with a run-time extent
 * run through the public API on a stream the test owns. Skipped (77) where
 * there is no CUDA device.
 */
#include <unistd.h>
#include "gpu/cuda_harness.h"
#ifdef TESS_HAVE_CUDA
#include "core/cuda/cuda_internal.h"
#include "cuda_abi_kernels.h"
#include "scaled.h"
#include "transfer/builtin.h"

static void check_scalars(const tess_backend_ops *be, const tess_device *dev, void *ctx) {
    enum { N = 5000 };
    const int64_t n = N;
    tess_task t;
    tess_space *s = NULL;
    CHECK_OK(tess_op_make_task(&scaled_axpb, TESS_F32, TESS_F32, TESS_F32, &n, 1, NULL, &t));
    CHECK_OK(tess_op_space(&scaled_axpb, &t, dev, &s));
    tess_config c;
    tess_space_default(s, &c);
    tess_kernel_source src;
    CHECK_OK(tess_op_emit(&scaled_axpb, &t, dev, s, &c, &src));
    tess_space_destroy(s);
    void *module = NULL, *d[2] = {NULL, NULL};
    static float in[N], out[N];
    for (int i = 0; i < N; i++) in[i] = (float)i / N - 0.5f;
    CHECK_OK(cuda_build(be, dev, ctx, &src, &module, NULL));
    CHECK_OK(be->alloc(ctx, sizeof in, &d[0]));
    CHECK_OK(be->alloc(ctx, sizeof out, &d[1]));
    if (module && d[0] && d[1]) {
        CHECK_OK(be->upload(ctx, d[0], in, sizeof in));
        tess_scalar a = src.scalar[0];
        for (int round = 0; round < 2; round++) {
            CHECK_OK(be->run(ctx, module, d, 2));
            CHECK_OK(be->download(ctx, out, d[1], sizeof out));
            int bad = 0;
            for (int i = 0; i < N; i++) bad += fabs(out[i] - (a.value.f32 * in[i] + SCALED_B)) > 1e-6;
            CHECK_MSG(bad == 0, "round %d: %d elements differ", round, bad);
            a.value.f32 = -3.0f;
            CHECK_OK(be->set_scalar(ctx, module, 0, &a));
        }
    }
    for (int i = 0; i < 2; i++)
        if (d[i]) be->release(ctx, d[i]);
    if (module) be->unload(ctx, module);
    tess_kernel_source_free(&src);
}

static void check_cluster(const tess_backend_ops *be, const tess_device *dev, void *ctx, const char *entry,
                          unsigned cluster, unsigned expect) {
    tess_kernel_source src = cluster_kernel(entry, cluster);
    void *module = NULL, *d = NULL;
    unsigned rank[CLUSTER_BLOCKS];
    CHECK_OK(cuda_build(be, dev, ctx, &src, &module, NULL));
    CHECK_OK(be->alloc(ctx, sizeof rank, &d));
    if (module && d) {
        CHECK_OK(be->run(ctx, module, &d, 1));
        CHECK_OK(be->download(ctx, rank, d, sizeof rank));
        for (unsigned b = 0; b < CLUSTER_BLOCKS; b++)
            CHECK_MSG(rank[b] == b % expect, "%s block %u: rank %u", entry, b, rank[b]);
    }
    if (d) be->release(ctx, d);
    if (module) be->unload(ctx, module);
}

static void check_tma(const tess_backend_ops *be, const tess_device *dev, void *ctx) {
    tess_kernel_source src = tma_kernel();
    static float in[TMA_W * TMA_H], out[TMA_W * TMA_H];
    for (int i = 0; i < TMA_W * TMA_H; i++) in[i] = (float)i;
    void *module = NULL, *d[2] = {NULL, NULL};
    CHECK_OK(cuda_build(be, dev, ctx, &src, &module, NULL));
    CHECK_OK(be->alloc(ctx, sizeof in, &d[0]));
    CHECK_OK(be->alloc(ctx, sizeof out, &d[1]));
    if (module && d[0] && d[1]) {
        CHECK_OK(be->upload(ctx, d[0], in, sizeof in));
        CHECK_OK(be->poison(ctx, d[1], sizeof out));
        CHECK_OK(be->run(ctx, module, d, 2));
        CHECK_OK(be->download(ctx, out, d[1], sizeof out));
        CHECK(memcmp(in, out, sizeof in) == 0);
        /* timing rotates two sets: each is encoded once, from then on the cache serves */
        void *const *sets[] = {d, d};
        double ms[4];
        CHECK_OK(be->time(ctx, module, sets, 2, 2, 4, 2, ms, NULL));
        CHECK(((tess_cuda_module *)module)->nencoded[0] == 1);
    }
    for (int i = 0; i < 2; i++)
        if (d[i]) be->release(ctx, d[i]);
    if (module) be->unload(ctx, module);
}

static void check_stream(const tess_device *dev) {
    (void)dev;
    enum { N = 3000 };
    char dir[] = "/tmp/tessera-cuda-abi-XXXXXX";
    if (!mkdtemp(dir)) return;
    char db[256];
    snprintf(db, sizeof db, "%s/records.db", dir);
    CHECK_OK(tess_op_register(&scaled_axpb_inplace));
    tess_context *tc = NULL;
    CHECK_OK(tess_open(&tc, db));
    const int64_t shape[] = {1 << 16};
    tess_kernel *k = NULL;
    if (tc) CHECK_OK(tess_kernel_get(tc, "axpb_inplace", shape, 1, "f32", "cuda", &k));
    const tess_cuda_driver *drv = NULL;
    CHECK_OK(tess_cuda_driver_get(&drv));
    if (k && drv) {
        static float x[N], y[N];
        for (int i = 0; i < N; i++) x[i] = (float)i / N;
        CUstream stream;
        CUdeviceptr d;
        CHECK(drv->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
        CHECK(drv->cuMemAlloc(&d, sizeof x) == CUDA_SUCCESS);
        CHECK(drv->cuMemcpyHtoDAsync(d, x, sizeof x, stream) == CUDA_SUCCESS);
        CHECK_OK(tess_kernel_set_extent(k, "n", N));
        CHECK_OK(tess_kernel_set_scalar(k, "b", 1.0));
        void *arrays[] = {(void *)(uintptr_t)d};
        CHECK_OK(tess_kernel_run_on_stream(k, arrays, 1, stream));
        CHECK(drv->cuMemcpyDtoHAsync(y, d, sizeof y, stream) == CUDA_SUCCESS);
        CHECK(drv->cuStreamSynchronize(stream) == CUDA_SUCCESS);
        int bad = 0;
        for (int i = 0; i < N; i++) bad += fabs(y[i] - ((float)SCALED_A * x[i] + 1.0)) > 1e-6;
        CHECK_MSG(bad == 0, "%d elements differ after the stream run", bad);
        drv->cuMemFree(d);
        drv->cuStreamDestroy(stream);
    }
    tess_kernel_destroy(k);
    tess_close(tc);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

int main(void) {
    tess_device dev;
    CHECK_OK(tess_register_builtin());
    const tess_backend_ops *be = cuda_backend_or_skip(&dev);
    if (!be) return 77;
    if (dev.cc_major < 9) {
        printf("skipped: %s is %s; clusters and TMA need sm_90\n", dev.name, dev.arch);
        return 77;
    }
    void *ctx = NULL;
    CHECK_OK(be->open(&dev, &ctx));
    if (!ctx) return check_finish("test_cuda_abi");
    check_scalars(be, &dev, ctx);
    check_cluster(be, &dev, ctx, "cluster_rank", 2, 2);
    check_cluster(be, &dev, ctx, "cluster_rank_fixed", 0, 4);
    /* 8 blocks do not make clusters of 3 */
    tess_kernel_source odd = cluster_kernel("cluster_rank", 3);
    void *module = NULL;
    CHECK(cuda_build(be, &dev, ctx, &odd, &module, NULL) == TESS_ERR_ARG);
    CHECK_MSG(strstr(tess_errmsg(), "not a multiple of its cluster") != NULL, "%s", tess_errmsg());
    check_tma(be, &dev, ctx);
    be->close(ctx);
    check_stream(&dev);
    return check_finish("test_cuda_abi");
}
#else
int main(void) {
    printf("skipped: built without the CUDA toolkit\n");
    return 77;
}
#endif
