/*
 * cuda_timing.c - timing with CUDA events: one event pair around each
 * sample of one or more launches, all samples queued back to back on the
 * stream, so the times hold GPU execution only (no launch gaps from the
 * host; with several launches per sample, not the events' either).
 *
 * Launch k (counted over all the samples) uses buffer set k % nsets, which
 * defeats warm caches when the working set fits in L2; a kernel's tensor
 * maps are encoded once per set (the module keeps them by address), not
 * per launch. While the GPU works, NVML power samples are taken (when a
 * metrics struct asks for them and NVML is present).
 */
#include <time.h>
#include "cuda_internal.h"
#include "error.h"

/* Poll interval for power samples while waiting for the GPU (NVML's own
 * readings change every few tens of ms; a short poll keeps short waits short). */
#define POWER_POLL_NS 500000L

static tess_status wait_for(tess_cuda_context *c, CUevent last, bool sample_power) {
    CUresult r;
    if (!sample_power) {
        r = c->drv->cuEventSynchronize(last);
    } else {
        while ((r = c->drv->cuEventQuery(last)) == CUDA_ERROR_NOT_READY) {
            tess_cuda_power_sample(c->power);
            struct timespec ts = {0, POWER_POLL_NS};
            nanosleep(&ts, NULL);
        }
    }
    if (r != CUDA_SUCCESS) return tess_cuda_fail(c->drv, r, TESS_ERR_RUNTIME, "timing the kernel");
    return TESS_OK;
}

tess_status tess_cuda_time(void *ctx, void *module, void *const *const *dbuf_sets, int nsets,
                           int nbufs, int reps, int launches, double *ms, tess_kernel_metrics *metrics) {
    tess_cuda_context *c = ctx;
    tess_cuda_module *m = module;
    if (reps < 1 || launches < 1 || nsets < 1)
        return tess_error(TESS_ERR_ARG, "cuda time: %d samples of %d launches over %d buffer sets", reps, launches,
                          nsets);
    tess_status st = tess_cuda_bind(c);
    if (!st) st = tess_cuda_events_reserve(c, 2 * reps);
    if (st) return st;
    if (metrics && !c->power_tried) {
        c->power = tess_cuda_power_open(c->pci_bus_id);
        c->power_tried = true;
    }
    bool power = metrics && c->power;
    if (power) tess_cuda_power_begin(c->power);

    for (int r = 0; r < reps; r++) {
        CUresult cr = c->drv->cuEventRecord(c->events[2 * r], c->stream);
        if (cr != CUDA_SUCCESS) return tess_cuda_fail(c->drv, cr, TESS_ERR_RUNTIME, "cuEventRecord");
        for (int l = 0; l < launches && !st; l++)
            st = tess_cuda_launch_all(c, m, dbuf_sets[(r * launches + l) % nsets], nbufs, c->stream);
        if (st) return st;
        cr = c->drv->cuEventRecord(c->events[2 * r + 1], c->stream);
        if (cr != CUDA_SUCCESS) return tess_cuda_fail(c->drv, cr, TESS_ERR_RUNTIME, "cuEventRecord");
    }
    if (power) tess_cuda_power_sample(c->power);   /* the GPU is busy now */
    st = wait_for(c, c->events[2 * reps - 1], power);
    if (st) return st;
    for (int r = 0; r < reps; r++) {
        float t = 0;
        CUresult cr = c->drv->cuEventElapsedTime(&t, c->events[2 * r], c->events[2 * r + 1]);
        if (cr != CUDA_SUCCESS) return tess_cuda_fail(c->drv, cr, TESS_ERR_RUNTIME, "cuEventElapsedTime");
        ms[r] = (double)t / launches;
    }
    if (power) {
        double w = tess_cuda_power_end(c->power);
        if (w > 0) metrics->power_w = w;
    }
    return TESS_OK;
}
