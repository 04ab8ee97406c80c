/*
 * gemm.h - the GEMM family: D = alpha * op(A) op(B) + beta * C with a fused
 * epilogue (bias, GELU, SiLU; conversion to the output dtype), and the 2D
 * convolution (NHWC, KRSC filters) computed as an implicit GEMM on the same
 * code generators: its A operand is the im2col view of the input, gathered
 * in the loads, never stored.
 *
 * Both operators describe their task as a tess_gemm_desc (desc.c), which is
 * all the reference (reference.c), the C/OpenMP generator (gemm_cpu.c) and
 * the CUDA generator (gemm_cuda.c: SIMT, mma.sync and wgmma paths) see.
 */
#ifndef TESS_GEMM_H
#define TESS_GEMM_H

#include <stdbool.h>
#include <stdint.h>
#include "core/op.h"
#include "core/strbuf.h"

typedef enum tess_gemm_epilogue {
    TESS_EPI_NONE,
    TESS_EPI_BIAS,   /* + bias[n] */
    TESS_EPI_GELU,   /* gelu(x), the erf form */
    TESS_EPI_SILU    /* x * sigmoid(x) */
} tess_gemm_epilogue;

/* A task as a GEMM: D[m][n] = epi(alpha * sum_k A(m,k) B(k,n) + beta * C[m][n]). */
typedef struct tess_gemm_desc {
    int64_t m, n, k;
    bool a_trans;          /* A stored K x M (else M x K), row-major */
    bool b_trans;          /* B stored N x K (else K x N), row-major */
    double alpha, beta;
    tess_gemm_epilogue epilogue;
    tess_dtype in, acc, out;
    /* buffer indices; -1 when the task has no such buffer */
    int buf_a, buf_b, buf_c, buf_bias, buf_d;
    /* conv2d: A(m, k) is x[img][p*stride-pad+r][q*stride-pad+s][c] with
     * m = (img*P + p)*Q + q and k = (r*S + s)*C + c; B(k, n) = w[n][k]. */
    bool conv;
    int64_t batch, height, width, channels, out_h, out_w;
    int filter, stride, pad;
} tess_gemm_desc;

/* The task of a gemm or conv2d operator as a GEMM. */
tess_status tess_gemm_describe(const tess_op *op, const tess_task *t, tess_gemm_desc *d);
const char *tess_gemm_epilogue_name(tess_gemm_epilogue e);
/* TESS_OK for bf16 or f16 inputs accumulated in f32 with an output of the
 * input's dtype or f32, e4m3 inputs accumulated in f32 with a bf16 or f32
 * output (per-tensor scales: their product is alpha), and for f32 or f64 in
 * every role; else a message saying what to give. */
tess_status tess_gemm_check_dtypes(const tess_op *op, const tess_task *t);

/* Buffers, reference, counts and verification shared by both operators
 * (reference.c). The reference computes every element in double for tasks
 * of up to TESS_GEMM_FULL_REFERENCE multiply-adds; above, it computes a
 * sample that touches every row and every column (two elements per row and
 * one per column) and leaves the others NaN: tess_gemm_verify compares the
 * sampled elements and requires every other one to be written and finite. */
#define TESS_GEMM_FULL_REFERENCE (1LL << 28)
tess_status tess_gemm_buffers(const tess_op *op, const tess_task *t, tess_buffer_list *out);
/* Input buffer `index` uniform in [-1, 1), filled over the host's cores. */
tess_status tess_gemm_fill_input(const tess_op *op, const tess_task *t, int index, void *host, uint64_t seed);
tess_status tess_gemm_reference(const tess_op *op, const tess_task *t, void *const *bufs);
double tess_gemm_flops(const tess_op *op, const tess_task *t);
double tess_gemm_bytes(const tess_op *op, const tess_task *t);
/* Accepted error relative to scale + |ref|: one unit in the last place of
 * the output dtype plus 4 sqrt(K) units of the accumulation dtype (a sum of
 * K rounded terms whose rounding errors are independent); for e4m3 inputs
 * plus 16 units of 2^-13, the precision of the tensor cores' fp8 sums. */
double tess_gemm_tolerance(const tess_op *op, const tess_task *t);
/* The magnitude of a typical result: |alpha| sqrt(K) rms(A) rms(B) + |beta| max|C| + max|bias|. */
double tess_gemm_scale(const tess_op *op, const tess_task *t, void *const *bufs);
bool tess_gemm_verify(const tess_op *op, const tess_task *t, int b, const void *got, const void *want,
                      tess_result *res);
tess_ceiling_kind tess_gemm_compute_unit(const tess_op *op, const tess_task *t);
/* Whether the reference of the task computes every element. */
bool tess_gemm_full_reference(const tess_gemm_desc *d);

tess_status tess_gemm_cpu_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out);
tess_status tess_gemm_cpu_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                               const tess_config *c, tess_kernel_source *out);
tess_status tess_gemm_cuda_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out);
tess_status tess_gemm_cuda_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                                const tess_config *c, tess_kernel_source *out);

/* The macros every CUDA path's template reads from the task (gemm_common.cuh's
 * dtypes, extents, layouts, scalars, epilogue) and the kernel's parameter
 * list (PARAMS, C_PTR, BIAS_PTR), as the cuda generator writes them. */
void tess_gemm_cuda_task_macros(tess_strbuf *b, const tess_gemm_desc *d);
void tess_gemm_cuda_params(tess_strbuf *b, const tess_gemm_desc *d);

/* Bytes of f32 partial sums a K split over blocks (templates/gemm_split.cuh) may keep. */
#define TESS_GEMM_SPLIT_WORKSPACE_MAX (64.0 * 1024 * 1024)

/* The skinny path (gemm_skinny.c, templates/gemm_skinny.cu): few rows of A,
 * bf16 or f16, B stored N x K, on sm_80 and later; a bandwidth kernel that
 * reads B once. tess_gemm_skinny_add appends its parameters to a cuda space
 * whose path parameter gives it the value `path`, with the constraint that
 * holds the other paths' parameters at their defaults on it and its own at
 * theirs elsewhere. */
bool tess_gemm_skinny_offered(const tess_gemm_desc *d, const tess_device *dev);
bool tess_gemm_skinny_default(const tess_gemm_desc *d);   /* whether it is the space's default path */
tess_status tess_gemm_skinny_add(tess_space *s, const tess_gemm_desc *d, const tess_device *dev, int path);
tess_status tess_gemm_skinny_emit(const tess_op *op, const tess_task *t, const tess_gemm_desc *d, const tess_device *dev,
                                  const tess_space *s, const tess_config *c, tess_kernel_source *out);

extern const tess_op tess_op_gemm, tess_op_conv2d;
/* The backends both operators run on (cpu, cuda), with the same generators. */
enum { TESS_GEMM_NIMPL = 2 };
extern const tess_op_backend tess_gemm_impl[TESS_GEMM_NIMPL];

#endif
