/* nccl_pair.h - what the NCCL transport's GPU test and benchmark share: two
 * GPUs' primary contexts, a stream and buffers on each, and halo messages
 * between them as a two-slab split exchanges them (each GPU's edge planes
 * to the other's halo). */
#ifndef TESS_TEST_NCCL_PAIR_H
#define TESS_TEST_NCCL_PAIR_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/cuda/cuda_internal.h"
#include "core/halo.h"

typedef struct nccl_pair {
    const tess_cuda_driver *drv;
    CUcontext ctx[2];
    CUstream stream[2];
    CUdeviceptr send[2], recv[2];
    size_t bytes;
    tess_halo_transport *halo;
} nccl_pair;

/* 0 when two GPUs, NCCL and the buffers are ready; else 77 (fewer than two
 * GPUs, or no NCCL: said why) or 1 (a failure: said what). */
static inline int nccl_pair_open(nccl_pair *p, size_t bytes) {
    memset(p, 0, sizeof *p);
    p->bytes = bytes;
    int count = 0;
    if (tess_cuda_driver_get(&p->drv) || p->drv->cuInit(0) != CUDA_SUCCESS ||
        p->drv->cuDeviceGetCount(&count) != CUDA_SUCCESS || count < 2) {
        printf("skipped: the nccl transport needs two GPUs (%d here)\n", count);
        return 77;
    }
    for (int r = 0; r < 2; r++) {
        CUdevice d;
        if (p->drv->cuDeviceGet(&d, r) || p->drv->cuDevicePrimaryCtxRetain(&p->ctx[r], d) ||
            p->drv->cuCtxSetCurrent(p->ctx[r]) || p->drv->cuStreamCreate(&p->stream[r], CU_STREAM_NON_BLOCKING) ||
            p->drv->cuMemAlloc(&p->send[r], bytes) || p->drv->cuMemAlloc(&p->recv[r], bytes)) {
            fprintf(stderr, "GPU %d: cannot set up a context, stream and %zu-byte buffers\n", r, bytes);
            return 1;
        }
    }
    int devices[2] = {0, 1};
    void *streams[2] = {p->stream[0], p->stream[1]};
    tess_status st = tess_halo_nccl_create(2, devices, streams, &p->halo);
    if (st == TESS_ERR_UNAVAILABLE) {
        printf("skipped: %s\n", tess_errmsg());
        return 77;
    }
    if (st) fprintf(stderr, "nccl transport: %s\n", tess_errmsg());
    return st ? 1 : 0;
}

/* Posts each GPU's send buffer to the other's receive buffer in `chunks`
 * messages each way, then waits. */
static inline tess_status nccl_pair_exchange(nccl_pair *p, int chunks) {
    tess_halo_msg m[2 * 64];
    int n = 0;
    size_t each = (p->bytes + (size_t)chunks - 1) / (size_t)chunks;
    for (int from = 0; from < 2; from++)
        for (size_t off = 0; off < p->bytes && n < 128; off += each)
            m[n++] = (tess_halo_msg){from, 1 - from, (const char *)(uintptr_t)p->send[from] + off,
                                     (char *)(uintptr_t)p->recv[1 - from] + off,
                                     p->bytes - off < each ? p->bytes - off : each};
    tess_status st = tess_halo_post(p->halo, m, n);
    return st ? st : tess_halo_wait(p->halo);
}

static inline void nccl_pair_close(nccl_pair *p) {
    tess_halo_destroy(p->halo);
    for (int r = 0; p->drv && r < 2; r++) {
        if (!p->ctx[r]) continue;
        p->drv->cuCtxSetCurrent(p->ctx[r]);
        if (p->send[r]) p->drv->cuMemFree(p->send[r]);
        if (p->recv[r]) p->drv->cuMemFree(p->recv[r]);
        if (p->stream[r]) p->drv->cuStreamDestroy(p->stream[r]);
        CUdevice d;
        if (p->drv->cuDeviceGet(&d, r) == CUDA_SUCCESS) p->drv->cuDevicePrimaryCtxRelease(d);
    }
}

#endif
