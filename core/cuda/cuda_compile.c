/*
 * cuda_compile.c - NVRTC compilation to a cubin for the device's exact
 * architecture, with an on-disk cache.
 *
 * Runs in a compile worker process (NVRTC serializes inside one process, so
 * the pool uses processes). Options: --gpu-architecture=sm_XX (sm_XXa when
 * the source needs Hopper-only instructions), -default-device, --std=c++17,
 * --use_fast_math only when the config asks for it, then the source's own
 * options. Cubins are kept under tess_cache_dir()/cuda, named by a hash of
 * the source, the options, the NVRTC version and the architecture.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_internal.h"
#include "error.h"
#include "fsutil.h"

#define MAX_OPTIONS 48

typedef struct option_list {
    const char *opt[MAX_OPTIONS];
    int n;
    char words[sizeof(((tess_kernel_source *)0)->options)];   /* the source's options, split */
    char arch[64];
    char joined[512];   /* all of them, for the cache key */
} option_list;

static tess_status build_options(const tess_device *dev, const tess_kernel_source *src,
                                 option_list *o) {
    if (strncmp(dev->arch, "sm_", 3) != 0)
        return tess_error(TESS_ERR_ARG, "cuda compile: device architecture '%s' is not sm_XX",
                          dev->arch);
    snprintf(o->arch, sizeof o->arch, "--gpu-architecture=%s%s", dev->arch,
             src->hopper_only ? "a" : "");
    o->n = 0;
    o->opt[o->n++] = o->arch;
    o->opt[o->n++] = "-default-device";
    o->opt[o->n++] = "--std=c++17";
    if (src->fast_math) o->opt[o->n++] = "--use_fast_math";
    snprintf(o->words, sizeof o->words, "%s", src->options);
    for (char *save = NULL, *w = strtok_r(o->words, " \t", &save); w;
         w = strtok_r(NULL, " \t", &save)) {
        if (o->n == MAX_OPTIONS)
            return tess_error(TESS_ERR_ARG, "cuda compile: more than %d options", MAX_OPTIONS);
        o->opt[o->n++] = w;
    }
    size_t len = 0;
    o->joined[0] = '\0';
    for (int i = 0; i < o->n; i++) {
        int w = snprintf(o->joined + len, sizeof o->joined - len, "%s%s", i ? " " : "", o->opt[i]);
        if (w < 0 || (size_t)w >= sizeof o->joined - len)
            return tess_error(TESS_ERR_ARG, "cuda compile: options too long");
        len += (size_t)w;
    }
    return TESS_OK;
}

/* <cache>/cuda/<key>.cubin */
static tess_status cache_path(const tess_nvrtc *nv, const tess_kernel_source *src,
                              const option_list *o, char *path, size_t len) {
    char dir[4096];
    tess_status st = tess_cache_dir(dir, sizeof dir - 64);
    if (st) return st;
    strcat(dir, "/cuda");
    st = tess_mkdir_p(dir);
    if (st) return st;
    char version[32];
    snprintf(version, sizeof version, "nvrtc %d.%d", nv->major, nv->minor);
    const char *parts[] = {src->code, o->joined, version, o->arch};
    char key[33];
    tess_cache_key(parts, 4, key);
    if ((size_t)snprintf(path, len, "%s/%s.cubin", dir, key) >= len)
        return tess_error(TESS_ERR_IO, "cache path too long");
    return TESS_OK;
}

/* The program's log (malloc'd; "" when there is none). */
static char *program_log(const tess_nvrtc *nv, nvrtcProgram prog) {
    size_t n = 0;
    if (nv->nvrtcGetProgramLogSize(prog, &n) != NVRTC_SUCCESS) n = 0;
    char *log = malloc(n + 1);
    if (!log) return NULL;
    log[0] = '\0';
    if (n > 0 && nv->nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS) log[0] = '\0';
    log[n] = '\0';
    return log;
}

static tess_status nvrtc_compile(const tess_nvrtc *nv, const tess_kernel_source *src,
                                 const option_list *o, tess_blob *bin, char **log) {
    nvrtcProgram prog;
    nvrtcResult r = nv->nvrtcCreateProgram(&prog, src->code, "tessera_kernel.cu", 0, NULL, NULL);
    if (r != NVRTC_SUCCESS)
        return tess_error(TESS_ERR_COMPILE, "nvrtcCreateProgram: %s", nv->nvrtcGetErrorString(r));
    r = nv->nvrtcCompileProgram(prog, o->n, o->opt);
    if (r != NVRTC_SUCCESS) {
        char *text = program_log(nv, prog);
        nv->nvrtcDestroyProgram(&prog);
        *log = text;
        return tess_error(TESS_ERR_COMPILE, "NVRTC (%s): %s", o->joined, nv->nvrtcGetErrorString(r));
    }
    size_t size = 0;
    r = nv->nvrtcGetCUBINSize(prog, &size);
    void *data = r == NVRTC_SUCCESS && size > 0 ? malloc(size) : NULL;
    if (data && nv->nvrtcGetCUBIN(prog, data) != NVRTC_SUCCESS) {
        free(data);
        data = NULL;
    }
    nv->nvrtcDestroyProgram(&prog);
    if (!data) return tess_error(TESS_ERR_COMPILE, "NVRTC produced no cubin (%s)", o->joined);
    bin->data = data;
    bin->size = size;
    return TESS_OK;
}

tess_status tess_cuda_compile(const tess_device *dev, const tess_kernel_source *src, tess_blob *bin,
                              char **log) {
    *log = NULL;
    bin->data = NULL;
    bin->size = 0;
    if (!src->code) return tess_error(TESS_ERR_ARG, "cuda compile: no source");
    const tess_nvrtc *nv;
    tess_status st = tess_nvrtc_get(&nv);
    if (st) return st;
    option_list o;
    st = build_options(dev, src, &o);
    if (st) return st;
    char path[4200];
    st = cache_path(nv, src, &o, path, sizeof path);
    if (st) return st;

    char *cached = NULL;
    size_t size = 0;
    if (tess_read_file(path, &cached, &size) == TESS_OK && size > 0) {
        bin->data = cached;
        bin->size = size;
        return TESS_OK;
    }
    free(cached);
    tess_error_clear();
    st = nvrtc_compile(nv, src, &o, bin, log);
    if (st) return st;
    /* A cache that cannot be written only costs time later. */
    if (tess_write_file_atomic(path, bin->data, bin->size) != TESS_OK) tess_error_clear();
    return TESS_OK;
}
