/* scaled.h - test operators whose kernels take scalar arguments (op.h's
 * kernel ABI), for the cpu and the cuda backend:
 *
 *   axpb:          out[i] = a * in[i] + b        (a: f32, b: f64; n compiled in)
 *   axpb_inplace:  x[i] = a * x[i] + b in place  (x: TESS_BUF_INOUT; n an I64
 *                  scalar, a run-time extent, so one binary serves every n)
 *
 * Emit gives a = SCALED_A and b = SCALED_B, which the references use. The
 * `mode` parameter plants a wrong kernel (b dropped), so a test sees that
 * the result is really verified. */
#ifndef TESS_TEST_SCALED_H
#define TESS_TEST_SCALED_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/op.h"

#define SCALED_A 1.5
#define SCALED_B -0.25
/* cuda: a fixed grid, each thread striding over n, so a longer n set at run time is still covered */
#define SCALED_CUDA_BLOCKS 64

static const char *const scaled_modes[] = {"good", "wrong"};

static tess_status scaled_check(const tess_op *op, const tess_task *t) { (void)op, (void)t; return TESS_OK; }

static tess_status scaled_space(const tess_op *op, const tess_task *t, const tess_device *d, tess_space **out) {
    (void)op, (void)t, (void)d;
    *out = tess_space_create();
    return tess_space_add_labels(*out, "mode", 2, scaled_modes, 0);
}

static bool scaled_inplace(const tess_op *op) { return strcmp(op->name, "axpb_inplace") == 0; }

static tess_status scaled_buffers(const tess_op *op, const tess_task *t, tess_buffer_list *out) {
    if (scaled_inplace(op)) return tess_buffer_list_add(out, "x", TESS_BUF_INOUT, TESS_F32, t->shape[0]);
    tess_status st = tess_buffer_list_add(out, "in", TESS_BUF_IN, TESS_F32, t->shape[0]);
    return st ? st : tess_buffer_list_add(out, "out", TESS_BUF_OUT, TESS_F32, t->shape[0]);
}

static tess_status scaled_emit(const tess_op *op, const tess_task *t, const tess_device *d, const tess_space *s,
                               const tess_config *c, tess_kernel_source *out) {
    bool wrong = tess_config_get(s, c, "mode") == 1;
    bool cuda = strcmp(d->backend, "cuda") == 0;
    bool inplace = scaled_inplace(op);
    const char *b = wrong ? "0.0" : "b";
    char code[1024];
    if (cuda && inplace)
        snprintf(code, sizeof code,
                 "extern \"C\" __global__ void axpb_inplace(float *x, float a, double b, long long n) {\n"
                 "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n"
                 "         i += (long long)gridDim.x * blockDim.x)\n"
                 "        x[i] = (float)(a * x[i] + %s);\n}\n", b);
    else if (cuda)
        snprintf(code, sizeof code,
                 "#define N %lld\n"
                 "extern \"C\" __global__ void axpb(const float *in, float *out, float a, double b) {\n"
                 "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
                 "    if (i < N) out[i] = (float)(a * in[i] + %s);\n}\n", (long long)t->shape[0], b);
    else if (inplace)
        snprintf(code, sizeof code,
                 "#include <stdint.h>\n"
                 "void axpb_inplace(void *const *buf, const void *const *s) {\n"
                 "    float *x = buf[0];\n"
                 "    float a = *(const float *)s[0]; double b = *(const double *)s[1];\n"
                 "    int64_t n = *(const int64_t *)s[2];\n"
                 "    for (int64_t i = 0; i < n; i++) x[i] = (float)(a * x[i] + %s);\n}\n", b);
    else
        snprintf(code, sizeof code,
                 "#define N %lld\n"
                 "void axpb(void *const *buf, const void *const *s) {\n"
                 "    const float *in = buf[0]; float *out = buf[1];\n"
                 "    float a = *(const float *)s[0]; double b = *(const double *)s[1];\n"
                 "    for (long i = 0; i < N; i++) out[i] = (float)(a * in[i] + %s);\n}\n",
                 (long long)t->shape[0], b);
    memset(out, 0, sizeof *out);
    out->code = strdup(code);
    if (!out->code) return TESS_ERR_NOMEM;
    out->nlaunches = 1;
    tess_launch *l = &out->launch[0];
    snprintf(l->entry, sizeof l->entry, "%s", op->name);
    l->block[0] = 256;
    l->grid[0] = inplace ? SCALED_CUDA_BLOCKS : (unsigned)((t->shape[0] + 255) / 256);
    l->block[1] = l->block[2] = l->grid[1] = l->grid[2] = 1;
    tess_status st = tess_kernel_source_add_scalar(out, "a", TESS_SCALAR_F32, SCALED_A);
    if (!st) st = tess_kernel_source_add_scalar(out, "b", TESS_SCALAR_F64, SCALED_B);
    if (!st && inplace) {
        st = tess_kernel_source_add_scalar(out, "n", TESS_SCALAR_I64, (double)t->shape[0]);
        out->runtime_extents = 1u << 0;
    }
    return st;
}

static tess_status scaled_reference(const tess_op *op, const tess_task *t, void *const *buf) {
    const float *in = buf[0];
    float *out = scaled_inplace(op) ? buf[0] : buf[1];
    for (int64_t i = 0; i < t->shape[0]; i++) out[i] = (float)(SCALED_A * (double)in[i] + SCALED_B);
    return TESS_OK;
}

static double scaled_count(const tess_op *op, const tess_task *t) { (void)op; return (double)t->shape[0]; }
static double scaled_tol(const tess_op *op, const tess_task *t) { (void)op, (void)t; return 1e-6; }

static const tess_op_backend scaled_impl[] = {
    {.backend = "cpu", .space = scaled_space, .emit = scaled_emit},
    {.backend = "cuda", .space = scaled_space, .emit = scaled_emit},
};

static const tess_op scaled_axpb = {
    .name = "axpb", .family = "tests", .summary = "out = a * in + b", .default_shape = "4096",
    .extents = "n", .impl = scaled_impl, .nimpl = 2, .check_task = scaled_check,
    .buffers = scaled_buffers, .reference = scaled_reference,
    .flops = scaled_count, .bytes = scaled_count, .tolerance = scaled_tol,
};

static const tess_op scaled_axpb_inplace = {
    .name = "axpb_inplace", .family = "tests", .summary = "x = a * x + b, n at run time", .default_shape = "4096",
    .extents = "n", .impl = scaled_impl, .nimpl = 2, .check_task = scaled_check,
    .buffers = scaled_buffers, .reference = scaled_reference,
    .flops = scaled_count, .bytes = scaled_count, .tolerance = scaled_tol,
};

#endif
