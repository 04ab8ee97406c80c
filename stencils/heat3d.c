/*
 * heat3d.c - the 3D 7-point heat stencil as an operator:
 *   out = in + alpha * (in[z±1] + in[y±1] + in[x±1] - 6 in)   on the interior,
 *   out = in                                                 on the boundary.
 * One explicit Euler step of the heat equation with fixed boundary values;
 * ping-ponging in and out runs a simulation. Grids are z, y, x with x fastest.
 */
#include <stdio.h>
#include "core/error.h"
#include "heat3d.h"

static tess_status heat3d_check(const tess_op *op, const tess_task *t) {
    (void)op;
    if (t->ndim != 3)
        return tess_error(TESS_ERR_ARG, "heat3d needs a 3D shape (z x y x x), got %d dimensions", t->ndim);
    for (int i = 0; i < 3; i++)
        if (t->shape[i] < 3)
            return tess_error(TESS_ERR_ARG, "heat3d needs at least 3 points per dimension");
    if (t->dtype != TESS_F32 && t->dtype != TESS_F64)
        return tess_error(TESS_ERR_ARG, "heat3d supports f32 and f64, not %s", tess_dtype_name(t->dtype));
    return TESS_OK;
}

static tess_status heat3d_buffers(const tess_op *op, const tess_task *t, tess_buffer_list *out) {
    (void)op;
    int64_t count = tess_shape_elements(t->shape, 3);
    tess_status st = tess_buffer_list_add(out, "u", TESS_BUF_IN, t->dtype, count);
    if (!st) st = tess_buffer_list_add(out, "u_new", TESS_BUF_OUT, t->dtype, count);
    if (!st) snprintf(out->spec[1].advances, sizeof out->spec[1].advances, "u");
    return st;
}

static tess_status heat3d_reference(const tess_op *op, const tess_task *t, void *const *bufs) {
    (void)op;
    const int64_t nz = t->shape[0], ny = t->shape[1], nx = t->shape[2];
    const void *in = bufs[0];
    void *out = bufs[1];
    const double a = TESS_HEAT3D_ALPHA;
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++) {
                int64_t i = (z * ny + y) * nx + x;
                double c = tess_dtype_load(in, t->dtype, i);
                if (z == 0 || y == 0 || x == 0 || z == nz - 1 || y == ny - 1 || x == nx - 1) {
                    tess_dtype_store(out, t->dtype, i, c);
                    continue;
                }
                double s = tess_dtype_load(in, t->dtype, i - 1) + tess_dtype_load(in, t->dtype, i + 1) +
                           tess_dtype_load(in, t->dtype, i - nx) + tess_dtype_load(in, t->dtype, i + nx) +
                           tess_dtype_load(in, t->dtype, i - nx * ny) +
                           tess_dtype_load(in, t->dtype, i + nx * ny);
                tess_dtype_store(out, t->dtype, i, c + a * (s - 6.0 * c));
            }
    return TESS_OK;
}

static double heat3d_flops(const tess_op *op, const tess_task *t) {
    (void)op;
    /* 6 additions, one subtraction, one multiply, one multiply-add per interior point */
    return 9.0 * (double)((t->shape[0] - 2) * (t->shape[1] - 2) * (t->shape[2] - 2));
}

static double heat3d_bytes(const tess_op *op, const tess_task *t) {
    (void)op;
    return 2.0 * (double)tess_shape_elements(t->shape, 3) * (double)tess_dtype_size(t->dtype);
}

static double heat3d_tolerance(const tess_op *op, const tess_task *t) {
    (void)op;
    return t->dtype == TESS_F64 ? 1e-12 : 1e-5;
}

static const tess_op_backend heat3d_impl[] = {
    {.backend = "cpu", .space = tess_heat3d_cpu_space, .emit = tess_heat3d_cpu_emit},
    {.backend = "cuda", .space = tess_heat3d_cuda_space, .emit = tess_heat3d_cuda_emit},
};

const tess_op tess_op_heat3d = {
    .name = "heat3d",
    .family = "stencils",
    .summary = "3D 7-point heat stencil, one explicit time step (buffers: u, u_new)",
    .default_shape = "256x256x256",
    .extents = "z,y,x",
    .impl = heat3d_impl,
    .nimpl = 2,
    .check_task = heat3d_check,
    .buffers = heat3d_buffers,
    .reference = heat3d_reference,
    .flops = heat3d_flops,
    .bytes = heat3d_bytes,
    .tolerance = heat3d_tolerance,
};
