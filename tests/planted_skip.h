/* planted_skip.h - a test operator whose kernel can skip its work:
 * out[i] = 2 * in[i] on every call (mode good), or only when its inputs
 * look new (mode skip: it remembers three of them and returns at once when
 * they are unchanged, as a kernel that caches its outputs would). It passes
 * verification, on inputs of either seed, and then skips every timed run:
 * only its time can tell. Generates C for the cpu backend. */
#ifndef TESS_TEST_PLANTED_SKIP_H
#define TESS_TEST_PLANTED_SKIP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/op.h"

static const char *const skip_modes[] = {"good", "skip"};

static tess_status skip_check(const tess_op *op, const tess_task *t) { (void)op, (void)t; return TESS_OK; }

static tess_status skip_space(const tess_op *op, const tess_task *t, const tess_device *d, tess_space **out) {
    (void)op, (void)t, (void)d;
    *out = tess_space_create();
    return tess_space_add_labels(*out, "mode", 2, skip_modes, 0);
}

static tess_status skip_buffers(const tess_op *op, const tess_task *t, tess_buffer_list *out) {
    (void)op;
    tess_status st = tess_buffer_list_add(out, "in", TESS_BUF_IN, TESS_F32, t->shape[0]);
    return st ? st : tess_buffer_list_add(out, "out", TESS_BUF_OUT, TESS_F32, t->shape[0]);
}

static tess_status skip_emit(const tess_op *op, const tess_task *t, const tess_device *d, const tess_space *s,
                             const tess_config *c, tess_kernel_source *out) {
    (void)op, (void)d;
    bool skip = (int)tess_config_get(s, c, "mode") == 1;
    char code[512];
    snprintf(code, sizeof code,
             "#include <math.h>\n#define N %lld\nvoid planted_skip(void *const *b) {\n"
             "    const float *x = b[0]; float *o = b[1];\n%s"
             "    #pragma omp parallel for\n    for (long i = 0; i < N; i++) o[i] = 2 * x[i];\n}\n",
             (long long)t->shape[0],
             skip ? "    static float seen[3] = {NAN, NAN, NAN};\n"
                    "    if (x[0] == seen[0] && x[N / 2] == seen[1] && x[N - 1] == seen[2]) return;\n"
                    "    seen[0] = x[0], seen[1] = x[N / 2], seen[2] = x[N - 1];\n"
                  : "");
    memset(out, 0, sizeof *out);
    out->code = strdup(code);
    if (!out->code) return TESS_ERR_NOMEM;
    out->nlaunches = 1;
    strcpy(out->launch[0].entry, "planted_skip");
    return TESS_OK;
}

static tess_status skip_reference(const tess_op *op, const tess_task *t, void *const *b) {
    (void)op;
    const float *x = b[0];
    float *o = b[1];
    for (int64_t i = 0; i < t->shape[0]; i++) o[i] = 2 * x[i];
    return TESS_OK;
}

static double skip_flops(const tess_op *op, const tess_task *t) { (void)op; return (double)t->shape[0]; }
static double skip_bytes(const tess_op *op, const tess_task *t) { (void)op; return 8.0 * (double)t->shape[0]; }
static double skip_tol(const tess_op *op, const tess_task *t) { (void)op, (void)t; return 1e-6; }
static const tess_op_backend skip_impl[] = {{.backend = "cpu", .space = skip_space, .emit = skip_emit}};

static const tess_op planted_skip = {
    .name = "planted_skip", .family = "tests", .summary = "a kernel that skips its work after its first call",
    .default_shape = "4194304", .extents = "n", .impl = skip_impl, .nimpl = 1, .check_task = skip_check,
    .buffers = skip_buffers, .reference = skip_reference,
    .flops = skip_flops, .bytes = skip_bytes, .tolerance = skip_tol,
};

#endif
