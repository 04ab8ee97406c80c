/*
 * cuda_context.c - the execution context: the device's primary context (so
 * pointers from a user's CUDA runtime code work with it), one blocking
 * stream (ordered after work on the legacy default stream, as a user's code
 * expects), and device memory.
 *
 * Opened in the process that runs kernels: the runner child, or a user's
 * process for tess_kernel_run. Every op makes the context current first, so
 * the ops may be called from any thread.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_internal.h"
#include "error.h"

tess_status tess_cuda_bind(tess_cuda_context *c) {
    CUresult r = c->drv->cuCtxSetCurrent(c->context);
    if (r != CUDA_SUCCESS) return tess_cuda_fail(c->drv, r, TESS_ERR_RUNTIME, "cuCtxSetCurrent");
    return TESS_OK;
}

/* The device whose name matches the descriptor's (device 0 if no name). */
static tess_status find_device(const tess_cuda_driver *drv, const tess_device *dev, CUdevice *out) {
    int count = 0;
    CUresult r = drv->cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS) return tess_cuda_fail(drv, r, TESS_ERR_UNAVAILABLE, "cuDeviceGetCount");
    if (count == 0) return tess_error(TESS_ERR_UNAVAILABLE, "no CUDA device");
    for (int i = 0; i < count; i++) {
        CUdevice d;
        char name[128];
        if (drv->cuDeviceGet(&d, i) != CUDA_SUCCESS) continue;
        if (!dev || !dev->name[0] ||
            (drv->cuDeviceGetName(name, sizeof name, d) == CUDA_SUCCESS && strcmp(name, dev->name) == 0)) {
            *out = d;
            return TESS_OK;
        }
    }
    return tess_error(TESS_ERR_UNAVAILABLE, "no CUDA device named '%s' here", dev->name);
}

static tess_status read_attributes(tess_cuda_context *c) {
    int major = 0, minor = 0;
    const struct {
        CUdevice_attribute attr;
        int *value;
    } attrs[] = {
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &major},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &minor},
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &c->sm_count},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, &c->max_threads_per_sm},
        {CU_DEVICE_ATTRIBUTE_WARP_SIZE, &c->warp_size},
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        CUresult r = c->drv->cuDeviceGetAttribute(attrs[i].value, attrs[i].attr, c->device);
        if (r != CUDA_SUCCESS)
            return tess_cuda_fail(c->drv, r, TESS_ERR_UNAVAILABLE, "cuDeviceGetAttribute");
    }
    snprintf(c->arch, sizeof c->arch, "sm_%d%d", major, minor);
    c->cc = 10 * major + minor;
    if (c->drv->cuDeviceGetPCIBusId(c->pci_bus_id, sizeof c->pci_bus_id, c->device) != CUDA_SUCCESS)
        c->pci_bus_id[0] = '\0';
    return TESS_OK;
}

tess_status tess_cuda_open(const tess_device *dev, void **ctx) {
    *ctx = NULL;
    const tess_cuda_driver *drv;
    tess_status st = tess_cuda_driver_get(&drv);
    if (st) return st;
    CUresult r = drv->cuInit(0);
    if (r == CUDA_ERROR_NO_DEVICE) return tess_error(TESS_ERR_UNAVAILABLE, "no CUDA device");
    if (r != CUDA_SUCCESS) return tess_cuda_fail(drv, r, TESS_ERR_UNAVAILABLE, "cuInit");
    tess_cuda_context *c = calloc(1, sizeof *c);
    if (!c) return tess_error(TESS_ERR_NOMEM, "cuda context");
    c->drv = drv;
    st = find_device(drv, dev, &c->device);
    if (!st) st = read_attributes(c);
    if (st) {
        free(c);
        return st;
    }
    r = drv->cuDevicePrimaryCtxRetain(&c->context, c->device);
    if (r != CUDA_SUCCESS) {
        free(c);
        return tess_cuda_fail(drv, r, TESS_ERR_UNAVAILABLE, "cuDevicePrimaryCtxRetain");
    }
    st = tess_cuda_bind(c);
    if (!st) {
        r = drv->cuStreamCreate(&c->stream, CU_STREAM_DEFAULT);
        if (r != CUDA_SUCCESS) st = tess_cuda_fail(drv, r, TESS_ERR_RUNTIME, "cuStreamCreate");
    }
    if (st) {
        drv->cuDevicePrimaryCtxRelease(c->device);
        free(c);
        return st;
    }
    *ctx = c;
    return TESS_OK;
}

void tess_cuda_close(void *ctx) {
    tess_cuda_context *c = ctx;
    if (!c) return;
    /* After a fault the context is unusable and these calls fail; the
     * process is about to end then, so their status does not matter. */
    if (tess_cuda_bind(c) == TESS_OK) {
        tess_cuda_compare_release(c);
        for (int i = 0; i < c->nevents; i++) c->drv->cuEventDestroy(c->events[i]);
        c->drv->cuStreamDestroy(c->stream);
    }
    tess_error_clear();
    free(c->events);
    tess_cuda_power_close(c->power);
    c->drv->cuDevicePrimaryCtxRelease(c->device);
    free(c);
}

tess_status tess_cuda_events_reserve(tess_cuda_context *c, int n) {
    if (n <= c->nevents) return TESS_OK;
    CUevent *grown = realloc(c->events, (size_t)n * sizeof *grown);
    if (!grown) return tess_error(TESS_ERR_NOMEM, "%d timing events", n);
    c->events = grown;
    while (c->nevents < n) {
        CUresult r = c->drv->cuEventCreate(&c->events[c->nevents], CU_EVENT_DEFAULT);
        if (r != CUDA_SUCCESS) return tess_cuda_fail(c->drv, r, TESS_ERR_RUNTIME, "cuEventCreate");
        c->nevents++;
    }
    return TESS_OK;
}

tess_status tess_cuda_alloc(void *ctx, size_t bytes, void **dptr) {
    tess_cuda_context *c = ctx;
    *dptr = NULL;
    tess_status st = tess_cuda_bind(c);
    if (st) return st;
    CUdeviceptr p;
    CUresult r = c->drv->cuMemAlloc(&p, bytes ? bytes : 1);
    if (r != CUDA_SUCCESS) {
        char what[64];
        snprintf(what, sizeof what, "cuMemAlloc(%zu bytes)", bytes);
        return tess_cuda_fail(c->drv, r, r == CUDA_ERROR_OUT_OF_MEMORY ? TESS_ERR_NOMEM : TESS_ERR_RUNTIME,
                              what);
    }
    *dptr = (void *)(uintptr_t)p;
    return TESS_OK;
}

void tess_cuda_release(void *ctx, void *dptr) {
    tess_cuda_context *c = ctx;
    if (!dptr || tess_cuda_bind(c) != TESS_OK) {
        tess_error_clear();
        return;
    }
    c->drv->cuMemFree((CUdeviceptr)(uintptr_t)dptr);
}

tess_status tess_cuda_upload(void *ctx, void *dptr, const void *host, size_t bytes) {
    tess_cuda_context *c = ctx;
    tess_status st = tess_cuda_bind(c);
    if (st) return st;
    CUresult r = c->drv->cuMemcpyHtoDAsync((CUdeviceptr)(uintptr_t)dptr, host, bytes, c->stream);
    if (r == CUDA_SUCCESS) r = c->drv->cuStreamSynchronize(c->stream);
    if (r != CUDA_SUCCESS) return tess_cuda_fail(c->drv, r, TESS_ERR_RUNTIME, "copying to the device");
    return TESS_OK;
}

tess_status tess_cuda_download(void *ctx, void *host, const void *dptr, size_t bytes) {
    tess_cuda_context *c = ctx;
    tess_status st = tess_cuda_bind(c);
    if (st) return st;
    CUresult r = c->drv->cuMemcpyDtoHAsync(host, (CUdeviceptr)(uintptr_t)dptr, bytes, c->stream);
    if (r == CUDA_SUCCESS) r = c->drv->cuStreamSynchronize(c->stream);
    if (r != CUDA_SUCCESS) return tess_cuda_fail(c->drv, r, TESS_ERR_RUNTIME, "copying from the device");
    return TESS_OK;
}

tess_status tess_cuda_poison(void *ctx, void *dptr, size_t bytes) {
    tess_cuda_context *c = ctx;
    tess_status st = tess_cuda_bind(c);
    if (st) return st;
    CUresult r = c->drv->cuMemsetD8Async((CUdeviceptr)(uintptr_t)dptr, 0xff, bytes, c->stream);
    if (r == CUDA_SUCCESS) r = c->drv->cuStreamSynchronize(c->stream);
    if (r != CUDA_SUCCESS) return tess_cuda_fail(c->drv, r, TESS_ERR_RUNTIME, "poisoning an output");
    return TESS_OK;
}
