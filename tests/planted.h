/* planted.h - a test operator whose `mode` parameter plants a failure:
 * out[i] = 2 * in[i] done right, or a kernel that does not compile, computes
 * a wrong value, leaves part of the output unwritten, faults, or hangs.
 * Generates C for the cpu backend and CUDA C for the cuda backend. */
#ifndef TESS_TEST_PLANTED_H
#define TESS_TEST_PLANTED_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/op.h"

enum { PLANT_GOOD, PLANT_NOCOMPILE, PLANT_WRONG, PLANT_PARTIAL, PLANT_CRASH, PLANT_HANG, PLANT_MODES };
static const char *const planted_modes[PLANT_MODES] = {"good", "nocompile", "wrong", "partial", "crash", "hang"};

static tess_status planted_check(const tess_op *op, const tess_task *t) { (void)op, (void)t; return TESS_OK; }

static tess_status planted_space(const tess_op *op, const tess_task *t, const tess_device *d, tess_space **out) {
    (void)op, (void)t, (void)d;
    *out = tess_space_create();
    const double unroll[] = {1, 2};
    tess_status st = tess_space_add_labels(*out, "mode", PLANT_MODES, planted_modes, 0);
    if (!st) st = tess_space_add(*out, "unroll", 2, unroll, 0);
    return st;
}

static tess_status planted_buffers(const tess_op *op, const tess_task *t, tess_buffer_list *out) {
    (void)op;
    tess_status st = tess_buffer_list_add(out, "in", TESS_BUF_IN, TESS_F32, t->shape[0]);
    return st ? st : tess_buffer_list_add(out, "out", TESS_BUF_OUT, TESS_F32, t->shape[0]);
}

static tess_status planted_emit(const tess_op *op, const tess_task *t, const tess_device *d, const tess_space *s,
                                const tess_config *c, tess_kernel_source *out) {
    (void)op;
    int mode = (int)tess_config_get(s, c, "mode");
    int unroll = (int)tess_config_get(s, c, "unroll");
    bool cuda = strcmp(d->backend, "cuda") == 0;
    static const char *const cpu_body[PLANT_MODES] = {
        "for (long i = 0; i < N; i++) o[i] = 2 * x[i];",
        "for (long i = 0; i < N; i++) o[i] = 2 * x[i]   /* missing semicolon */",
        "for (long i = 0; i < N; i++) o[i] = 2 * x[i] + (i == 7 ? 1.0f : 0.0f);",
        "for (long i = 0; i < N - 3; i++) o[i] = 2 * x[i];",
        "volatile float *p = 0; p[1 << 20] = 1; (void)x; (void)o;",
        "volatile int spin = 1; while (spin) {} (void)x; (void)o;",
    };
    static const char *const cuda_body[PLANT_MODES] = {
        "if (i < N) o[i] = 2 * x[i];",
        "if (i < N) o[i] = 2 * x[i]   /* missing semicolon */",
        "if (i < N) o[i] = 2 * x[i] + (i == 7 ? 1.0f : 0.0f);",
        "if (i < N - 3) o[i] = 2 * x[i];",
        "float *p = (float *)0x10; p[i] = x[i]; (void)o;",
        /* clock64() is an asm volatile read: the compiler cannot drop this loop */
        "long long t0 = clock64(); while (clock64() - t0 < (1LL << 62)) {} (void)x; (void)o;",
    };
    char code[1024];
    if (cuda)
        snprintf(code, sizeof code,
                 "#define N %lld\n/* unroll %d */\nextern \"C\" __global__ void planted(const float *x, float *o) {\n"
                 "    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;\n    %s\n}\n",
                 (long long)t->shape[0], unroll, cuda_body[mode]);
    else
        snprintf(code, sizeof code,
                 "#define N %lld\n/* unroll %d */\nvoid planted(void *const *b) {\n"
                 "    const float *x = b[0]; float *o = b[1];\n    %s\n}\n",
                 (long long)t->shape[0], unroll, cpu_body[mode]);
    memset(out, 0, sizeof *out);
    out->code = strdup(code);
    if (!out->code) return TESS_ERR_NOMEM;
    out->nlaunches = 1;
    strcpy(out->launch[0].entry, "planted");
    out->launch[0].block[0] = 256;
    out->launch[0].block[1] = out->launch[0].block[2] = 1;
    out->launch[0].grid[0] = (unsigned)((t->shape[0] + 255) / 256);
    out->launch[0].grid[1] = out->launch[0].grid[2] = 1;
    return TESS_OK;
}

static tess_status planted_reference(const tess_op *op, const tess_task *t, void *const *b) {
    (void)op;
    const float *x = b[0];
    float *o = b[1];
    for (int64_t i = 0; i < t->shape[0]; i++) o[i] = 2 * x[i];
    return TESS_OK;
}

static double planted_count(const tess_op *op, const tess_task *t) { (void)op; return (double)t->shape[0]; }
static double planted_tol(const tess_op *op, const tess_task *t) { (void)op, (void)t; return 1e-6; }
static const tess_op_backend planted_impl[] = {
    {.backend = "cpu", .space = planted_space, .emit = planted_emit},
    {.backend = "cuda", .space = planted_space, .emit = planted_emit},
};

static const tess_op planted = {
    .name = "planted", .family = "tests", .summary = "planted kernels", .default_shape = "4096",
    .extents = "n", .impl = planted_impl, .nimpl = 2, .check_task = planted_check,
    .buffers = planted_buffers, .reference = planted_reference,
    .flops = planted_count, .bytes = planted_count, .tolerance = planted_tol,
};

#endif
