/*
 * prefill.c - operator `attention`: prefill (and the training forward) over
 * B sequences of H query heads, Sq queries against Skv keys of head
 * dimension D. Buffers, slowest index first:
 *   q    [B][H][Sq][D]     in
 *   k, v [B][Hkv][Skv][D]  in
 *   o    [B][H][Sq][D]     out (the storage dtype)
 *   lse  [B][H][Sq]        out, f32: the natural log of each row's sum of exp(scores)
 */
#include <stdlib.h>
#include "core/error.h"
#include "attention.h"

static const tess_attr_spec prefill_attrs[] = {
    {.name = "causal", .type = TESS_ATTR_BOOL, .dflt = "0", .help = "query i sees keys j <= i + Skv - Sq"},
    {.name = "kv_heads", .type = TESS_ATTR_INT, .dflt = "0", .help = "K/V heads, dividing H (GQA; 0: H)"},
    {.name = "scale", .type = TESS_ATTR_REAL, .dflt = "0", .help = "factor of Q K^T (0: 1/sqrt(D))"},
};

static tess_status prefill_buffers(const tess_op *op, const tess_task *t, tess_buffer_list *out) {
    (void)op;
    const attention_dims d = attention_dims_of(t);
    const int64_t rows = d.B * d.H * d.Sq, kv = d.B * d.Hkv * d.Skv * d.D;
    tess_status st = tess_buffer_list_add(out, "q", TESS_BUF_IN, t->dtype, rows * d.D);
    if (!st) st = tess_buffer_list_add(out, "k", TESS_BUF_IN, t->dtype, kv);
    if (!st) st = tess_buffer_list_add(out, "v", TESS_BUF_IN, t->dtype, kv);
    if (!st) st = tess_buffer_list_add(out, "o", TESS_BUF_OUT, t->dtype, rows * d.D);
    if (!st) st = tess_buffer_list_add(out, "lse", TESS_BUF_OUT, TESS_F32, rows);
    if (!st) out->spec[out->n - 1].tolerance = ATTENTION_LSE_TOLERANCE;
    return st;
}

static tess_status prefill_fill_input(const tess_op *op, const tess_task *t, int index, void *host, uint64_t seed) {
    tess_buffer_list bufs = {0};
    tess_status st = prefill_buffers(op, t, &bufs);
    if (!st) st = attention_fill_uniform(host, bufs.spec[index].dtype, bufs.spec[index].count, seed);
    tess_buffer_list_free(&bufs);
    return st;
}

static int64_t prefill_keys(const attention_dims *d, void *const *bufs, int64_t r, int64_t *kv_rows) {
    (void)bufs;
    const int64_t i = r % d->Sq, h = r / d->Sq % d->H, b = r / (d->Sq * d->H);
    const int64_t nkeys = d->causal ? i + d->Skv - d->Sq + 1 : d->Skv;
    const int64_t head = b * d->Hkv + h / (d->H / d->Hkv);
    for (int64_t j = 0; j < nkeys; j++) kv_rows[j] = (head * d->Skv + j) * d->D;
    return nkeys;
}

static tess_status prefill_reference(const tess_op *op, const tess_task *t, void *const *bufs) {
    (void)op;
    const attention_dims d = attention_dims_of(t);
    return attention_reference_rows(&d, t->dtype, bufs, d.B * d.H * d.Sq, 3, prefill_keys);
}

static const tess_op_backend prefill_impl[] = {
    {.backend = "cpu", .space = attention_cpu_space, .emit = attention_cpu_emit},
    {.backend = "cuda", .space = attention_cuda_space, .emit = attention_cuda_emit},
};

const tess_op tess_op_attention = {
    .name = "attention",
    .family = "attention",
    .summary = "softmax(Q K^T scale + mask) V, prefill (buffers: q, k, v, o, lse; f32, bf16, f16 accumulated in f32)",
    .default_shape = "4x16x4096x4096x128",
    .extents = "B,H,Sq,Skv,D",
    .attrs = prefill_attrs,
    .nattrs = 3,
    .impl = prefill_impl,
    .nimpl = 2,
    .check_task = attention_check,
    .buffers = prefill_buffers,
    .fill_input = prefill_fill_input,
    .reference = prefill_reference,
    .flops = attention_flops,
    .bytes = attention_bytes,
    .tolerance = attention_tolerance,
    .verify = attention_verify,
    .compute_unit = attention_compute_unit,
};
