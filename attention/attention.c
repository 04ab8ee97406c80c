/*
 * attention.c - what prefill and decode share (attention.h): task checks,
 * sizes, FLOP and byte counts, tolerances, the float64 reference of one
 * query row, and the verification of the sampled rows.
 */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "core/host_parallel.h"
#include "core/result.h"
#include "core/strbuf.h"
#include "attention.h"

/* by the extents, so that a copy of an operator (the conformance test's) is what it copies */
bool attention_is_decode(const tess_op *op) { return op->extents && strcmp(op->extents, "B,H,Skv,D") == 0; }

static int64_t attr_int(const tess_task *t, const char *name) {
    int64_t v = 0;
    return tess_task_attr_int(t, name, 0, &v) ? 0 : v;
}

attention_dims attention_dims_of(const tess_task *t) {
    attention_dims d = {.B = tess_task_extent(t, "B"), .H = tess_task_extent(t, "H"), .Sq = tess_task_extent(t, "Sq"),
                        .Skv = tess_task_extent(t, "Skv"), .D = tess_task_extent(t, "D")};
    if (d.Sq < 1) d.Sq = 1;   /* decode: one query token */
    d.Hkv = attr_int(t, "kv_heads");
    if (d.Hkv <= 0) d.Hkv = d.H;
    double scale = 0;
    if (tess_task_attr_real(t, "scale", 0, &scale) || scale == 0) scale = 1.0 / sqrt((double)d.D);
    d.scale = scale;
    d.causal = attr_int(t, "causal") != 0;
    d.page = attr_int(t, "page_size");
    d.pages_per_seq = d.page > 0 ? (d.Skv + d.page - 1) / d.page : 1;
    return d;
}

tess_status attention_check(const tess_op *op, const tess_task *t) {
    const bool decode = attention_is_decode(op);
    if (t->ndim != (decode ? 4 : 5))
        return tess_error(TESS_ERR_ARG, "%s takes a shape %s, not %d extents", op->name,
                          decode ? "BxHxSkvxD" : "BxHxSqxSkvxD", t->ndim);
    if (t->dtype != TESS_F32 && t->dtype != TESS_BF16 && t->dtype != TESS_F16)
        return tess_error(TESS_ERR_ARG, "%s supports f32, bf16 and f16 (accumulated in f32), not %s", op->name,
                          tess_dtype_name(t->dtype));
    attention_dims d = attention_dims_of(t);
    if (d.D > 256) return tess_error(TESS_ERR_ARG, "%s: head dimension D=%lld is above 256", op->name, (long long)d.D);
    if (attr_int(t, "kv_heads") < 0 || d.H % d.Hkv != 0)
        return tess_error(TESS_ERR_ARG, "%s: kv_heads=%s must divide H=%lld", op->name, tess_task_attr(t, "kv_heads"),
                          (long long)d.H);
    if (!isfinite(d.scale) || d.scale < 0)
        return tess_error(TESS_ERR_ARG, "%s: scale=%s must be finite and at least 0 (0: 1/sqrt(D))", op->name,
                          tess_task_attr(t, "scale"));
    if (d.causal && d.Sq > d.Skv)
        return tess_error(TESS_ERR_ARG, "%s: a causal task needs Sq <= Skv (the mask is aligned to the last key), "
                          "not Sq=%lld, Skv=%lld", op->name, (long long)d.Sq, (long long)d.Skv);
    if (decode && d.page != 0 && (d.page < 16 || d.page > 256 || (d.page & (d.page - 1))))
        return tess_error(TESS_ERR_ARG, "%s: page_size=%lld must be a power of two in 16..256, or 0 (unpaged)",
                          op->name, (long long)d.page);
    return TESS_OK;
}

/* Pairs of a query row and a key it sees. */
static double visible_pairs(const attention_dims *d) {
    if (!d->causal) return (double)d->Sq * (double)d->Skv;
    const double off = (double)(d->Skv - d->Sq), n = (double)d->Sq;
    return n * (off + 1) + n * (n - 1) / 2;   /* row i sees off + i + 1 keys */
}

double attention_flops(const tess_op *op, const tess_task *t) {
    (void)op;
    attention_dims d = attention_dims_of(t);
    return 4.0 * (double)d.B * (double)d.H * (double)d.D * visible_pairs(&d);
}

double attention_bytes(const tess_op *op, const tess_task *t) {
    attention_dims d = attention_dims_of(t);
    const double es = (double)tess_dtype_size(t->dtype), rows = (double)(d.B * d.H * d.Sq);
    double bytes = es * (2.0 * rows * (double)d.D + 2.0 * (double)(d.B * d.Hkv * d.Skv * d.D)) + 4.0 * rows;
    if (attention_is_decode(op) && d.page > 0) bytes += 4.0 * (double)(d.B * d.pages_per_seq);
    return bytes;
}

/* Both sides round O to the storage (one unit in the last place between
 * them), and the tensor-core kernels round the probabilities P to it before
 * P V: at most half a unit of each weight, so half a unit of max |V|. */
double attention_tolerance(const tess_op *op, const tess_task *t) {
    (void)op;
    return t->dtype == TESS_BF16 ? 0x1p-6 : t->dtype == TESS_F16 ? 0x1p-9 : 1e-4;
}

tess_ceiling_kind attention_compute_unit(const tess_op *op, const tess_task *t) {
    if (attention_is_decode(op) || t->dtype == TESS_F32) return TESS_CEILING_FMA_F32;
    return t->dtype == TESS_BF16 ? TESS_CEILING_MMA_BF16 : TESS_CEILING_MMA_F16;
}

typedef struct fill_ctx {
    void *host;
    tess_dtype dtype;
    const uint16_t *level;   /* 2-byte storage: the stored bits of each of the 2^16 levels, else NULL */
} fill_ctx;

/* Level k of 2^16 in [-1, 1]: finer than bf16 and f16 resolve near 1. */
static double level_value(unsigned long k) { return ((double)k + 0.5) / 32768.0 - 1.0; }

/* two levels from each 32-bit draw */
static void fill_uniform_chunk(void *arg, int64_t first, int64_t count, gsl_rng *rng) {
    const fill_ctx *f = arg;
    const int64_t end = first + count;
    if (f->level) {
        uint16_t *out = f->host;
        for (int64_t i = first; i < end; i += 2) {
            const unsigned long bits = gsl_rng_get(rng);
            out[i] = f->level[bits & 0xffff];
            if (i + 1 < end) out[i + 1] = f->level[(bits >> 16) & 0xffff];
        }
        return;
    }
    for (int64_t i = first; i < end; i += 2) {
        const unsigned long bits = gsl_rng_get(rng);
        tess_dtype_store(f->host, f->dtype, i, level_value(bits & 0xffff));
        if (i + 1 < end) tess_dtype_store(f->host, f->dtype, i + 1, level_value((bits >> 16) & 0xffff));
    }
}

tess_status attention_fill_uniform(void *host, tess_dtype dtype, int64_t count, uint64_t seed) {
    fill_ctx f = {host, dtype, NULL};
    uint16_t *level = NULL;
    if (tess_dtype_size(dtype) == 2) {
        /* the conversion once per level, not once per element (a decode cache holds 2^30 of them) */
        if (!(level = malloc(65536 * sizeof *level))) return tess_error(TESS_ERR_NOMEM, "attention input levels");
        for (unsigned long k = 0; k < 65536; k++) tess_dtype_store(level, dtype, (int64_t)k, level_value(k));
        f.level = level;
    }
    tess_status st = tess_host_fill_chunks(count, ATTENTION_FILL_CHUNK, seed, fill_uniform_chunk, &f);
    free(level);
    return st;
}

int64_t attention_reference_stride(const attention_dims *d) {
    const double work = (double)(d->B * d->H * d->Sq) * (double)d->Skv * (double)d->D;
    if (work <= (double)ATTENTION_REFERENCE_BUDGET) return 1;
    return (int64_t)ceil(work / (double)ATTENTION_REFERENCE_BUDGET) | 1;
}

void attention_reference_row(const attention_dims *d, tess_dtype dt, const void *q, int64_t q_off, const void *k,
                             const void *v, const int64_t *kv_rows, int64_t nkeys, double *o, double *lse,
                             double *scores) {
    double m = -INFINITY;
    for (int64_t j = 0; j < nkeys; j++) {
        double s = 0;
        for (int64_t e = 0; e < d->D; e++) s += tess_dtype_load(q, dt, q_off + e) * tess_dtype_load(k, dt, kv_rows[j] + e);
        scores[j] = s * d->scale;
        m = fmax(m, scores[j]);
    }
    double l = 0;
    for (int64_t e = 0; e < d->D; e++) o[e] = 0;
    for (int64_t j = 0; j < nkeys; j++) {
        const double p = exp(scores[j] - m);
        l += p;
        for (int64_t e = 0; e < d->D; e++) o[e] += p * tess_dtype_load(v, dt, kv_rows[j] + e);
    }
    for (int64_t e = 0; e < d->D; e++) o[e] /= l;
    *lse = m + log(l);
}

typedef struct reference_job {
    const attention_dims *d;
    tess_dtype dt;
    void *const *bufs;
    int o_index;
    int64_t stride;
    attention_keys_fn *keys;
    int failed;   /* a part could not allocate its rows */
} reference_job;

static void reference_part(void *arg, int part, int64_t first, int64_t end) {
    (void)part;
    reference_job *j = arg;
    const attention_dims *d = j->d;
    double *o = malloc((size_t)d->D * sizeof *o), *scores = malloc((size_t)d->Skv * sizeof *scores);
    int64_t *kv_rows = malloc((size_t)d->Skv * sizeof *kv_rows);
    if (!o || !scores || !kv_rows) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        first = end;
    }
    float *lse_buf = j->bufs[j->o_index + 1];
    for (int64_t s = first; s < end; s++) {
        const int64_t r = s * j->stride, nkeys = j->keys(d, j->bufs, r, kv_rows);
        double lse;
        attention_reference_row(d, j->dt, j->bufs[0], r * d->D, j->bufs[1], j->bufs[2], kv_rows, nkeys, o, &lse, scores);
        for (int64_t e = 0; e < d->D; e++) tess_dtype_store(j->bufs[j->o_index], j->dt, r * d->D + e, o[e]);
        lse_buf[r] = (float)lse;
    }
    free(o), free(scores), free(kv_rows);
}

tess_status attention_reference_rows(const attention_dims *d, tess_dtype dt, void *const *bufs, int64_t rows,
                                     int o_index, attention_keys_fn *keys) {
    reference_job j = {d, dt, bufs, o_index, attention_reference_stride(d), keys, 0};
    tess_host_parallel((rows + j.stride - 1) / j.stride, reference_part, &j);
    return j.failed ? tess_error(TESS_ERR_NOMEM, "attention reference rows") : TESS_OK;
}

bool attention_verify(const tess_op *op, const tess_task *t, int b, const void *got, const void *want,
                      tess_result *res) {
    tess_buffer_list bufs = {0};
    if (tess_op_buffers(op, t, &bufs)) {
        tess_result_fail(res, TESS_RESULT_RUNTIME_ERROR, "verification: %s", tess_errmsg());
        return false;
    }
    const tess_buffer_spec spec = bufs.spec[b];
    const double tol = tess_op_buffer_tolerance(op, t, &spec);
    tess_buffer_list_free(&bufs);
    const attention_dims d = attention_dims_of(t);
    const int64_t row_len = strcmp(spec.name, "lse") == 0 ? 1 : d.D, stride = attention_reference_stride(&d);
    int64_t unwritten = 0, wrong = 0, first_unwritten = -1, worst = -1;
    double worst_excess = 0;
    for (int64_t i = 0; i < spec.count; i++) {
        const double g = tess_dtype_load(got, spec.dtype, i);
        if (isnan(g)) {
            if (!unwritten++) first_unwritten = i;
            continue;
        }
        if ((i / row_len) % stride != 0) continue;   /* a row the reference did not compute */
        const double w = tess_dtype_load(want, spec.dtype, i), allowed = tol * (1 + fabs(w));
        const double excess = isfinite(g) ? fabs(g - w) / allowed : INFINITY;
        if (excess > 1) {
            wrong++;
            if (excess > worst_excess) worst_excess = excess, worst = i;
        }
    }
    if (unwritten) {
        tess_result_fail(res, TESS_RESULT_WRONG_RESULT,
                         "%lld of %lld elements of '%s' were not written or are NaN (first at index %lld)",
                         (long long)unwritten, (long long)spec.count, spec.name, (long long)first_unwritten);
        return false;
    }
    if (!wrong) return true;
    tess_result_fail(res, TESS_RESULT_WRONG_RESULT,
                     "%lld elements of '%s' are wrong (rows checked: every %lld-th); worst at index %lld: %.9g, "
                     "expected %.9g (tolerance %.3g relative)",
                     (long long)wrong, spec.name, (long long)stride, (long long)worst,
                     tess_dtype_load(got, spec.dtype, worst), tess_dtype_load(want, spec.dtype, worst), tol);
    return false;
}

void attention_print_defines(const tess_task *t, const attention_dims *d, void *strbuf) {
    tess_strbuf *b = strbuf;
    tess_strbuf_printf(b,
        "#define %s 1\n#define STORAGE_BYTES %d\n"
        "#define B %lld\n#define H %lld\n#define HKV %lld\n#define SQ %lld\n#define SKV_CAP %lld\n#define D %lld\n"
        "#define CAUSAL %d\n#define SCALE %.9gf\n#define PAGE %lld\n#define PAGES_PER_SEQ %lld\n",
        t->dtype == TESS_BF16 ? "STORAGE_BF16" : t->dtype == TESS_F16 ? "STORAGE_F16" : "STORAGE_F32",
        (int)tess_dtype_size(t->dtype), (long long)d->B, (long long)d->H, (long long)d->Hkv, (long long)d->Sq,
        (long long)d->Skv, (long long)d->D, d->causal, d->scale, (long long)d->page, (long long)d->pages_per_seq);
}
