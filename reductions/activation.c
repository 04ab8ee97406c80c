/*
 * activation.c - the activations as operators (activation.h): buffers x
 * (the gate for swiglu), up (swiglu), y; float64 references; compulsory
 * bytes (each input read once, y written once); tolerances of the storage
 * plus the error budget, measured against 1 + |ref|; typical inputs in
 * blocks of 64 elements of one kind each. References and inputs are
 * computed in parallel (host_parallel.h), inputs in chunks of their own
 * seeds.
 */
#include <gsl/gsl_rng.h>
#include <math.h>
#include "core/error.h"
#include "accuracy.h"
#include "activation.h"
#include "core/host_parallel.h"

#define TYPICAL_BLOCK 64
#define FILL_CHUNK (1024 * TYPICAL_BLOCK)   /* elements per seeded generator of typical inputs */

static int64_t elements(const tess_task *t) { return tess_shape_elements(t->shape, t->ndim); }

static tess_status act_buffers(const tess_op *op, const tess_task *t, tess_buffer_list *out) {
    const bool gated = tess_activation_of(op)->ninputs == 2;
    tess_status st = tess_buffer_list_add(out, gated ? "gate" : "x", TESS_BUF_IN, t->dtype, elements(t));
    if (!st && gated) st = tess_buffer_list_add(out, "up", TESS_BUF_IN, t->dtype, elements(t));
    return st ? st : tess_buffer_list_add(out, "y", TESS_BUF_OUT, t->dtype, elements(t));
}

static double gelu_tanh_form(double x) {
    return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

static double silu(double x) { return x / (1.0 + exp(-x)); }

typedef struct act_job {
    const tess_op *op;
    const tess_task *t;
    void *const *bufs;
} act_job;

static void act_reference_range(void *arg, int part, int64_t first, int64_t end) {
    (void)part;
    const act_job *j = arg;
    const tess_task *t = j->t;
    const tess_activation_info *info = tess_activation_of(j->op);
    void *y = j->bufs[info->ninputs];
    for (int64_t i = first; i < end; i++) {
        const double x = tess_dtype_load(j->bufs[0], t->dtype, i);
        double v = 0;
        switch (info->kind) {
        case TESS_ACT_GELU: v = 0.5 * x * (1.0 + erf(x / sqrt(2.0))); break;
        case TESS_ACT_GELU_TANH: v = gelu_tanh_form(x); break;
        case TESS_ACT_SILU: v = silu(x); break;
        case TESS_ACT_SWIGLU: v = silu(x) * tess_dtype_load(j->bufs[1], t->dtype, i); break;
        }
        tess_dtype_store(y, t->dtype, i, v);
    }
}

static tess_status act_reference(const tess_op *op, const tess_task *t, void *const *bufs) {
    act_job j = {op, t, bufs};
    tess_host_parallel(elements(t), act_reference_range, &j);
    return TESS_OK;
}

typedef struct act_fill {
    const tess_task *t;
    void *host;
} act_fill;

/* A chunk of whole blocks, each of its own kind of typical value. */
static void fill_typical(void *arg, int64_t first, int64_t count, gsl_rng *rng) {
    const act_fill *f = arg;
    for (int64_t at = first; at < first + count; at += TYPICAL_BLOCK) {
        const int64_t n = first + count - at < TYPICAL_BLOCK ? first + count - at : TYPICAL_BLOCK;
        tess_typical_fill_block(f->host, f->t->dtype, at, n, at / TYPICAL_BLOCK, rng);
    }
}

/* Uniform in [-1, 1]. */
static tess_status act_fill_input(const tess_op *op, const tess_task *t, int index, void *host, uint64_t seed) {
    (void)op, (void)index;
    return tess_uniform_fill(host, t->dtype, elements(t), seed);
}

/* Every input in blocks of one kind of typical value each. */
static tess_status act_fill_typical(const tess_op *op, const tess_task *t, int index, void *host, uint64_t seed) {
    (void)op, (void)index;
    act_fill f = {t, host};
    return tess_host_fill_chunks(elements(t), FILL_CHUNK, seed, fill_typical, &f);
}

static double act_flops(const tess_op *op, const tess_task *t) {
    /* counted as the multiplies and adds around one transcendental function */
    static const double per_element[] = {[TESS_ACT_GELU] = 4, [TESS_ACT_GELU_TANH] = 8, [TESS_ACT_SILU] = 3,
                                         [TESS_ACT_SWIGLU] = 4};
    return per_element[tess_activation_of(op)->kind] * (double)elements(t);
}

static double act_bytes(const tess_op *op, const tess_task *t) {
    return (double)(tess_activation_of(op)->ninputs + 1) * (double)elements(t) * (double)tess_dtype_size(t->dtype);
}

static double act_tolerance(const tess_op *op, const tess_task *t) {
    (void)op;
    return tess_storage_tolerance(t);
}

static const tess_attr_spec act_attrs[] = {TESS_ERROR_BUDGET_ATTR};
static const tess_op_backend act_impl[] = {
    {.backend = "cpu", .space = tess_activation_cpu_space, .emit = tess_activation_cpu_emit},
    {.backend = "cuda", .min_arch = "sm_80", .space = tess_activation_cuda_space, .emit = tess_activation_cuda_emit},
};

#define ACT_OP(NAME, INFO, SUMMARY)                                                              \
    {                                                                                            \
        .name = NAME, .family = "reductions", .summary = SUMMARY, .default_shape = "268435456", \
        .extents = "s,t,u,v,w,z,y,x", .attrs = act_attrs, .nattrs = 1, .data = &INFO,           \
        .impl = act_impl, .nimpl = 2, .check_task = tess_storage_check, .buffers = act_buffers,  \
        .fill_input = act_fill_input, .fill_typical = act_fill_typical,                          \
        .reference = act_reference, .flops = act_flops,                                          \
        .bytes = act_bytes, .tolerance = act_tolerance,                                          \
    }

static const tess_activation_info gelu_info = {TESS_ACT_GELU, "ACT_GELU", "approx", 1};
static const tess_activation_info gelu_tanh_info = {TESS_ACT_GELU_TANH, "ACT_GELU_TANH", "fast_tanh", 1};
static const tess_activation_info silu_info = {TESS_ACT_SILU, "ACT_SILU", "fast_exp", 1};
static const tess_activation_info swiglu_info = {TESS_ACT_SWIGLU, "ACT_SWIGLU", "fast_exp", 2};

const tess_op tess_op_gelu = ACT_OP("gelu", gelu_info, "GELU, x * Phi(x) with erf, elementwise (buffers: x, y)");
const tess_op tess_op_gelu_tanh =
    ACT_OP("gelu_tanh", gelu_tanh_info, "GELU, the tanh approximation, elementwise (buffers: x, y)");
const tess_op tess_op_silu = ACT_OP("silu", silu_info, "SiLU, x * sigmoid(x), elementwise (buffers: x, y)");
const tess_op tess_op_swiglu =
    ACT_OP("swiglu", swiglu_info, "SwiGLU, silu(gate) * up, elementwise (buffers: gate, up, y)");
