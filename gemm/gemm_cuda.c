/*
 * gemm_cuda.c - CUDA code generation for gemm and conv2d: a config becomes
 * the #defines above templates/gemm_common.cuh and one path's template.
 * Tunables:
 *   path        simt (templates/gemm_simt.cu: any architecture, any dtype),
 *               mma (templates/gemm_mma.cu: sm_80 mma.sync, bf16/f16 inputs,
 *               offered when every operand is read in 16-byte chunks) or
 *               wgmma (templates/gemm_wgmma.cu: sm_90a warpgroup MMA fed by
 *               TMA, bf16/f16/e4m3 gemm with A and B K-major: layout nt, and
 *               bf16/f16 conv2d of stride 1 or 2; a persistent kernel, one block
 *               per SM; the only path of e4m3)
 *   bm, bn, bk  the block's tile of D and the slice of K staged at a time
 *               (wgmma: rows of 64 or 128 bytes, the TMA's swizzle atoms)
 *   wm, wn      warps along M and N; mma: each owns (bm/wm) x (bn/wn) of the
 *               tile; simt: a warp is 8 x 4 threads, each summing a tile of
 *               (bm/8wm) x (bn/4wn); wgmma: wm (1 or 2) consumer warpgroups
 *               of 64 rows each (bm = 64 wm), wn held at 2
 *   stages      mma, wgmma: slices in flight; simt: held at 4
 *   group_m     rows of tiles visited together (rasterization for L2 reuse)
 *   cluster     wgmma: blocks per cluster (1 or 2), taking vertically adjacent
 *               tiles whose shared B slices the TMA multicasts; others: 1
 *   tma_store   wgmma: 1 stages each tile of D in shared memory, 16 KB per
 *               consumer at a time (swizzled, no bank conflicts) for the TMA
 *               to store while the next tile starts; 0 stores from registers.
 *               Rows of D in 16-byte multiples, not for a convolution read in
 *               windows
 *   kslices     mma and wgmma: slices of K over blocks when the tiles leave
 *               multiprocessors idle, their partial sums added by
 *               templates/gemm_split.cuh (offered with the mma path; on
 *               wgmma each (tile, slice) is a unit of the persistent walk,
 *               with clusters of one, D stored from registers; a convolution in
 *               windows keeps its partials by its tiles' pixels)
 *   promote     e4m3 only (which has no mma path, so no kslices: the two share
 *               a slot): slices of K after which the tensor cores' sums are
 *               added into f32 registers and restarted (0: never). Their fp8
 *               accumulator keeps about 14 bits, too few for long sums; the
 *               registers of a second accumulator hold bn to 128
 *   ctas        (after the skinny parameters, so that neither path holds it)
 *               wgmma: persistent blocks per multiprocessor (1 or 2). Two
 *               blocks of one consumer (wm 1, bn <= 128: within 128 registers a
 *               thread) overlap one's loads and stores of D with the other's
 *               MMAs, where short sums over K (convolutions) leave the tensor
 *               cores idle between tiles; skinny: 2 caps its registers for
 *               twice the blocks per multiprocessor (gemm_skinny.c); others 1
 * and, for few rows of A, path skinny (gemm_skinny.c) with its own parameters.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "core/strbuf.h"
#include "core/wgmma_emit.h"
#include "gemm.h"

extern const char tess_src_gemm_templates_gemm_common_cuh[];
extern const char tess_src_gemm_templates_gemm_simt_cu[];
extern const char tess_src_gemm_templates_gemm_mma_cu[];
extern const char tess_src_gemm_templates_gemm_wgmma_cu[];
extern const char tess_src_gemm_templates_gemm_sm80_cuh[];
extern const char tess_src_gemm_templates_gemm_split_cuh[];
extern const char tess_src_core_templates_hopper_cuh[];

/* kslices (with the mma path) and promote (e4m3, which has no mma path) share the slot after tma_store */
enum { P_PATH, P_BM, P_BN, P_BK, P_WM, P_WN, P_STAGES, P_GROUP, P_CLUSTER, P_TMA_STORE, P_KSLICES, P_PROMOTE = P_KSLICES };
enum { PATH_SIMT, PATH_MMA, PATH_WGMMA };
static const char *const path_names[] = {"simt", "mma", "wgmma"};

/* What the constraint needs beyond the values. */
typedef struct cuda_limits {
    double smem_optin;   /* bytes of shared memory a block may opt into */
    int acc_bytes;       /* 4 or 8 */
    int in_bytes;        /* 1 (e4m3), 2, 4 or 8 */
    int first_path;      /* the path of the space's first label */
    double window_channels;   /* a convolution read in windows (conv_window): its channels, which bk divides; else 0 */
    int out_bytes;            /* of an element of D */
    bool tma_store;           /* whether D can be stored by the TMA (rows of 16-byte multiples, not in windows) */
    bool a_trans, b_trans;
    double skinny;       /* the path's value of skinny, or -1: tess_gemm_skinny_add constrains it */
    bool kslices;        /* whether the space has P_KSLICES */
    int ctas;            /* the index of ctas in the space (ctas_legal's copy only) */
    double smem_per_sm;  /* bytes of shared memory of a multiprocessor */
    double m, n, k, units;
} cuda_limits;

/* BK slices of K per block for kslices slices (its ceiling share); 0 when a slice would be empty. */
static int64_t slices_per(int64_t k, int bk, int kslices) {
    const int64_t total = (k + bk - 1) / bk, per = (total + kslices - 1) / kslices;
    return (total + per - 1) / per == kslices ? per : 0;
}

/* mma, and wgmma without clusters or the TMA's stores: a K split only where the tiles leave multiprocessors idle,
 * every slice used, the partials within bounds (a convolution in windows keeps them for its tiles' pixels: at
 * most twice its rows). */
static bool split_legal(const double *v, const cuda_limits *l, int path, double smem) {
    const double kslices = l->kslices ? v[P_KSLICES] : 1;
    if (kslices == 1) return true;
    const double tiles = ceil(l->m / v[P_BM]) * ceil(l->n / v[P_BN]);
    const bool wgmma_split = path == PATH_WGMMA && v[P_CLUSTER] == 1 && v[P_TMA_STORE] == 0;
    const double rows = l->window_channels > 0 ? 2 * l->m : l->m;
    return (path == PATH_MMA || wgmma_split) && tiles < l->units &&
           slices_per((int64_t)l->k, (int)v[P_BK], (int)kslices) > 0 &&
           4 * kslices * rows * l->n <= TESS_GEMM_SPLIT_WORKSPACE_MAX && smem + 64 <= l->smem_optin;   /* 64: its static counter */
}

static double mma_smem(const double *v, const cuda_limits *l) {
    const double bm = v[P_BM], bn = v[P_BN], bk = v[P_BK];
    const double a = l->a_trans ? bk * (bm + 8) : bm * (bk + 8), b = l->b_trans ? bn * (bk + 8) : bk * (bn + 8);
    return v[P_STAGES] * (a + b) * 2;
}

/* The wgmma path's stages, each consumer's 16 KB through which its rows of D go to the TMA's store, the
 * barriers and the slack that aligns them to 1024 bytes. */
static double wgmma_smem(const double *v, const cuda_limits *l) {
    return v[P_STAGES] * (v[P_BM] + v[P_BN]) * v[P_BK] * l->in_bytes + v[P_TMA_STORE] * v[P_WM] * 16384 +
           16 * v[P_STAGES] + 1024;
}

static bool legal(const double *v, void *user) {
    const cuda_limits *l = user;
    const double bm = v[P_BM], bn = v[P_BN], bk = v[P_BK];
    if (v[P_PATH] == l->skinny) return true;
    const int path = (int)v[P_PATH] + l->first_path;
    if (!split_legal(v, l, path, path == PATH_MMA ? mma_smem(v, l) : path == PATH_WGMMA ? wgmma_smem(v, l) : 0))
        return false;
    if (path != PATH_WGMMA && (v[P_CLUSTER] != 1 || v[P_TMA_STORE] != 0)) return false;
    if (v[P_TMA_STORE] != 0 && !l->tma_store) return false;
    if (l->in_bytes == 1 && v[P_PROMOTE] > 0 && bn > 128) return false;
    if (path == PATH_WGMMA && l->window_channels > 0 && fmod(l->window_channels, bk) != 0) return false;
    if (path == PATH_SIMT) {
        const double tm = bm / (8 * v[P_WM]), tn = bn / (4 * v[P_WN]);
        return v[P_STAGES] == 4 && tm >= 1 && tn >= 1 && tm * tn * l->acc_bytes <= 512 && bk <= 32 &&
               (bm + bn + 2) * bk * l->acc_bytes <= 48 * 1024;
    }
    if (path == PATH_WGMMA)
        /* at most two consumers: with four, 640 threads leave ptxas 96 registers, too few for 128 accumulators */
        return bm == 64 * v[P_WM] && v[P_WM] <= 2 && v[P_WN] == 2 && bn >= 64 &&
               (bk * l->in_bytes == 64 || bk * l->in_bytes == 128) && wgmma_smem(v, l) <= l->smem_optin;
    const double wtm = bm / v[P_WM], wtn = bn / v[P_WN];
    return bk >= 32 && wtm >= 16 && wtn >= 16 && wtm * wtn <= 32 * 128 && mma_smem(v, l) <= l->smem_optin;
}

/* ctas 2: on skinny, or on wgmma with one consumer of bn <= 128 and both blocks' shared memory within a
 * multiprocessor's. */
static bool ctas_legal(const double *v, void *user) {
    const cuda_limits *l = user;
    const double ctas = v[l->ctas];
    if (ctas == 1 || v[P_PATH] == l->skinny) return true;
    return (int)v[P_PATH] + l->first_path == PATH_WGMMA && v[P_WM] == 1 && v[P_BN] <= 128 &&
           ctas * (wgmma_smem(v, l) + 1024) <= l->smem_per_sm;
}

/* Whether every operand can be read in 16-byte chunks of 8 elements. */
static bool chunks_aligned(const tess_gemm_desc *d) {
    const bool a = d->conv ? d->channels % 8 == 0 : (d->a_trans ? d->m : d->k) % 8 == 0;
    const bool b = (d->b_trans ? d->k : d->n) % 8 == 0;
    return a && b;
}

/* e4m3 runs on wgmma only: its space offers no other path. */
static int first_path(const tess_gemm_desc *d) { return d->in == TESS_E4M3 ? PATH_WGMMA : PATH_SIMT; }

static bool has_mma(const tess_gemm_desc *d, const tess_device *dev) {
    return (d->in == TESS_BF16 || d->in == TESS_F16) && dev->cc_major >= 8 && chunks_aligned(d);
}

/* wgmma reads a 1x1 convolution of stride 1 without padding as the GEMM of x (M x C) and w; any other in
 * windows of x. */
static bool conv_window(const tess_gemm_desc *d) {
    return d->conv && !(d->filter == 1 && d->pad == 0 && d->stride == 1);
}

/* TMA loads rows of K elements of A and B: both K-major, row strides of 16 bytes' multiples; a convolution
 * of stride 1 or 2 (the TMA's boxes step over the pixels between), in windows with slices of 32 or 64
 * channels of one tap. */
static bool has_wgmma(const tess_gemm_desc *d, const tess_device *dev) {
    const bool inputs = d->in == TESS_E4M3 ? d->k % 16 == 0 : has_mma(d, dev) && d->k % 8 == 0;
    return inputs && dev->cc_major == 9 && (!d->conv || d->stride <= 2) && (!conv_window(d) || d->channels % 32 == 0) &&
           !d->a_trans && d->b_trans && d->m < (1LL << 31) && d->n < (1LL << 31);
}

/* A convolution's tile of bm output pixels: tile_n images of tile_h rows of tile_w (powers of two). Of these, the
 * fewest waves of tiles over the device's `units` multiprocessors (with bn-wide tiles of D), then the fewest
 * pixels computed in all, the fewest images and the widest (longer runs of x per box row). Images smaller than
 * the tile (7 x 7 in tiles of 128) share one instead of leaving most of its rows empty. */
typedef struct conv_tile {
    int w, h, n;
} conv_tile;

static conv_tile conv_tile_of(const tess_gemm_desc *d, int bm, int bn, double units) {
    conv_tile best = {1, bm, 1};
    double best_waves = INFINITY, best_pixels = INFINITY;
    const double tiles_n = ceil((double)d->n / bn);
    for (int n = 1; n <= bm && n < 2 * d->batch; n *= 2)
        /* a box spans stride times the tile's pixels, 256 at most */
        for (int w = 1; w <= bm / n && w * d->stride <= 256; w *= 2) {
            const int h = bm / n / w;
            const double images = ceil((double)d->batch / n), rows = ceil((double)d->out_h / h),
                         cols = ceil((double)d->out_w / w);
            const double waves = ceil(images * rows * cols * tiles_n / units), pixels = images * n * rows * h * cols * w;
            if (h * d->stride > 256) continue;
            if (waves < best_waves || (waves == best_waves && (pixels < best_pixels || (pixels == best_pixels && n == best.n)))) {
                best = (conv_tile){w, h, n};
                best_waves = waves;
                best_pixels = pixels;
            }
        }
    return best;
}

tess_status tess_gemm_cuda_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out) {
    tess_gemm_desc d;
    tess_status st = tess_gemm_describe(op, t, &d);
    if (st) return st;
    const bool mma = has_mma(&d, dev), wgmma = has_wgmma(&d, dev), skinny = tess_gemm_skinny_offered(&d, dev);
    const int first = first_path(&d), npaths = (wgmma ? 3 : mma ? 2 : 1) - first;
    const bool fp8 = d.in == TESS_E4M3;
    if (fp8 && !wgmma)
        return tess_error(TESS_ERR_UNAVAILABLE, "%s cuda: e4m3 inputs need sm_90 (wgmma), layout nt and K a multiple of 16",
                          op->name);
    const char *labels[4] = {0};
    for (int i = 0; i < npaths; i++) labels[i] = path_names[first + i];
    labels[npaths] = "skinny";
    const cuda_limits limits = {.smem_optin = dev->smem_per_block_optin > 0 ? (double)dev->smem_per_block_optin : 49152,
                                .acc_bytes = (int)tess_dtype_size(d.acc), .in_bytes = (int)tess_dtype_size(d.in),
                                .first_path = first, .window_channels = conv_window(&d) ? (double)d.channels : 0,
                                .out_bytes = (int)tess_dtype_size(d.out),
                                .tma_store = !conv_window(&d) && d.n * (int64_t)tess_dtype_size(d.out) % 16 == 0,
                                .a_trans = d.a_trans, .b_trans = d.b_trans, .skinny = skinny ? npaths : -1,
                                .kslices = mma, .ctas = -1,
                                .smem_per_sm = dev->smem_per_sm > 0 ? (double)dev->smem_per_sm : 0,
                                .m = (double)d.m, .n = (double)d.n, .k = (double)d.k,
                                .units = dev->units > 0 ? dev->units : 1};
    /* slices of K in elements: e4m3's twice as many for the same bytes */
    const double tiles[] = {16, 32, 64, 128, 256}, warps[] = {1, 2, 4},
                 slices[] = {8 * (fp8 ? 2 : 1), 16 * (fp8 ? 2 : 1), 32 * (fp8 ? 2 : 1), 64 * (fp8 ? 2 : 1)},
                 stages[] = {2, 3, 4, 5}, groups[] = {1, 4, 8, 16}, clusters[] = {1, 2}, promotes[] = {0, 1, 2, 4},
                 flags[] = {0, 1}, kslices[] = {1, 2, 4, 8}, ctas[] = {1, 2};
    tess_space *s = tess_space_create();
    if (!s) return tess_error(TESS_ERR_NOMEM, "%s cuda space", op->name);
    /* The default: the last path offered (wgmma on sm_90, convolutions included), skinny for few rows. A
     * convolution on wgmma takes tiles of bn 64 for 64 output channels, as its best fixed configs on an
     * H200 did (data/bench/gemm-h200-run4); bk stays at 32, which every path pinned on its own accepts. */
    const int dflt_path = skinny && tess_gemm_skinny_default(&d) ? npaths : npaths - 1;
    const bool conv_wgmma = d.conv && wgmma;
    st = tess_space_add_labels(s, "path", npaths + skinny, labels, dflt_path);
    if (!st) st = tess_space_add(s, "bm", 5, tiles, mma || fp8 ? 3 : 2);
    if (!st) st = tess_space_add(s, "bn", 5, tiles, conv_wgmma && d.n <= 64 ? 2 : mma || fp8 ? 3 : 2);
    if (!st) st = tess_space_add(s, "bk", 4, slices, mma || fp8 ? 2 : 1);
    if (!st) st = tess_space_add(s, "wm", 3, warps, 1);
    if (!st) st = tess_space_add(s, "wn", 3, warps, 1);
    if (!st) st = tess_space_add(s, "stages", 4, stages, 2);
    if (!st) st = tess_space_add(s, "group_m", 4, groups, 2);
    if (!st) st = tess_space_add(s, "cluster", 2, clusters, 0);
    if (!st) st = tess_space_set_optional(s, "cluster", 1);   /* configs recorded before it stay readable */
    if (!st) st = tess_space_add(s, "tma_store", 2, flags, 0);
    if (!st) st = tess_space_set_optional(s, "tma_store", 0);
    if (!st && mma) st = tess_space_add(s, "kslices", 4, kslices, 0);
    if (!st && mma) st = tess_space_set_optional(s, "kslices", 1);
    if (!st && fp8) st = tess_space_add(s, "promote", 4, promotes, 1);
    if (!st)
        st = tess_space_add_constraint_copy(s, legal, &limits, sizeof limits,
                                            "simt: thread tiles of 1 to 128 f32 or 64 f64 sums, bk <= "
                                            "32, stages 4; mma: warp tiles of 16 to 4096, bk >= 32; wgmma: bm = 64 "
                                            "wm <= 128, wn 2, bn >= 64, rows of bk of 64 or 128 bytes; cluster 1 but on wgmma; "
                                            "promote: bn <= 128; a convolution's bk divides its channels; tma_store: wgmma, rows of D of 16-byte "
                                            "multiples, not in windows; shared memory within the device's; "
                                            "kslices > 1: mma, or wgmma of cluster 1 without tma_store, fewer tiles than "
                                            "multiprocessors, no slice empty");
    if (!st && skinny) st = tess_gemm_skinny_add(s, &d, dev, npaths);
    if (!st && (wgmma || skinny)) {
        cuda_limits with_ctas = limits;
        with_ctas.ctas = tess_space_nparams(s);
        st = tess_space_add(s, "ctas", 2, ctas, 0);
        if (!st) st = tess_space_set_optional(s, "ctas", 1);
        if (!st)
            st = tess_space_add_constraint_copy(s, ctas_legal, &with_ctas, sizeof with_ctas,
                                                "ctas 2: skinny, or wgmma of wm 1 and bn <= 128 with both blocks' "
                                                "shared memory within a multiprocessor's");
    }
    if (st) {
        tess_space_destroy(s);
        return st;
    }
    *out = s;
    return TESS_OK;
}

static const char *dtype_macro(tess_dtype dt) {
    switch (dt) {
    case TESS_BF16: return "BF16";
    case TESS_F16: return "F16";
    case TESS_F64: return "F64";
    case TESS_E4M3: return "E4M3";
    default: return "F32";
    }
}

void tess_gemm_cuda_task_macros(tess_strbuf *b, const tess_gemm_desc *d) {
    tess_strbuf_printf(b,
                       "#define IN_%s 1\n#define OUT_%s 1\n#define ACC_T %s\n"
                       "#define GM %lldLL\n#define GN %lldLL\n#define GK %lldLL\n#define A_TRANS %d\n#define B_TRANS %d\n"
                       "#define ALPHA %.17g\n#define BETA %.17g\n#define HAS_C %d\n"
                       "#define EPI_BIAS %d\n#define EPI_GELU %d\n#define EPI_SILU %d\n#define CONV %d\n",
                       dtype_macro(d->in), dtype_macro(d->out), d->acc == TESS_F64 ? "double" : "float", (long long)d->m,
                       (long long)d->n, (long long)d->k, d->a_trans, d->b_trans, d->alpha, d->beta, d->buf_c >= 0,
                       d->epilogue == TESS_EPI_BIAS, d->epilogue == TESS_EPI_GELU, d->epilogue == TESS_EPI_SILU, d->conv);
}

/* The kernel's parameter list (the buffers in order) and the epilogue's pointers. */
void tess_gemm_cuda_params(tess_strbuf *b, const tess_gemm_desc *d) {
    tess_strbuf_puts(b, "#define PARAMS const in_t *__restrict__ A, const in_t *__restrict__ B");
    if (d->buf_c >= 0) tess_strbuf_puts(b, ", const out_t *__restrict__ Cm");
    if (d->buf_bias >= 0) tess_strbuf_puts(b, ", const out_t *__restrict__ bias");
    tess_strbuf_printf(b, ", out_t *__restrict__ D\n#define C_PTR %s\n#define BIAS_PTR %s\n",
                       d->buf_c >= 0 ? "Cm" : "((const out_t *)0)", d->buf_bias >= 0 ? "bias" : "((const out_t *)0)");
}

/* One m64nBNk16 (k32 for e4m3) warpgroup MMA on BN/2 accumulators, K-major operands from shared memory
 * (the asm's operand list depends on BN), and the K it covers. */
static void wgmma_function(tess_strbuf *b, int bn, tess_dtype in) {
    tess_strbuf_printf(b, "#define K_STEP %d\n", tess_wgmma_k(in));
    tess_wgmma_emit(b, &(tess_wgmma_shape){.name = "wgmma_step", .n = bn, .in = in});
}

/* The TMA descriptors of A (M rows of K) and B (N rows of K): boxes of bk x rows, swizzled by rows of bk;
 * a block of a cluster loads 1/cluster of B's rows. */
static void wgmma_tensor_maps(const tess_gemm_desc *d, double tile_slots, int bm, int bn, int bk, int cluster,
                              tess_kernel_source *out) {
    const int64_t rows[2] = {d->m, d->n}, box[2] = {bm, bn / cluster};
    const int buffer[2] = {d->buf_a, d->buf_b};
    for (int i = 0; i < 2; i++) {
        tess_tensor_map *m = &out->tensor_map[i];
        memset(m, 0, sizeof *m);
        m->buffer = buffer[i];
        m->dtype = d->in;
        m->rank = 2;
        m->dims[0] = (uint64_t)d->k;
        m->dims[1] = (uint64_t)rows[i];
        m->strides[0] = (uint64_t)d->k * tess_dtype_size(d->in);
        m->box[0] = (uint32_t)bk;
        m->box[1] = (uint32_t)box[i];
        m->swizzle = bk * (int)tess_dtype_size(d->in);
    }
    out->ntensor_maps = 2;
    if (!conv_window(d)) return;
    /* x as channels x columns x rows x images, a box of bk channels of tile_n images of tile_h x tile_w pixels
     * (stride apart: the box spans stride times as many, the copy stepping over those between) */
    tess_tensor_map *m = &out->tensor_map[0];
    const int64_t e = (int64_t)tess_dtype_size(d->in);
    const conv_tile tile = conv_tile_of(d, bm, bn, tile_slots);
    m->rank = 4;
    const uint64_t dims[4] = {(uint64_t)d->channels, (uint64_t)d->width, (uint64_t)d->height, (uint64_t)d->batch};
    memcpy(m->dims, dims, sizeof dims);
    m->strides[0] = (uint64_t)(d->channels * e);
    m->strides[1] = (uint64_t)(d->width * d->channels * e);
    m->strides[2] = (uint64_t)(d->height * d->width * d->channels * e);
    m->box[1] = (uint32_t)(tile.w * d->stride);
    m->box[2] = (uint32_t)(tile.h * d->stride);
    m->box[3] = (uint32_t)tile.n;
    m->step[1] = m->step[2] = (uint32_t)d->stride;
}

/* The TMA descriptor of D (M rows of N) for the stores: boxes of 128 bytes of a row by 64 rows, swizzled. */
static void store_tensor_map(const tess_gemm_desc *d, tess_kernel_source *out) {
    tess_tensor_map *m = &out->tensor_map[out->ntensor_maps++];
    const int e = (int)tess_dtype_size(d->out);
    memset(m, 0, sizeof *m);
    m->buffer = d->buf_d;
    m->dtype = d->out;
    m->rank = 2;
    m->dims[0] = (uint64_t)d->n;
    m->dims[1] = (uint64_t)d->m;
    m->strides[0] = (uint64_t)d->n * (uint64_t)e;
    m->box[0] = (uint32_t)(128 / e);
    m->box[1] = 64;
    m->swizzle = 128;
}

tess_status tess_gemm_cuda_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                                const tess_config *c, tess_kernel_source *out) {
    tess_gemm_desc d;
    tess_status st = tess_gemm_describe(op, t, &d);
    if (st) return st;
    double v[TESS_MAX_PARAMS];
    const bool fp8 = d.in == TESS_E4M3;
    if (tess_space_nparams(s) < P_TMA_STORE + 1 || tess_space_param_index(s, "tma_store") != P_TMA_STORE ||
        (fp8 && tess_space_param_index(s, "promote") != P_PROMOTE))
        return tess_error(TESS_ERR_ARG, "%s cuda: the space is not a gemm cuda space", op->name);
    const char *label = tess_space_param_label(s, P_PATH, c->v[P_PATH]);
    if (label && strcmp(label, "skinny") == 0) return tess_gemm_skinny_emit(op, t, &d, dev, s, c, out);
    tess_space_values(s, c, v);
    const int path = (int)v[P_PATH] + first_path(&d), bm = (int)v[P_BM], bn = (int)v[P_BN], bk = (int)v[P_BK],
              cluster = (int)v[P_CLUSTER], promote = fp8 ? (int)v[P_PROMOTE] : 0, tma_store = (int)v[P_TMA_STORE];
    if (path == PATH_MMA && !has_mma(&d, dev))
        return tess_error(TESS_ERR_ARG, "%s cuda: path mma needs bf16 or f16 inputs in 16-byte chunks on sm_80 or later",
                          op->name);
    if (path == PATH_WGMMA && !has_wgmma(&d, dev))
        return tess_error(TESS_ERR_ARG,
                          "%s cuda: path wgmma needs a bf16, f16 or e4m3 gemm of layout nt or a conv2d of stride 1 or 2 on sm_90",
                          op->name);
    const int threads = path == PATH_WGMMA ? 128 * (1 + bm / 64) : 32 * (int)(v[P_WM] * v[P_WN]);
    /* a cluster's blocks share a tile of cluster * bm rows; a convolution in windows has tiles of pixels */
    const bool window = path == PATH_WGMMA && conv_window(&d);
    const int ctas = path == PATH_WGMMA && tess_space_param_index(s, "ctas") >= 0 ? (int)tess_config_get(s, c, "ctas") : 1;
    /* wgmma is persistent: at most ctas blocks per SM (clusters of `cluster` blocks), each walking its (tile, slice
     * of K) units a grid apart */
    const int64_t sms = dev->units > 0 ? dev->units : 1, slots = ctas * sms / cluster * cluster;
    const int kslices = path != PATH_SIMT && tess_space_param_index(s, "kslices") >= 0
                            ? (int)tess_config_get(s, c, "kslices") : 1;
    /* the blocks per tile's slice of K: kslices units of each tile share the slots */
    const double tile_slots = (double)slots / kslices;
    const conv_tile tile = window ? conv_tile_of(&d, bm, bn, tile_slots) : (conv_tile){0, 0, 0};
    const int64_t tiles_p = window ? (d.out_h + tile.h - 1) / tile.h : 0, tiles_q = window ? (d.out_w + tile.w - 1) / tile.w : 0;
    const int64_t tiles_i = window ? (d.batch + tile.n - 1) / tile.n : 0;
    const int64_t tiles_m = window ? (tiles_i * tiles_p * tiles_q + cluster - 1) / cluster
                                   : (d.m + (int64_t)bm * cluster - 1) / ((int64_t)bm * cluster);
    const int64_t tiles = tiles_m * ((d.n + bn - 1) / bn);
    const int64_t per = slices_per(d.k, bk, kslices);
    const int64_t units = tiles * kslices, clusters = slots / cluster;
    const int64_t grid = path == PATH_WGMMA ? (units < clusters ? units : clusters) * cluster : units;
    if (tiles > 0x7fffffff || grid > 0x7fffffff)
        return tess_error(TESS_ERR_ARG, "%s cuda: %lld tiles do not fit a grid", op->name, (long long)(tiles * kslices));
    if (per == 0) return tess_error(TESS_ERR_ARG, "%s cuda: %d slices of K leave one empty", op->name, kslices);
    if (path == PATH_WGMMA && kslices > 1 && (cluster > 1 || tma_store))
        return tess_error(TESS_ERR_ARG, "%s cuda: wgmma splits K with clusters of one, without tma_store", op->name);
    if (window && kslices > 1 && 4.0 * kslices * (double)(tiles_m * bm) * (double)d.n > TESS_GEMM_SPLIT_WORKSPACE_MAX)
        return tess_error(TESS_ERR_ARG, "%s cuda: the partials of %d slices exceed the workspace", op->name, kslices);
    char config[512], key[TESS_KEY_MAX];
    if ((st = tess_config_format(s, c, config, sizeof config)) || (st = tess_task_key(t, key, sizeof key))) return st;
    static const char *const entries[] = {"gemm_simt", "gemm_mma", "gemm_wgmma"};
    const char *const templates[] = {tess_src_gemm_templates_gemm_simt_cu, tess_src_gemm_templates_gemm_mma_cu,
                                     tess_src_gemm_templates_gemm_wgmma_cu};
    const cuda_limits layout = {.in_bytes = (int)tess_dtype_size(d.in), .out_bytes = (int)tess_dtype_size(d.out),
                                .a_trans = d.a_trans, .b_trans = d.b_trans};
    const unsigned smem = path == PATH_MMA ? (unsigned)mma_smem(v, &layout)
                          : path == PATH_WGMMA ? (unsigned)wgmma_smem(v, &layout) : 0;
    tess_strbuf b = {0};
    tess_strbuf_printf(&b, "// %s for %s, generated by tessera.\n// config: %s\n// launch: %s grid %lld, block %d\n",
                       key, dev->arch[0] ? dev->arch : "cuda", config, entries[path], (long long)grid, threads);
    tess_gemm_cuda_task_macros(&b, &d);
    tess_strbuf_printf(&b,
                       "#define BM %d\n#define BN %d\n#define BK %d\n#define CLUSTER %d\n#define TILE_M %d\n#define GROUP_M %d\n"
                       "#define THREADS %d\n#define TM %d\n#define TN %d\n#define WM %d\n#define WN %d\n#define STAGES %d\n",
                       bm, bn, bk, cluster, bm * cluster, (int)v[P_GROUP], threads, bm / (8 * (int)v[P_WM]),
                       bn / (4 * (int)v[P_WN]), (int)v[P_WM], (int)v[P_WN], (int)v[P_STAGES]);
    if (d.conv)
        tess_strbuf_printf(&b,
                           "#define IMG_H %lldLL\n#define IMG_W %lldLL\n#define CH %lldLL\n#define FS %d\n"
                           "#define STRIDE %d\n#define PAD %d\n#define OUT_P %lldLL\n#define OUT_Q %lldLL\n",
                           (long long)d.height, (long long)d.width, (long long)d.channels, d.filter, d.stride, d.pad,
                           (long long)d.out_h, (long long)d.out_w);
    if (path == PATH_WGMMA)
        tess_strbuf_printf(&b,
                           "#define IN_BYTES %d\n#define SWIZZLE_MODE %d\n#define PROMOTE %d\n#define CONV_WINDOW %d\n"
                           "#define TMA_STORE %d\n#define OUT_BYTES %d\n#define CTAS %d\n",
                           layout.in_bytes, bk * layout.in_bytes == 128 ? 1 : 2, promote, window, tma_store, layout.out_bytes,
                           ctas);
    if (window)
        tess_strbuf_printf(&b,
                           "#define TILE_W %d\n#define TILE_H %d\n#define TILE_N %d\n#define IMAGES %lldLL\n#define TILES_P %lld\n"
                           "#define TILES_Q %lld\n#define TILES_M %lld\n",
                           tile.w, tile.h, tile.n, (long long)d.batch, (long long)tiles_p, (long long)tiles_q,
                           (long long)tiles_m);
    if (path != PATH_SIMT)
        tess_strbuf_printf(&b, "#define KSPLIT %d\n#define TILES %lld\n#define SLICES_PER %lld\n", kslices, (long long)tiles,
                           (long long)per);
    if (window) tess_strbuf_printf(&b, "#define SPLIT_ROWS %lldLL\n", (long long)(tiles_m * bm));
    if (path == PATH_WGMMA)   /* the consumers, behind the producer warpgroup, add the slices' partials */
        tess_strbuf_printf(&b, "#define SPLIT_THREADS %d\n#define SPLIT_TID (threadIdx.x - 128)\n"
                           "#define split_sync() asm volatile(\"bar.sync 3, %d;\" ::: \"memory\")\n", threads - 128,
                           threads - 128);
    tess_gemm_cuda_params(&b, &d);
    tess_strbuf_puts(&b, "\n");
    tess_strbuf_puts(&b, tess_src_gemm_templates_gemm_common_cuh);
    tess_strbuf_puts(&b, "\n");
    if (path == PATH_MMA) tess_strbuf_puts(&b, tess_src_gemm_templates_gemm_sm80_cuh);
    if (path != PATH_SIMT) tess_strbuf_puts(&b, tess_src_gemm_templates_gemm_split_cuh);
    if (path == PATH_WGMMA) {
        tess_strbuf_puts(&b, tess_src_core_templates_hopper_cuh);
        tess_strbuf_puts(&b, "\n");
        wgmma_function(&b, bn, d.in);
    }
    tess_strbuf_puts(&b, templates[path]);
    if ((st = tess_strbuf_finish(&b, &out->code))) return st;
    snprintf(out->options, sizeof out->options, "--minimal");
    if (path == PATH_WGMMA) {
        snprintf(out->min_arch, sizeof out->min_arch, "sm_90a");
        wgmma_tensor_maps(&d, tile_slots, bm, bn, bk, cluster, out);
        if (tma_store) store_tensor_map(&d, out);
    }
    if ((st = tess_kernel_source_add_launch(out, entries[path], (unsigned)grid, (unsigned)threads, smem))) return st;
    if (cluster > 1) out->launch[0].cluster[0] = (unsigned)cluster;
    return TESS_OK;
}
