/*
 * decode.c - operator `attention_decode`: one query token per sequence
 * against a KV cache of Skv rows (the cache's capacity: kernels take the
 * length at run time as the scalar Skv, at most this), split over the KV
 * length (flash-decoding) and combined by a second pass. Buffers:
 *   q            [B][H][D]                     in
 *   k, v         paged: [B*pages_per_seq][Hkv][page_size][D], physical pages;
 *                unpaged: [B][Hkv][Skv][D]     in
 *   block_table  [B][pages_per_seq] i32        in, paged only: the physical
 *                page of each logical page (a random permutation here)
 *   o            [B][H][D]                     out
 *   lse          [B][H] f32                    out
 *   part_o, part_lse                           scratch: each split's
 *                normalized O and log-sum-exp, ATTENTION_MAX_SPLITS per row
 */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>
#include "core/error.h"
#include "attention.h"

static const tess_attr_spec decode_attrs[] = {
    {.name = "kv_heads", .type = TESS_ATTR_INT, .dflt = "0", .help = "K/V heads, dividing H (GQA; 0: H)"},
    {.name = "page_size", .type = TESS_ATTR_INT, .dflt = "16", .help = "KV-cache rows per page (16..256; 0: unpaged)"},
    {.name = "scale", .type = TESS_ATTR_REAL, .dflt = "0", .help = "factor of Q K^T (0: 1/sqrt(D))"},
};

static int64_t cache_elements(const attention_dims *d) {
    return d->page > 0 ? d->B * d->pages_per_seq * d->Hkv * d->page * d->D : d->B * d->Hkv * d->Skv * d->D;
}

static tess_status decode_buffers(const tess_op *op, const tess_task *t, tess_buffer_list *out) {
    (void)op;
    const attention_dims d = attention_dims_of(t);
    const int64_t rows = d.B * d.H;
    tess_status st = tess_buffer_list_add(out, "q", TESS_BUF_IN, t->dtype, rows * d.D);
    if (!st) st = tess_buffer_list_add(out, "k", TESS_BUF_IN, t->dtype, cache_elements(&d));
    if (!st) st = tess_buffer_list_add(out, "v", TESS_BUF_IN, t->dtype, cache_elements(&d));
    if (!st && d.page > 0) st = tess_buffer_list_add(out, "block_table", TESS_BUF_IN, TESS_I32, d.B * d.pages_per_seq);
    if (!st) st = tess_buffer_list_add(out, "o", TESS_BUF_OUT, t->dtype, rows * d.D);
    if (!st) st = tess_buffer_list_add(out, "lse", TESS_BUF_OUT, TESS_F32, rows);
    if (!st) out->spec[out->n - 1].tolerance = ATTENTION_LSE_TOLERANCE;
    if (!st) st = tess_buffer_list_add(out, "part_o", TESS_BUF_SCRATCH, TESS_F32, rows * ATTENTION_MAX_SPLITS * d.D);
    if (!st) st = tess_buffer_list_add(out, "part_lse", TESS_BUF_SCRATCH, TESS_F32, rows * ATTENTION_MAX_SPLITS);
    return st;
}

/* The block table: every physical page once, in a random order; the other
 * inputs uniform. */
static tess_status decode_fill_input(const tess_op *op, const tess_task *t, int index, void *host, uint64_t seed) {
    tess_buffer_list bufs = {0};
    tess_status st = decode_buffers(op, t, &bufs);
    if (st) return st;
    const tess_buffer_spec spec = bufs.spec[index];
    tess_buffer_list_free(&bufs);
    if (spec.dtype != TESS_I32) return attention_fill_uniform(host, spec.dtype, spec.count, seed);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng) return tess_error(TESS_ERR_NOMEM, "random number generator");
    gsl_rng_set(rng, (unsigned long)seed);
    int32_t *table = host;
    for (int64_t i = 0; i < spec.count; i++) table[i] = (int32_t)i;
    gsl_ran_shuffle(rng, table, (size_t)spec.count, sizeof *table);
    gsl_rng_free(rng);
    return TESS_OK;
}

static int64_t decode_keys(const attention_dims *d, void *const *bufs, int64_t r, int64_t *kv_rows) {
    const int32_t *table = d->page > 0 ? bufs[3] : NULL;
    const int64_t b = r / d->H, hk = r % d->H / (d->H / d->Hkv);
    for (int64_t j = 0; j < d->Skv; j++) {
        kv_rows[j] = table ? (((int64_t)table[b * d->pages_per_seq + j / d->page] * d->Hkv + hk) * d->page + j % d->page) * d->D
                           : ((b * d->Hkv + hk) * d->Skv + j) * d->D;
    }
    return d->Skv;
}

static tess_status decode_reference(const tess_op *op, const tess_task *t, void *const *bufs) {
    (void)op;
    const attention_dims d = attention_dims_of(t);
    return attention_reference_rows(&d, t->dtype, bufs, d.B * d.H, d.page > 0 ? 4 : 3, decode_keys);
}

static const tess_op_backend decode_impl[] = {
    {.backend = "cpu", .space = decode_cpu_space, .emit = decode_cpu_emit},
    {.backend = "cuda", .space = decode_cuda_space, .emit = decode_cuda_emit},
};

const tess_op tess_op_attention_decode = {
    .name = "attention_decode",
    .family = "attention",
    .summary = "one query token against a paged KV cache, split over the KV length (buffers: q, k, v, block_table, "
               "o, lse; Skv set at run time)",
    .default_shape = "8x32x32768x128",
    .extents = "B,H,Skv,D",
    .attrs = decode_attrs,
    .nattrs = 3,
    .impl = decode_impl,
    .nimpl = 2,
    .check_task = attention_check,
    .buffers = decode_buffers,
    .fill_input = decode_fill_input,
    .reference = decode_reference,
    .flops = attention_flops,
    .bytes = attention_bytes,
    .tolerance = attention_tolerance,
    .verify = attention_verify,
    .compute_unit = attention_compute_unit,
};
