/* planted_skip.h - a test operator whose kernel can skip its work:
 * out[i] = 2 * in[i] on every call (mode good), or on its first call only
 * (mode skip): it passes verification, which sees the first call, and then
 * returns at once, as a kernel that caches its outputs would. Only its time
 * can tell. Generates C for the cpu backend. */
#ifndef TESS_TEST_PLANTED_SKIP_H
#define TESS_TEST_PLANTED_SKIP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/op.h"

static const char *const skip_modes[] = {"good", "skip"};

static tess_status skip_check(const tess_task *t) { (void)t; return TESS_OK; }

static tess_status skip_space(const tess_task *t, const tess_device *d, tess_space **out) {
    (void)t, (void)d;
    *out = tess_space_create();
    return tess_space_add_labels(*out, "mode", 2, skip_modes, 0);
}

static tess_status skip_buffers(const tess_task *t, tess_buffer_spec *s, int *n) {
    s[0] = (tess_buffer_spec){"in", TESS_BUF_IN, TESS_F32, t->shape[0]};
    s[1] = (tess_buffer_spec){"out", TESS_BUF_OUT, TESS_F32, t->shape[0]};
    *n = 2;
    return TESS_OK;
}

static tess_status skip_emit(const tess_task *t, const tess_device *d, const tess_space *s,
                             const tess_config *c, tess_kernel_source *out) {
    (void)d;
    bool skip = (int)tess_config_get(s, c, "mode") == 1;
    char code[512];
    snprintf(code, sizeof code,
             "#define N %lld\nvoid planted_skip(void *const *b) {\n"
             "    const float *x = b[0]; float *o = b[1];\n%s"
             "    #pragma omp parallel for\n    for (long i = 0; i < N; i++) o[i] = 2 * x[i];\n}\n",
             (long long)t->shape[0], skip ? "    static int calls;\n    if (calls++) return;\n" : "");
    memset(out, 0, sizeof *out);
    out->code = strdup(code);
    if (!out->code) return TESS_ERR_NOMEM;
    out->nlaunches = 1;
    strcpy(out->launch[0].entry, "planted_skip");
    return TESS_OK;
}

static tess_status skip_reference(const tess_task *t, void *const *b) {
    const float *x = b[0];
    float *o = b[1];
    for (int64_t i = 0; i < t->shape[0]; i++) o[i] = 2 * x[i];
    return TESS_OK;
}

static double skip_flops(const tess_task *t) { return (double)t->shape[0]; }
static double skip_bytes(const tess_task *t) { return 8.0 * (double)t->shape[0]; }
static double skip_tol(const tess_task *t) { (void)t; return 1e-6; }
static const char *const skip_backends[] = {"cpu", NULL};

static const tess_op planted_skip = {
    .name = "planted_skip", .family = "tests", .summary = "a kernel that skips its work after its first call",
    .default_shape = "4194304", .backends = skip_backends, .check_task = skip_check, .space = skip_space,
    .buffers = skip_buffers, .emit = skip_emit, .reference = skip_reference,
    .flops = skip_flops, .bytes = skip_bytes, .tolerance = skip_tol,
};

#endif
