/*
 * gemm.c - the gemm operator: D = epilogue(alpha * op(A) op(B) + beta * C)
 * on an M x N x K task. Attributes: layout (nn, nt, tn, tt: whether A and B
 * are stored transposed), alpha, beta (C is a buffer only when beta is not
 * 0), epilogue (none, bias, gelu, silu). Its slots are shared with conv2d
 * (reference.c), its code generators too (gemm_cpu.c, gemm_cuda.c).
 */
#include "core/error.h"
#include "gemm.h"

static tess_status gemm_check(const tess_op *op, const tess_task *t) {
    if (t->ndim != 3)
        return tess_error(TESS_ERR_ARG, "%s: a shape MxNxK (D is M x N, the sum runs over K), not %d extents",
                          op->name, t->ndim);
    return tess_gemm_check_dtypes(op, t);
}

static const tess_attr_spec gemm_attrs[] = {
    {.name = "alpha", .type = TESS_ATTR_REAL, .dflt = "1", .help = "scale of the product"},
    {.name = "beta", .type = TESS_ATTR_REAL, .dflt = "0", .help = "scale of C (0: no C buffer)"},
    {.name = "epilogue", .type = TESS_ATTR_WORD, .dflt = "none", .choices = "none,bias,gelu,silu",
     .help = "fused after the scaling: + bias[n], gelu (erf form) or silu"},
    {.name = "layout", .type = TESS_ATTR_WORD, .dflt = "nn", .choices = "nn,nt,tn,tt",
     .help = "A then B: n stored as used (A MxK, B KxN), t stored transposed; row-major"},
};

/* gemm and conv2d share the code generators: the task says which loads to emit. */
const tess_op_backend tess_gemm_impl[TESS_GEMM_NIMPL] = {
    {.backend = "cpu", .space = tess_gemm_cpu_space, .emit = tess_gemm_cpu_emit},
    {.backend = "cuda", .space = tess_gemm_cuda_space, .emit = tess_gemm_cuda_emit},
};

const tess_op tess_op_gemm = {
    .name = "gemm",
    .family = "gemm",
    .summary = "D = alpha op(A) op(B) + beta C, fused epilogue (buffers: A, B, [C], [bias], D)",
    .default_shape = "4096x4096x4096",
    .extents = "M,N,K",
    .dtype_roles = true,
    .attrs = gemm_attrs,
    .nattrs = sizeof gemm_attrs / sizeof gemm_attrs[0],
    .impl = tess_gemm_impl,
    .nimpl = TESS_GEMM_NIMPL,
    .check_task = gemm_check,
    .buffers = tess_gemm_buffers,
    .fill_input = tess_gemm_fill_input,
    .reference = tess_gemm_reference,
    .flops = tess_gemm_flops,
    .bytes = tess_gemm_bytes,
    .tolerance = tess_gemm_tolerance,
    .verify_scale = tess_gemm_scale,
    .verify = tess_gemm_verify,
    .compute_unit = tess_gemm_compute_unit,
};
