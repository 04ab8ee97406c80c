/*
 * lbm_op.c - the operator tables of lbm_d2q9 and lbm_d3q19 (lattice.h):
 * task checks, buffers, test inputs, counts and tolerances.
 */
#include <gsl/gsl_rng.h>
#include <string.h>
#include "core/error.h"
#include "core/host_parallel.h"
#include "lattice.h"

static tess_status lbm_check(const tess_op *op, const tess_task *t) {
    if (t->dtype != TESS_F32 && t->dtype != TESS_F64 && t->dtype != TESS_F16)
        return tess_error(TESS_ERR_ARG, "%s stores populations in f32, f64 or f16, not %s", op->name,
                          tess_dtype_name(t->dtype));
    lbm_params p;
    tess_status st = lbm_params_get(op, t, &p);
    if (st) return st;
    for (int a = 0; a < t->ndim; a++)
        if (t->shape[a] < 2 || t->shape[a] > (1 << 20))
            return tess_error(TESS_ERR_ARG, "%s: extent %s is %lld, outside 2..%d", op->name, t->dim[a],
                              (long long)t->shape[a], 1 << 20);
    if (p.cells * p.lat->q > ((int64_t)1 << 40))
        return tess_error(TESS_ERR_ARG, "%s: %lld cells are too many", op->name, (long long)p.cells);
    return TESS_OK;
}

static tess_status lbm_buffers(const tess_op *op, const tess_task *t, tess_buffer_list *out) {
    const lbm_lattice *L = op->data;
    int64_t cells = tess_shape_elements(t->shape, t->ndim);
    tess_status st = tess_buffer_list_add(out, "g", TESS_BUF_IN, t->dtype, cells * L->q);
    if (!st) st = tess_buffer_list_add(out, "flags", TESS_BUF_IN, TESS_U8, cells);
    if (!st) st = tess_buffer_list_add(out, "g_out", TESS_BUF_OUT, t->dtype, cells * L->q);
    if (!st) snprintf(out->spec[2].advances, sizeof out->spec[2].advances, "g");
    return st;
}

typedef struct lbm_fill_ctx {
    const lbm_lattice *lat;
    const lbm_params *p;
    tess_dtype dt;
    void *host;
} lbm_fill_ctx;

/* Populations a few percent off their rest weights: elements [first, first + count). */
static void lbm_fill_populations(void *ctx, int64_t first, int64_t count, gsl_rng *r) {
    const lbm_fill_ctx *f = ctx;
    for (int64_t k = first; k < first + count; k++) {
        int i = (int)(f->p->aos ? k % f->lat->q : k / f->p->cells);
        tess_dtype_store(f->host, f->dt, k, f->lat->w[i] * 0.1 * (2.0 * gsl_rng_uniform(r) - 1.0));
    }
}

/* A mix of every cell kind, so each boundary rule meets every neighbourhood. */
static void lbm_fill_flags(void *ctx, int64_t first, int64_t count, gsl_rng *r) {
    uint8_t *flags = ((const lbm_fill_ctx *)ctx)->host;
    for (int64_t c = first; c < first + count; c++) {
        double u = gsl_rng_uniform(r);
        flags[c] = u < 0.7 ? LBM_FLUID : u < 0.8 ? LBM_WALL : u < 0.9 ? LBM_MOVING : LBM_OUTLET;
    }
}

/* Test inputs, filled in chunks on all the host's cores (a 256^3 D3Q19 grid
 * holds 3e8 populations). */
static tess_status lbm_fill(const tess_op *op, const tess_task *t, int index, void *host, uint64_t seed) {
    lbm_params p;
    tess_status st = lbm_params_get(op, t, &p);
    if (st) return st;
    lbm_fill_ctx f = {op->data, &p, t->dtype, host};
    const int64_t chunk = (int64_t)1 << 16;
    if (index == 0) return tess_host_fill_chunks(p.cells * p.lat->q, chunk, seed, lbm_fill_populations, &f);
    if (index == 1) return tess_host_fill_chunks(p.cells, chunk, seed, lbm_fill_flags, &f);
    return TESS_OK;
}

static double lbm_flops(const tess_op *op, const tess_task *t) {
    const lbm_lattice *L = op->data;
    /* moments about 4 Q, equilibria about 8 Q, relaxation 3 Q, and the velocity */
    return (double)tess_shape_elements(t->shape, t->ndim) * (15.0 * L->q + 10.0);
}

static double lbm_bytes(const tess_op *op, const tess_task *t) {
    const lbm_lattice *L = op->data;
    double cells = (double)tess_shape_elements(t->shape, t->ndim);
    return cells * (2.0 * L->q * (double)tess_dtype_size(t->dtype) + 1.0);   /* and a byte of kind */
}

/* Errors are absolute at the scale of g (|g| well below 1): the rounding of
 * the stored result: in f16 a half ulp of |g| <= 0.1 is 2.5e-5. */
static double lbm_tolerance(const tess_op *op, const tess_task *t) {
    (void)op;
    return t->dtype == TESS_F64 ? 1e-12 : t->dtype == TESS_F32 ? 1e-5 : 1e-4;
}

static const tess_op_backend lbm_impl[] = {
    {.backend = "cpu", .space = lbm_cpu_space, .emit = lbm_cpu_emit},
    {.backend = "cuda", .space = lbm_cuda_space, .emit = lbm_cuda_emit},
};

#define LBM_COMMON_ATTRS                                                                                   \
    {"collision", TESS_ATTR_WORD, "bgk", "bgk,trt", "collision: BGK, or TRT with magic parameter 3/16"},   \
    {"layout", TESS_ATTR_WORD, "soa", "soa,aos", "populations direction-major (soa) or cell-major (aos)"}, \
    {"omega", TESS_ATTR_REAL, "1.6", NULL, "relaxation rate 1/tau: viscosity (1/omega - 1/2) / 3"},        \
    {"ux", TESS_ATTR_REAL, "0", NULL, "moving wall (lid, inlet) velocity, x (lattice units)"},             \
    {"uy", TESS_ATTR_REAL, "0", NULL, "moving wall velocity, y"}

static const tess_attr_spec lbm_d2q9_attrs[] = {LBM_COMMON_ATTRS};
static const tess_attr_spec lbm_d3q19_attrs[] = {
    LBM_COMMON_ATTRS, {"uz", TESS_ATTR_REAL, "0", NULL, "moving wall velocity, z"}};

#define LBM_OP_SLOTS                   \
    .family = "stencils",              \
    .impl = lbm_impl,                  \
    .nimpl = 2,                        \
    .check_task = lbm_check,           \
    .buffers = lbm_buffers,            \
    .fill_input = lbm_fill,            \
    .reference = lbm_reference,        \
    .flops = lbm_flops,                \
    .bytes = lbm_bytes,                \
    .tolerance = lbm_tolerance

const tess_op tess_op_lbm_d2q9 = {
    .name = "lbm_d2q9",
    .summary = "lattice Boltzmann D2Q9 stream-collide step with walls, lid, inlet, outlet (buffers: g, flags, g_out)",
    .default_shape = "1024x1024",
    .extents = "y,x",
    .attrs = lbm_d2q9_attrs,
    .nattrs = sizeof lbm_d2q9_attrs / sizeof lbm_d2q9_attrs[0],
    .data = &lbm_d2q9,
    LBM_OP_SLOTS,
};

const tess_op tess_op_lbm_d3q19 = {
    .name = "lbm_d3q19",
    .summary = "lattice Boltzmann D3Q19 stream-collide step with walls, lid, inlet, outlet (buffers: g, flags, g_out)",
    .default_shape = "128x128x128",
    .extents = "z,y,x",
    .attrs = lbm_d3q19_attrs,
    .nattrs = sizeof lbm_d3q19_attrs / sizeof lbm_d3q19_attrs[0],
    .data = &lbm_d3q19,
    LBM_OP_SLOTS,
};
