/*
 * attention_cuda.c - CUDA code generation for prefill and decode: a config
 * becomes the #defines above templates/storage.cuh and one template.
 *
 * Prefill (templates/prefill_simple.cu, prefill_mma.cu, prefill_wgmma.cu):
 *   kernel     simple (any architecture, dtype and shape), mma (sm_80
 *              tensor cores: bf16/f16, D 64 or 128, Sq and Skv multiples of 16)
 *              or wgmma (sm_90a warpgroup MMA fed by TMA: the same, multiples of 64)
 *   block_q    query rows of a block (wgmma: 64 or 128, a consumer warpgroup per 64)
 *   block_kv   key/value rows of a shared-memory tile (wgmma: 64 or 128)
 *   warps      warps of a block (mma: each owns block_q / (16 warps) tiles of 16 rows, 1 or 2;
 *              wgmma: the consumers' warps, block_q / 16, beside the producer warpgroup)
 *   stages     mma, wgmma: K/V tiles in flight in the ring (simple: 1; wgmma: at least 2)
 *   pingpong   wgmma with two consumers: 1 makes them take turns issuing their MMAs, so one's
 *              softmax overlaps the other's MMAs (0 otherwise; in the space only where wgmma is)
 * Decode (templates/decode.cu):
 *   splits     parts of the KV length, combined by a second launch
 *   warps      warps of a split's block
 *   lanes_per_key  lanes sharing one key's D elements (4..32)
 *   unroll     keys a lane group loads before it uses any
 *   heads_per_block  query heads of a K/V head's group that one block serves
 */
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "core/strbuf.h"
#include "core/wgmma_emit.h"
#include "attention.h"

extern const char tess_src_core_templates_storage_cuh[];
extern const char tess_src_attention_templates_storage_cuh[];
extern const char tess_src_attention_templates_prefill_simple_cu[];
extern const char tess_src_attention_templates_prefill_mma_cu[];
extern const char tess_src_attention_templates_decode_cu[];
extern const char tess_src_attention_templates_prefill_wgmma_cu[];
extern const char tess_src_core_templates_hopper_cuh[];

enum { KERNEL_SIMPLE, KERNEL_MMA, KERNEL_WGMMA };
static const char *const kernel_labels[] = {"simple", "mma", "wgmma"};

#define MAX_MMA_REGS 200   /* fragment registers a thread of the mma kernel may hold before it spills */

typedef struct prefill_limits {
    int kernel, bq, bkv, warps, stages, pingpong;   /* parameter indices */
    int64_t sq, skv, d;
    int esize;
    int64_t smem;
} prefill_limits;

static int64_t device_smem(const tess_device *dev) {
    return dev->smem_per_block_optin > 0 ? dev->smem_per_block_optin : dev->smem_per_block;
}

static int64_t simple_smem(int64_t bq, int64_t bkv, int64_t warps, int64_t d) {
    return 4 * (bq * d + bkv * (d + 1) + bkv * d + warps * bkv);
}

static int64_t mma_smem(int64_t bm, int64_t bn, int64_t stages, int64_t d, int esize) {
    return (bm + 2 * stages * bn) * d * esize;
}

/* The wgmma kernel's Q tile, its K and V rings, their barriers (one for Q, four a stage) and the slack that
 * aligns them to 1024 bytes. */
static int64_t wgmma_smem(int64_t bm, int64_t bn, int64_t stages, int64_t d) {
    return (bm + 2 * stages * bn) * d * 2 + 8 * (1 + 4 * stages) + 1024;
}

static bool prefill_legal(const double *v, void *user) {
    const prefill_limits *l = user;
    const int64_t bq = (int64_t)v[l->bq], bkv = (int64_t)v[l->bkv], warps = (int64_t)v[l->warps],
                  stages = (int64_t)v[l->stages];
    if (l->pingpong >= 0 && v[l->pingpong] != 0 && (v[l->kernel] != KERNEL_WGMMA || bq != 128)) return false;
    if (v[l->kernel] == KERNEL_SIMPLE) {
        const int64_t rows_per_warp = (bq + warps - 1) / warps, dims_per_lane = (l->d + 31) / 32;
        return stages == 1 && bkv <= 64 && rows_per_warp * dims_per_lane <= 32 &&
               simple_smem(bq, bkv, warps, l->d) <= l->smem;
    }
    if (v[l->kernel] == KERNEL_WGMMA)
        return (bq == 64 || bq == 128) && (bkv == 64 || bkv == 128) && warps == bq / 16 && stages >= 2 &&
               l->sq % bq == 0 && l->skv % bkv == 0 && wgmma_smem(bq, bkv, stages, l->d) <= l->smem;
    if (bq % (16 * warps) != 0 || bq / (16 * warps) > 2 || l->sq % bq != 0 || l->skv % bkv != 0) return false;
    const int64_t mt = bq / (16 * warps);
    return mt * (l->d / 4 + l->d / 2 + bkv / 2) <= MAX_MMA_REGS && mma_smem(bq, bkv, stages, l->d, l->esize) <= l->smem;
}

static bool mma_eligible(const tess_task *t, const attention_dims *d, const tess_device *dev) {
    return dev->cc_major >= 8 && t->dtype != TESS_F32 && (d->D == 64 || d->D == 128) && d->Sq % 16 == 0 &&
           d->Skv % 16 == 0;
}

/* TMA loads 64-row multiples of Q, K and V by int32 row coordinates. */
static bool wgmma_eligible(const tess_task *t, const attention_dims *d, const tess_device *dev) {
    return mma_eligible(t, d, dev) && dev->cc_major == 9 && d->Sq % 64 == 0 && d->Skv % 64 == 0 &&
           d->B * d->H * d->Sq < (1LL << 31) && d->B * d->Hkv * d->Skv < (1LL << 31);
}

/* The largest of values (ascending) that divides n, else the first. */
static int largest_divisor(const double *values, int n, int64_t extent) {
    int best = 0;
    for (int i = 0; i < n; i++)
        if (extent % (int64_t)values[i] == 0) best = i;
    return best;
}

tess_status attention_cuda_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out) {
    const attention_dims d = attention_dims_of(t);
    const bool mma = mma_eligible(t, &d, dev), wgmma = wgmma_eligible(t, &d, dev);
    const int nkernels = wgmma ? 3 : mma ? 2 : 1;
    const double bqs[] = {16, 32, 64, 128}, bkvs[] = {16, 32, 64, 128}, warps[] = {1, 2, 4, 8}, stages[] = {1, 2, 3},
                 off_on[] = {0, 1};
    prefill_limits l = {.sq = d.Sq, .skv = d.Skv, .d = d.D, .esize = (int)tess_dtype_size(t->dtype),
                        .smem = device_smem(dev)};
    /* wgmma: the largest query tile dividing Sq (128 rows: two consumers, taking turns), 128 keys a tile if
     * they divide Skv, double-buffered; mma: the same query tile on 8 warps, 64 keys a tile, double-buffered;
     * simple: 32 rows on 4 warps (8 above D=128), tiles of 32 keys */
    const int dbq = mma ? largest_divisor(bqs, 4, d.Sq) : 1,
              dbkv = wgmma ? largest_divisor(bkvs, 4, d.Skv) : mma ? largest_divisor(bkvs, 3, d.Skv) : 1;
    const int dwarps = mma ? dbq : d.D > 128 ? 3 : 2;
    tess_space *s = tess_space_create();
    if (!s) return tess_error(TESS_ERR_NOMEM, "%s cuda space", op->name);
    tess_status st = tess_space_add_labels(s, "kernel", nkernels, kernel_labels, nkernels - 1);
    if (!st) st = tess_space_add(s, "block_q", 4, bqs, dbq);
    if (!st) st = tess_space_add(s, "block_kv", 4, bkvs, dbkv);
    if (!st) st = tess_space_add(s, "warps", 4, warps, dwarps);
    if (!st) st = tess_space_add(s, "stages", 3, stages, mma ? 1 : 0);
    if (!st && wgmma) st = tess_space_add(s, "pingpong", 2, off_on, bqs[dbq] == 128);
    if (!st) {
        l.kernel = tess_space_param_index(s, "kernel");
        l.bq = tess_space_param_index(s, "block_q");
        l.bkv = tess_space_param_index(s, "block_kv");
        l.warps = tess_space_param_index(s, "warps");
        l.stages = tess_space_param_index(s, "stages");
        l.pingpong = tess_space_param_index(s, "pingpong");
        st = tess_space_add_constraint_copy(s, prefill_legal, &l, sizeof l,
                                            "simple: stages 1, block_kv <= 64, 32 outputs a lane; mma: block_q = "
                                            "16 warps x 1 or 2 tiles, dividing Sq, block_kv dividing Skv; "
                                            "wgmma: block_q 64 or 128 on block_q/16 warps, block_kv 64 or 128, "
                                            "stages >= 2, pingpong only with block_q 128; registers and shared "
                                            "memory within the device's");
    }
    if (st) {
        tess_space_destroy(s);
        return st;
    }
    *out = s;
    return TESS_OK;
}

/* The head of a CUDA source: the task, its config, the launches, the macros. */
static tess_status print_head(tess_strbuf *b, const tess_task *t, const tess_device *dev, const tess_space *s,
                              const tess_config *c, const attention_dims *d) {
    char config[512], key[TESS_KEY_MAX];
    tess_status st = tess_config_format(s, c, config, sizeof config);
    if (!st) st = tess_task_key(t, key, sizeof key);
    if (st) return st;
    tess_strbuf_printf(b, "// %s for %s, generated by tessera.\n// config: %s\n", key,
                       dev->arch[0] ? dev->arch : "cuda", config);
    attention_print_defines(t, d, b);
    return TESS_OK;
}

static tess_status finish(tess_strbuf *b, const char *const *templates, int n, tess_kernel_source *out) {
    for (int i = 0; i < n; i++) {
        tess_strbuf_puts(b, "\n");
        tess_strbuf_puts(b, templates[i]);
    }
    tess_status st = tess_strbuf_finish(b, &out->code);
    if (!st) snprintf(out->options, sizeof out->options, "--minimal");
    return st;
}

/* The TMA descriptors of q, k and v (buffers 0, 1, 2): rows of D elements, boxes of 64 columns by a tile's
 * rows, swizzled in 128-byte rows. */
static void wgmma_tensor_maps(const tess_task *t, const attention_dims *d, int bq, int bkv, tess_kernel_source *out) {
    const int64_t rows[3] = {d->B * d->H * d->Sq, d->B * d->Hkv * d->Skv, d->B * d->Hkv * d->Skv};
    const int box[3] = {bq, bkv, bkv};
    for (int i = 0; i < 3; i++) {
        tess_tensor_map *m = &out->tensor_map[i];
        memset(m, 0, sizeof *m);
        m->buffer = i;
        m->dtype = t->dtype;
        m->rank = 2;
        m->dims[0] = (uint64_t)d->D;
        m->dims[1] = (uint64_t)rows[i];
        m->strides[0] = (uint64_t)d->D * 2;
        m->box[0] = 64;
        m->box[1] = (uint32_t)box[i];
        m->swizzle = 128;
    }
    out->ntensor_maps = 3;
}

tess_status attention_cuda_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                                const tess_config *c, tess_kernel_source *out) {
    const attention_dims d = attention_dims_of(t);
    const int kernel = (int)tess_config_get(s, c, "kernel"), bq = (int)tess_config_get(s, c, "block_q"),
              bkv = (int)tess_config_get(s, c, "block_kv"), warps = (int)tess_config_get(s, c, "warps"),
              stages = (int)tess_config_get(s, c, "stages"), pingpong = (int)tess_config_get_or(s, c, "pingpong", 0);
    if (kernel < KERNEL_SIMPLE || kernel > KERNEL_WGMMA || bq < 1 || bkv < 1 || warps < 1 || stages < 1)
        return tess_error(TESS_ERR_ARG, "%s cuda: the space is not an attention cuda space", op->name);
    const bool mma = kernel == KERNEL_MMA, wgmma = kernel == KERNEL_WGMMA;
    if ((mma || wgmma) && (d.Sq % bq || d.Skv % bkv || bq % (16 * warps)))
        return tess_error(TESS_ERR_ARG, "%s cuda: block_q=%d (of %d warps) and block_kv=%d must divide Sq=%lld and "
                          "Skv=%lld", op->name, bq, warps, bkv, (long long)d.Sq, (long long)d.Skv);
    if (wgmma && (!wgmma_eligible(t, &d, dev) || (bq != 64 && bq != 128) || (bkv != 64 && bkv != 128) || stages < 2))
        return tess_error(TESS_ERR_ARG, "%s cuda: kernel wgmma needs sm_90, bf16 or f16, D 64 or 128, block_q and "
                          "block_kv of 64 or 128 and 2 stages or more", op->name);
    const int esize = (int)tess_dtype_size(t->dtype);
    const unsigned smem = (unsigned)(wgmma ? wgmma_smem(bq, bkv, stages, d.D)
                                     : mma ? mma_smem(bq, bkv, stages, d.D, esize)
                                           : simple_smem(bq, bkv, warps, d.D));
    tess_strbuf b = {0};
    tess_status st = print_head(&b, t, dev, s, c, &d);
    if (st) {
        tess_strbuf_free(&b);
        return st;
    }
    tess_strbuf_printf(&b, "#define BQ %d\n#define BM %d\n#define BKV %d\n#define BN %d\n#define WARPS %d\n"
                       "#define STAGES %d\n", bq, bq, bkv, bkv, warps, stages);
    if (wgmma) {
        /* S = Q K^T over block_kv keys from shared memory; O += P V over D columns, P from registers */
        const tess_wgmma_shape qk = {.name = "wgmma_qk", .n = bkv, .in = t->dtype},
                               pv = {.name = "wgmma_pv", .n = (int)d.D, .in = t->dtype, .a_registers = true,
                                     .b_mn_major = true};
        tess_strbuf_printf(&b, "#define CONSUMERS %d\n#define PINGPONG %d\n\n", bq / 64, pingpong && bq == 128);
        tess_wgmma_emit(&b, &qk);
        tess_wgmma_emit(&b, &pv);
    }
    const char *const templates[] = {tess_src_core_templates_storage_cuh, tess_src_attention_templates_storage_cuh,
                                     wgmma ? tess_src_core_templates_hopper_cuh
                                     : mma ? tess_src_attention_templates_prefill_mma_cu
                                           : tess_src_attention_templates_prefill_simple_cu,
                                     tess_src_attention_templates_prefill_wgmma_cu};
    if ((st = finish(&b, templates, wgmma ? 4 : 3, out))) return st;
    const unsigned qtiles = (unsigned)((d.Sq + bq - 1) / bq);
    static const char *const entries[] = {"attention_simple", "attention_mma", "attention_wgmma"};
    st = tess_kernel_source_add_launch(out, entries[kernel], qtiles, (unsigned)(32 * warps + (wgmma ? 128 : 0)),
                                       smem);
    if (st) return st;
    out->launch[0].grid[1] = (unsigned)d.H;
    out->launch[0].grid[2] = (unsigned)d.B;
    if (wgmma) {
        snprintf(out->min_arch, sizeof out->min_arch, "sm_90a");
        wgmma_tensor_maps(t, &d, bq, bkv, out);
    }
    return TESS_OK;
}

/* ---- decode ------------------------------------------------------------------------ */

typedef struct decode_limits {
    int splits, warps, lpk, unroll, heads;   /* parameter indices */
    int64_t d, group;
    int esize;
} decode_limits;

/* Elements a lane holds: its share of D, a whole number of vectors. */
static int64_t lane_elements(int64_t d, int64_t lpk, int64_t vec) {
    const int64_t share = (d + lpk - 1) / lpk;
    return (share + vec - 1) / vec * vec;
}

/* The widest load (at most 16 bytes) whose elements divide D. */
static int64_t vector_of(int64_t d, int esize) {
    int64_t vec = 16 / esize;
    while (vec > 1 && d % vec) vec /= 2;
    return vec;
}

static bool decode_legal(const double *v, void *user) {
    const decode_limits *l = user;
    const int64_t lpk = (int64_t)v[l->lpk], warps = (int64_t)v[l->warps], unroll = (int64_t)v[l->unroll],
                  heads = (int64_t)v[l->heads];
    const int64_t epl = lane_elements(l->d, lpk, vector_of(l->d, l->esize));
    /* registers: q and acc per head, k and v per unrolled key; static shared memory of the merge */
    return l->group % heads == 0 && heads * 2 * epl + unroll * 2 * epl <= 160 &&
           4 * warps * heads * (lpk * epl + 2) <= 48 * 1024;
}

tess_status decode_cuda_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out) {
    const attention_dims d = attention_dims_of(t);
    decode_limits l = {.d = d.D, .group = d.H / d.Hkv, .esize = (int)tess_dtype_size(t->dtype)};
    const double warps[] = {2, 4, 8}, lpks[] = {4, 8, 16, 32}, unrolls[] = {1, 2, 4, 8};
    /* enough blocks for four per SM (two per SM left a 2 GiB cache at 0.7 of the speed of four on
     * an H200), each split at least 256 keys long */
    int64_t splits = 1;
    const int64_t units = dev->units > 0 ? dev->units : 1;
    while (splits < ATTENTION_MAX_SPLITS && d.B * d.Hkv * splits < 4 * units && d.Skv / (2 * splits) >= 256)
        splits *= 2;
    /* the lanes that hold 16 bytes each, else 32 */
    const int64_t per16 = 16 / l.esize;
    int dlpk = 3;
    for (int i = 0; i < 4; i++)
        if ((int64_t)lpks[i] * per16 == d.D) dlpk = i;
    /* heads per block: the group, halved until the default fits */
    double heads[8];
    int nheads = 0, dheads = 0;
    for (int64_t g = 1; g <= l.group && nheads < 8; g *= 2)
        if (l.group % g == 0) heads[nheads++] = (double)g;
    if (heads[nheads - 1] != (double)l.group && nheads < 8) heads[nheads++] = (double)l.group;
    decode_limits probe = l;
    probe.splits = 0, probe.warps = 1, probe.lpk = 2, probe.unroll = 3, probe.heads = 4;
    for (dheads = nheads - 1; dheads > 0; dheads--) {
        const double dflt[] = {(double)splits, warps[1], lpks[dlpk], unrolls[1], heads[dheads]};
        if (decode_legal(dflt, &probe)) break;
    }
    tess_space *s = tess_space_create();
    if (!s) return tess_error(TESS_ERR_NOMEM, "%s cuda space", op->name);
    tess_status st = tess_space_add_pow2(s, "splits", 1, ATTENTION_MAX_SPLITS, (long)splits);
    if (!st) st = tess_space_add(s, "warps", 3, warps, 1);
    if (!st) st = tess_space_add(s, "lanes_per_key", 4, lpks, dlpk);
    if (!st) st = tess_space_add(s, "unroll", 4, unrolls, 1);
    if (!st) st = tess_space_add(s, "heads_per_block", nheads, heads, dheads);
    if (!st) {
        l.splits = tess_space_param_index(s, "splits");
        l.warps = tess_space_param_index(s, "warps");
        l.lpk = tess_space_param_index(s, "lanes_per_key");
        l.unroll = tess_space_param_index(s, "unroll");
        l.heads = tess_space_param_index(s, "heads_per_block");
        st = tess_space_add_constraint_copy(s, decode_legal, &l, sizeof l,
                                            "registers (q, output and unrolled keys) and the merge's 48 KB of "
                                            "shared memory");
    }
    if (st) {
        tess_space_destroy(s);
        return st;
    }
    *out = s;
    return TESS_OK;
}

tess_status decode_cuda_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                             const tess_config *c, tess_kernel_source *out) {
    const attention_dims d = attention_dims_of(t);
    const int splits = (int)tess_config_get(s, c, "splits"), warps = (int)tess_config_get(s, c, "warps"),
              lpk = (int)tess_config_get(s, c, "lanes_per_key"), unroll = (int)tess_config_get(s, c, "unroll"),
              heads = (int)tess_config_get(s, c, "heads_per_block");
    if (splits < 1 || warps < 1 || lpk < 1 || unroll < 1 || heads < 1 || (d.H / d.Hkv) % heads)
        return tess_error(TESS_ERR_ARG, "%s cuda: the space is not an attention_decode cuda space", op->name);
    const int esize = (int)tess_dtype_size(t->dtype);
    const int64_t vec = vector_of(d.D, esize), epl = lane_elements(d.D, lpk, vec);
    const int combine_threads = (int)((d.D + 31) / 32 * 32);
    tess_strbuf b = {0};
    tess_status st = print_head(&b, t, dev, s, c, &d);
    if (st) {
        tess_strbuf_free(&b);
        return st;
    }
    tess_strbuf_printf(&b, "#define SPLITS %d\n#define MAX_SPLITS %d\n#define WARPS %d\n#define LPK %d\n"
                       "#define EPL %lld\n#define VEC %lld\n#define UNROLL %d\n#define GB %d\n#define COMBINE_THREADS %d\n",
                       splits, ATTENTION_MAX_SPLITS, warps, lpk, (long long)epl, (long long)vec, unroll, heads,
                       combine_threads);
    const char *const templates[] = {tess_src_core_templates_storage_cuh, tess_src_attention_templates_storage_cuh,
                                     tess_src_attention_templates_decode_cu};
    if ((st = finish(&b, templates, 3, out))) return st;
    st = tess_kernel_source_add_launch(out, "attention_decode_split", (unsigned)splits, (unsigned)(32 * warps), 0);
    if (!st) {
        out->launch[0].grid[1] = (unsigned)(d.H / heads);
        out->launch[0].grid[2] = (unsigned)d.B;
        st = tess_kernel_source_add_launch(out, "attention_decode_combine", (unsigned)(d.B * d.H),
                                           (unsigned)combine_threads, 0);
    }
    out->runtime_extents = UINT32_C(1) << 2;   /* Skv */
    return st ? st : tess_kernel_source_add_scalar(out, "Skv", TESS_SCALAR_I64, (double)d.Skv);
}
