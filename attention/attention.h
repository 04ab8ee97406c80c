/*
 * attention.h - the attention family: softmax(Q K^T * scale + mask) V for
 * prefill (operator `attention`, extents B,H,Sq,Skv,D) and for decode over
 * a paged KV cache (operator `attention_decode`, extents B,H,Skv,D; one
 * query token per sequence). Both compute with the running-max,
 * running-sum (online) softmax, so no Sq x Skv matrix is ever stored, and
 * both write O and the log-sum-exp of each query row (natural log, f32),
 * which a backward pass needs.
 *
 * Storage is f32, bf16 or f16 (one dtype for Q, K, V and O); products and
 * sums are f32. Attributes:
 *   kv_heads   K/V heads (grouped-query attention; 0: H). H must be a
 *              multiple: query head h reads K/V head h / (H / kv_heads).
 *   scale      the factor of Q K^T (0: 1/sqrt(D))
 *   causal     prefill: query i sees keys j <= i + Skv - Sq (the mask
 *              aligned to the last key, as for a prompt appended to a cache)
 *   page_size  decode: rows of a KV-cache page (16..256, a power of two;
 *              0: an unpaged cache)
 *
 * The float64 reference computes every row of small tasks and an evenly
 * spread sample of the rows of large ones (ATTENTION_REFERENCE_BUDGET
 * multiply-adds at most); the verify hook checks that every element was
 * written and the reference's rows within tolerance.
 */
#ifndef TESS_ATTENTION_H
#define TESS_ATTENTION_H

#include <stdbool.h>
#include <stdint.h>
#include "core/op.h"

/* Multiply-adds the reference spends per instance, at most (a second of
 * host time, about); rows beyond it are sampled. */
#define ATTENTION_REFERENCE_BUDGET (1LL << 29)
/* The accepted error of the log-sum-exp, relative to (1 + |lse|). */
#define ATTENTION_LSE_TOLERANCE 1e-4
/* Elements per independently seeded chunk of an input (even: a draw gives two). */
#define ATTENTION_FILL_CHUNK (1LL << 16)
/* Decode: KV splits the scratch holds per query row, at most. */
#define ATTENTION_MAX_SPLITS 64

/* A task's sizes, read once from its extents and attributes. */
typedef struct attention_dims {
    int64_t B, H, Hkv, Sq, Skv, D;
    double scale;           /* resolved: never 0 */
    bool causal;
    int64_t page;           /* decode: page size, 0 unpaged */
    int64_t pages_per_seq;  /* decode: ceil(Skv / page) (1 unpaged) */
} attention_dims;

/* The dims of a prefill (decode: Sq = 1) task; the task is assumed checked. */
attention_dims attention_dims_of(const tess_task *t);
bool attention_is_decode(const tess_op *op);

/* Slots both operators share (attention.c). */
/* Uniform [-1, 1] inputs, two from each 32-bit draw, filled in parallel
 * chunks of ATTENTION_FILL_CHUNK elements (tess_host_fill_chunks): a decode
 * cache of the shapes holds 2^30 elements per tensor. */
tess_status attention_fill_uniform(void *host, tess_dtype dtype, int64_t count, uint64_t seed);
tess_status attention_check(const tess_op *op, const tess_task *t);
double attention_flops(const tess_op *op, const tess_task *t);
double attention_bytes(const tess_op *op, const tess_task *t);
double attention_tolerance(const tess_op *op, const tess_task *t);
tess_ceiling_kind attention_compute_unit(const tess_op *op, const tess_task *t);
bool attention_verify(const tess_op *op, const tess_task *t, int b, const void *got, const void *want,
                      tess_result *res);
/* The reference samples every `stride`-th query row (over B*H*Sq), odd so
 * that the sampled positions cycle through the sequence. */
int64_t attention_reference_stride(const attention_dims *d);
/* The float64 reference of one query row: scores against keys [0, nkeys) of
 * K/V head rows k_row(j) and v_row(j) (element offsets), o (D doubles) and
 * the lse. q is at element offset q_off; all of dtype `dt`. */
void attention_reference_row(const attention_dims *d, tess_dtype dt, const void *q, int64_t q_off, const void *k,
                             const void *v, const int64_t *kv_rows, int64_t nkeys, double *o, double *lse,
                             double *scores);
/* The keys query row r sees, as element offsets of their K/V rows in
 * kv_rows (at most Skv of them); returns how many. */
typedef int64_t attention_keys_fn(const attention_dims *d, void *const *bufs, int64_t r, int64_t *kv_rows);
/* The float64 reference of every stride-th of `rows` query rows, spread over
 * the host's cores: q, k, v are bufs[0..2], o and the f32 lse
 * bufs[o_index] and bufs[o_index + 1]. */
tess_status attention_reference_rows(const attention_dims *d, tess_dtype dt, void *const *bufs, int64_t rows,
                                     int o_index, attention_keys_fn *keys);

/* Code generation (attention_cpu.c, attention_cuda.c). */
tess_status attention_cpu_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out);
tess_status attention_cpu_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                               const tess_config *c, tess_kernel_source *out);
tess_status attention_cuda_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out);
tess_status attention_cuda_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                                const tess_config *c, tess_kernel_source *out);
tess_status decode_cpu_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out);
tess_status decode_cpu_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                            const tess_config *c, tess_kernel_source *out);
tess_status decode_cuda_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out);
tess_status decode_cuda_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                             const tess_config *c, tess_kernel_source *out);
/* The C macros both generators put above a template: sizes, scale, storage. */
void attention_print_defines(const tess_task *t, const attention_dims *d, void *strbuf);

extern const tess_op tess_op_attention, tess_op_attention_decode;

#endif
