/*
 * cuda_driver.c - loading libcuda.so.1 and NVRTC at run time, and turning
 * CUDA error codes into messages.
 *
 * Each library is opened once per process and never closed. A failed load
 * is remembered with its reason, so every later call reports the same
 * clear message ("libcuda.so.1 not found: no NVIDIA driver").
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_internal.h"
#include "error.h"

/* The name a header maps an entry point to (cuMemAlloc -> "cuMemAlloc_v2"). */
#define TESS_CUDA_SYMBOL_(fn) #fn
#define TESS_CUDA_SYMBOL(fn) TESS_CUDA_SYMBOL_(fn)

/* Looks up one symbol into a function pointer member; returns false if missing. */
static bool lookup(void *lib, const char *name, void *slot, size_t size) {
    void *sym = dlsym(lib, name);
    if (!sym) return false;
    memcpy(slot, &sym, size);   /* object to function pointer, as POSIX allows */
    return true;
}

static tess_cuda_driver driver;
static tess_status driver_status;
static char driver_reason[512];
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;

static void driver_load(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(driver_reason, sizeof driver_reason, "libcuda.so.1 not found: no NVIDIA driver");
        driver_status = TESS_ERR_UNAVAILABLE;
        return;
    }
#define TESS_CUDA_LOAD(fn)                                                                  \
    if (!lookup(lib, TESS_CUDA_SYMBOL(fn), &driver.fn, sizeof driver.fn)) {                 \
        snprintf(driver_reason, sizeof driver_reason,                                       \
                 "the NVIDIA driver is too old: libcuda.so.1 lacks %s", TESS_CUDA_SYMBOL(fn)); \
        driver_status = TESS_ERR_UNAVAILABLE;                                               \
        return;                                                                             \
    }
    TESS_CUDA_DRIVER_FUNCS(TESS_CUDA_LOAD)
#undef TESS_CUDA_LOAD
    driver_status = TESS_OK;
}

tess_status tess_cuda_driver_get(const tess_cuda_driver **out) {
    pthread_once(&driver_once, driver_load);
    if (driver_status) return tess_error(driver_status, "%s", driver_reason);
    *out = &driver;
    return TESS_OK;
}

static tess_nvrtc nvrtc;
static tess_status nvrtc_status;
static char nvrtc_reason[512];
static pthread_once_t nvrtc_once = PTHREAD_ONCE_INIT;

static void *nvrtc_open(void) {
    static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (lib) return lib;
    }
    const char *roots[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
        if (!roots[i] || !*roots[i]) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/lib64/libnvrtc.so", roots[i]);
        void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (lib) return lib;
    }
    return NULL;
}

static void nvrtc_load(void) {
    void *lib = nvrtc_open();
    if (!lib) {
        snprintf(nvrtc_reason, sizeof nvrtc_reason,
                 "NVRTC not found: no libnvrtc.so.13 or libnvrtc.so (install the CUDA toolkit's "
                 "NVRTC or add its lib64 to LD_LIBRARY_PATH)");
        nvrtc_status = TESS_ERR_UNAVAILABLE;
        return;
    }
#define TESS_NVRTC_LOAD(fn)                                                                 \
    if (!lookup(lib, TESS_CUDA_SYMBOL(fn), &nvrtc.fn, sizeof nvrtc.fn)) {                   \
        snprintf(nvrtc_reason, sizeof nvrtc_reason, "NVRTC is too old: it lacks %s",        \
                 TESS_CUDA_SYMBOL(fn));                                                     \
        nvrtc_status = TESS_ERR_UNAVAILABLE;                                                \
        return;                                                                             \
    }
    TESS_NVRTC_FUNCS(TESS_NVRTC_LOAD)
#undef TESS_NVRTC_LOAD
    if (nvrtc.nvrtcVersion(&nvrtc.major, &nvrtc.minor) != NVRTC_SUCCESS) {
        snprintf(nvrtc_reason, sizeof nvrtc_reason, "nvrtcVersion failed");
        nvrtc_status = TESS_ERR_UNAVAILABLE;
        return;
    }
    nvrtc_status = TESS_OK;
}

tess_status tess_nvrtc_get(const tess_nvrtc **out) {
    pthread_once(&nvrtc_once, nvrtc_load);
    if (nvrtc_status) return tess_error(nvrtc_status, "%s", nvrtc_reason);
    *out = &nvrtc;
    return TESS_OK;
}

tess_status tess_cuda_fail(const tess_cuda_driver *drv, CUresult r, tess_status st,
                           const char *what) {
    if (r == CUDA_ERROR_STUB_LIBRARY)
        return tess_error(st, "%s: libcuda.so.1 is the CUDA toolkit's stub, not an NVIDIA driver", what);
    const char *name = NULL, *text = NULL;
    if (drv->cuGetErrorName(r, &name) != CUDA_SUCCESS) name = NULL;
    if (drv->cuGetErrorString(r, &text) != CUDA_SUCCESS) text = NULL;
    if (name)
        return tess_error(st, "%s: %s (%s)", what, name, text ? text : "no description");
    return tess_error(st, "%s: CUDA error %d", what, (int)r);
}
