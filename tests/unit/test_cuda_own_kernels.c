/*
 * test_cuda_own_kernels.c - the cuda backend's own kernels (the calibration
 * kernels: copy, read-only, FMA, mma.sync and wgmma; the verification
 * kernels) compile with NVRTC through the backend's compile op for every
 * architecture they are used on: sm_80, sm_89 and sm_90, or sm_90a for the
 * wgmma kernels, and each cubin holds every entry point. NVRTC needs no GPU;
 * without it (or without the toolkit at build time) the test is skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/backend.h"
#include "core/cuda/cuda_backend.h"
#include "core/error.h"
#include "h200.h"

/* Present only in builds with the CUDA toolkit. */
extern tess_status tess_cuda_register(void) __attribute__((weak));
extern const tess_cuda_own_source tess_cuda_own_sources[] __attribute__((weak));

/* Compiles one source for one architecture; false when NVRTC is missing. */
static bool compile_for(const tess_backend_ops *be, const tess_cuda_own_source *o, int cc, int *compiled) {
    tess_device dev = tess_test_h200("NVIDIA test GPU");
    snprintf(dev.arch, sizeof dev.arch, "sm_%d", cc);
    dev.cc_major = cc / 10;
    dev.cc_minor = cc % 10;
    tess_kernel_source src = {.code = (char *)o->code, .nlaunches = 1};
    snprintf(src.min_arch, sizeof src.min_arch, "%s", o->min_arch);
    tess_blob bin = {0};
    char *log = NULL;
    tess_status st = be->compile(&dev, &src, &bin, &log);
    if (st == TESS_ERR_UNAVAILABLE) {
        printf("skipped: %s\n", tess_errmsg());
        return false;
    }
    CHECK_MSG(st == TESS_OK, "%s for sm_%d (%s): %s\n%s", o->what, cc, o->min_arch, tess_errmsg(), log ? log : "");
    for (int e = 0; st == TESS_OK && o->entries[e]; e++)
        CHECK_MSG(memmem(bin.data, bin.size, o->entries[e], strlen(o->entries[e])),
                  "entry %s missing from the cubin of %s for sm_%d", o->entries[e], o->what, cc);
    if (st == TESS_OK) ++*compiled;
    free(log);
    tess_blob_free(&bin);
    return true;
}

int main(void) {
    if (!tess_cuda_register || !tess_cuda_own_sources) {
        printf("skipped: built without the CUDA toolkit\n");
        return 77;
    }
    CHECK_OK(tess_cuda_register());
    const tess_backend_ops *be = tess_backend_find("cuda");
    CHECK(be != NULL);
    if (!be) return check_finish("test_cuda_own_kernels");
    static const int archs[] = {80, 89, 90};
    int compiled = 0, sources = 0;
    for (const tess_cuda_own_source *o = tess_cuda_own_sources; o->code; o++, sources++) {
        CHECK(o->what && o->min_arch && o->entries[0]);
        int min_cc = 0;
        bool specific = false;
        if (o->min_arch[0]) CHECK_OK(tess_arch_parse(o->min_arch, &min_cc, &specific));
        for (size_t a = 0; a < sizeof archs / sizeof archs[0]; a++) {
            if (archs[a] < min_cc || (specific && archs[a] != min_cc)) continue;
            if (!compile_for(be, o, archs[a], &compiled)) return 77;
        }
    }
    /* calibration (memory and FMA, mma.sync, wgmma) and verification */
    CHECK_MSG(sources == 4, "%d sources", sources);
    printf("%d own sources, %d compilations\n", sources, compiled);
    return check_finish("test_cuda_own_kernels");
}
