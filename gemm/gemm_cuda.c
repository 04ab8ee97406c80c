/*
 * gemm_cuda.c - CUDA code generation for gemm and conv2d: a config becomes
 * the #defines above templates/gemm_common.cuh and one path's template.
 * Tunables:
 *   path        simt (templates/gemm_simt.cu: any architecture, any dtype),
 *               mma (templates/gemm_mma.cu: sm_80 mma.sync, bf16/f16 inputs,
 *               offered when every operand is read in 16-byte chunks) or
 *               wgmma (templates/gemm_wgmma.cu: sm_90a warpgroup MMA fed by
 *               TMA, bf16/f16 gemm with A and B K-major: layout nt)
 *   bm, bn, bk  the block's tile of D and the slice of K staged at a time
 *   wm, wn      warps along M and N; mma: each owns (bm/wm) x (bn/wn) of the
 *               tile; simt: a warp is 8 x 4 threads, each summing a tile of
 *               (bm/8wm) x (bn/4wn); wgmma: wm (1 or 2) consumer warpgroups
 *               of 64 rows each (bm = 64 wm), wn held at 2
 *   stages      mma, wgmma: slices in flight; simt: held at 4
 *   group_m     rows of tiles visited together (rasterization for L2 reuse)
 *   kslices     mma: slices of K over blocks when the tiles leave
 *               multiprocessors idle, their partial sums added by
 *               templates/gemm_split.cuh (offered with the mma path)
 * and, for few rows of A, path skinny (gemm_skinny.c) with its own parameters.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "core/strbuf.h"
#include "gemm.h"

extern const char tess_src_gemm_templates_gemm_common_cuh[];
extern const char tess_src_gemm_templates_gemm_simt_cu[];
extern const char tess_src_gemm_templates_gemm_mma_cu[];
extern const char tess_src_gemm_templates_gemm_wgmma_cu[];
extern const char tess_src_gemm_templates_gemm_sm80_cuh[];
extern const char tess_src_gemm_templates_gemm_split_cuh[];

enum { P_PATH, P_BM, P_BN, P_BK, P_WM, P_WN, P_STAGES, P_GROUP, P_KSLICES };
enum { PATH_SIMT, PATH_MMA, PATH_WGMMA };
static const char *const path_names[] = {"simt", "mma", "wgmma"};

/* What the constraint needs beyond the values. */
typedef struct cuda_limits {
    double smem_optin;   /* bytes of shared memory a block may opt into */
    int acc_bytes;       /* 4 or 8 */
    bool a_trans, b_trans;
    double skinny;       /* the path's value of skinny, or -1: tess_gemm_skinny_add constrains it */
    bool kslices;        /* whether the space has P_KSLICES */
    double m, n, k, units;
} cuda_limits;

/* BK slices of K per block for kslices slices (its ceiling share); 0 when a slice would be empty. */
static int64_t slices_per(int64_t k, int bk, int kslices) {
    const int64_t total = (k + bk - 1) / bk, per = (total + kslices - 1) / kslices;
    return (total + per - 1) / per == kslices ? per : 0;
}

/* mma: a K split only where the tiles leave multiprocessors idle, every slice used, the partials within bounds. */
static bool split_legal(const double *v, const cuda_limits *l, double smem) {
    const double kslices = l->kslices ? v[P_KSLICES] : 1;
    if (kslices == 1) return true;
    const double tiles = ceil(l->m / v[P_BM]) * ceil(l->n / v[P_BN]);
    return v[P_PATH] == PATH_MMA && tiles < l->units && slices_per((int64_t)l->k, (int)v[P_BK], (int)kslices) > 0 &&
           4 * kslices * l->m * l->n <= TESS_GEMM_SPLIT_WORKSPACE_MAX && smem + 64 <= l->smem_optin;   /* 64: its static counter */
}

static double mma_smem(const double *v, const cuda_limits *l) {
    const double bm = v[P_BM], bn = v[P_BN], bk = v[P_BK];
    const double a = l->a_trans ? bk * (bm + 8) : bm * (bk + 8), b = l->b_trans ? bn * (bk + 8) : bk * (bn + 8);
    return v[P_STAGES] * (a + b) * 2;
}

/* The wgmma path's stages, its barriers and the slack that aligns them to 1024 bytes. */
static double wgmma_smem(const double *v) {
    return v[P_STAGES] * (v[P_BM] + v[P_BN]) * v[P_BK] * 2 + 16 * v[P_STAGES] + 1024;
}

static bool legal(const double *v, void *user) {
    const cuda_limits *l = user;
    const double bm = v[P_BM], bn = v[P_BN], bk = v[P_BK];
    if (v[P_PATH] == l->skinny) return true;
    if (!split_legal(v, l, v[P_PATH] == PATH_MMA ? mma_smem(v, l) : 0)) return false;
    if (v[P_PATH] == PATH_SIMT) {
        const double tm = bm / (8 * v[P_WM]), tn = bn / (4 * v[P_WN]);
        return v[P_STAGES] == 4 && tm >= 1 && tn >= 1 && tm * tn * l->acc_bytes <= 512 && bk <= 32 &&
               (bm + bn + 2) * bk * l->acc_bytes <= 48 * 1024;
    }
    if (v[P_PATH] == PATH_WGMMA)
        /* at most two consumers: with four, 640 threads leave ptxas 96 registers, too few for 128 accumulators */
        return bm == 64 * v[P_WM] && v[P_WM] <= 2 && v[P_WN] == 2 && bn >= 64 && bk >= 32 && wgmma_smem(v) <= l->smem_optin;
    const double wtm = bm / v[P_WM], wtn = bn / v[P_WN];
    return bk >= 32 && wtm >= 16 && wtn >= 16 && wtm * wtn <= 32 * 128 && mma_smem(v, l) <= l->smem_optin;
}

/* Whether every operand can be read in 16-byte chunks of 8 elements. */
static bool chunks_aligned(const tess_gemm_desc *d) {
    const bool a = d->conv ? d->channels % 8 == 0 : (d->a_trans ? d->m : d->k) % 8 == 0;
    const bool b = (d->b_trans ? d->k : d->n) % 8 == 0;
    return a && b;
}

static bool has_mma(const tess_gemm_desc *d, const tess_device *dev) {
    return (d->in == TESS_BF16 || d->in == TESS_F16) && dev->cc_major >= 8 && chunks_aligned(d);
}

/* TMA loads rows of K elements of A and B: both K-major, row strides of 16 bytes' multiples. */
static bool has_wgmma(const tess_gemm_desc *d, const tess_device *dev) {
    return has_mma(d, dev) && dev->cc_major == 9 && !d->conv && !d->a_trans && d->b_trans && d->k % 8 == 0 &&
           d->m < (1LL << 31) && d->n < (1LL << 31);
}

tess_status tess_gemm_cuda_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out) {
    tess_gemm_desc d;
    tess_status st = tess_gemm_describe(op, t, &d);
    if (st) return st;
    const bool mma = has_mma(&d, dev), wgmma = has_wgmma(&d, dev), skinny = tess_gemm_skinny_offered(&d, dev);
    const int npaths = wgmma ? 3 : mma ? 2 : 1;
    const char *labels[4] = {path_names[0], path_names[1], path_names[2]};
    labels[npaths] = "skinny";
    const cuda_limits limits = {.smem_optin = dev->smem_per_block_optin > 0 ? (double)dev->smem_per_block_optin : 49152,
                                .acc_bytes = (int)tess_dtype_size(d.acc), .a_trans = d.a_trans, .b_trans = d.b_trans,
                                .skinny = skinny ? npaths : -1, .kslices = mma, .m = (double)d.m,
                                .n = (double)d.n, .k = (double)d.k, .units = dev->units > 0 ? dev->units : 1};
    const double tiles[] = {16, 32, 64, 128, 256}, slices[] = {8, 16, 32, 64}, warps[] = {1, 2, 4},
                 stages[] = {2, 3, 4, 5}, groups[] = {1, 4, 8, 16}, kslices[] = {1, 2, 4, 8};
    tess_space *s = tess_space_create();
    if (!s) return tess_error(TESS_ERR_NOMEM, "%s cuda space", op->name);
    st = tess_space_add_labels(s, "path", npaths + skinny, labels,
                               skinny && tess_gemm_skinny_default(&d) ? npaths : npaths - 1);
    if (!st) st = tess_space_add(s, "bm", 5, tiles, mma ? 3 : 2);
    if (!st) st = tess_space_add(s, "bn", 5, tiles, mma ? 3 : 2);
    if (!st) st = tess_space_add(s, "bk", 4, slices, mma ? 2 : 1);
    if (!st) st = tess_space_add(s, "wm", 3, warps, 1);
    if (!st) st = tess_space_add(s, "wn", 3, warps, 1);
    if (!st) st = tess_space_add(s, "stages", 4, stages, 2);
    if (!st) st = tess_space_add(s, "group_m", 4, groups, 2);
    if (!st && mma) st = tess_space_add(s, "kslices", 4, kslices, 0);
    if (!st && mma) st = tess_space_set_optional(s, "kslices", 1);   /* configs recorded before it stay readable */
    if (!st)
        st = tess_space_add_constraint_copy(s, legal, &limits, sizeof limits,
                                            "simt: thread tiles of 1 to 128 f32 or 64 f64 sums, bk <= "
                                            "32, stages 4; mma: warp tiles of 16 to 4096, bk >= 32; wgmma: bm = 64 "
                                            "wm <= 128, wn 2, bn >= 64, bk >= 32; shared memory within the device's; "
                                            "kslices > 1: mma, fewer tiles than multiprocessors, no slice empty");
    if (!st && skinny) st = tess_gemm_skinny_add(s, &d, dev, npaths);
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

/* One m64nBNk16 warpgroup MMA on BN/2 accumulators (the asm's operand list depends on BN). */
static void wgmma_function(tess_strbuf *b, int bn, tess_dtype in) {
    const char *ty = in == TESS_F16 ? "f16" : "bf16";
    const int nd = bn / 2;
    tess_strbuf_printf(b,
                       "__device__ __forceinline__ void wgmma_k16(float (&d)[%d], unsigned long long a, unsigned long long b)\n"
                       "{\n    asm volatile(\"{ .reg .pred p; setp.ne.b32 p, %%%d, 0; "
                       "wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {",
                       nd, nd + 2, bn, ty, ty);
    for (int i = 0; i < nd; i++) tess_strbuf_printf(b, "%s%%%d", i ? ", " : "", i);
    tess_strbuf_printf(b, "}, %%%d, %%%d, p, 1, 1, 0, 0; }\"\n                 : ", nd, nd + 1);
    for (int i = 0; i < nd; i++) tess_strbuf_printf(b, "%s\"+f\"(d[%d])", i ? ", " : "", i);
    tess_strbuf_puts(b, "\n                 : \"l\"(a), \"l\"(b), \"r\"(1));\n}\n\n");
}

/* The TMA descriptors of A (M rows of K) and B (N rows of K): boxes of bk x rows, swizzled by rows of bk. */
static void wgmma_tensor_maps(const tess_gemm_desc *d, int bm, int bn, int bk, tess_kernel_source *out) {
    const int64_t rows[2] = {d->m, d->n}, box[2] = {bm, bn};
    const int buffer[2] = {d->buf_a, d->buf_b};
    for (int i = 0; i < 2; i++) {
        tess_tensor_map *m = &out->tensor_map[i];
        memset(m, 0, sizeof *m);
        m->buffer = buffer[i];
        m->dtype = d->in;
        m->rank = 2;
        m->dims[0] = (uint64_t)d->k;
        m->dims[1] = (uint64_t)rows[i];
        m->strides[0] = (uint64_t)d->k * 2;
        m->box[0] = (uint32_t)bk;
        m->box[1] = (uint32_t)box[i];
        m->swizzle = bk * 2;
    }
    out->ntensor_maps = 2;
}

tess_status tess_gemm_cuda_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                                const tess_config *c, tess_kernel_source *out) {
    tess_gemm_desc d;
    tess_status st = tess_gemm_describe(op, t, &d);
    if (st) return st;
    double v[TESS_MAX_PARAMS];
    if (tess_space_nparams(s) < P_GROUP + 1 || tess_space_param_index(s, "group_m") != P_GROUP)
        return tess_error(TESS_ERR_ARG, "%s cuda: the space is not a gemm cuda space", op->name);
    const char *label = tess_space_param_label(s, P_PATH, c->v[P_PATH]);
    if (label && strcmp(label, "skinny") == 0) return tess_gemm_skinny_emit(op, t, &d, dev, s, c, out);
    tess_space_values(s, c, v);
    const int path = (int)v[P_PATH], bm = (int)v[P_BM], bn = (int)v[P_BN], bk = (int)v[P_BK];
    if (path == PATH_MMA && !has_mma(&d, dev))
        return tess_error(TESS_ERR_ARG, "%s cuda: path mma needs bf16 or f16 inputs in 16-byte chunks on sm_80 or later",
                          op->name);
    if (path == PATH_WGMMA && !has_wgmma(&d, dev))
        return tess_error(TESS_ERR_ARG, "%s cuda: path wgmma needs a bf16 or f16 gemm of layout nt on sm_90", op->name);
    const int threads = path == PATH_WGMMA ? 128 * (1 + bm / 64) : 32 * (int)(v[P_WM] * v[P_WN]);
    const int64_t tiles = ((d.m + bm - 1) / bm) * ((d.n + bn - 1) / bn);
    const int kslices = path == PATH_MMA && tess_space_param_index(s, "kslices") >= 0
                            ? (int)tess_config_get(s, c, "kslices") : 1;
    const int64_t grid = tiles * kslices, per = slices_per(d.k, bk, kslices);
    if (grid > 0x7fffffff) return tess_error(TESS_ERR_ARG, "%s cuda: %lld blocks do not fit a grid", op->name, (long long)grid);
    if (per == 0) return tess_error(TESS_ERR_ARG, "%s cuda: %d slices of K leave one empty", op->name, kslices);
    char config[512], key[TESS_KEY_MAX];
    if ((st = tess_config_format(s, c, config, sizeof config)) || (st = tess_task_key(t, key, sizeof key))) return st;
    static const char *const entries[] = {"gemm_simt", "gemm_mma", "gemm_wgmma"};
    const char *const templates[] = {tess_src_gemm_templates_gemm_simt_cu, tess_src_gemm_templates_gemm_mma_cu,
                                     tess_src_gemm_templates_gemm_wgmma_cu};
    const cuda_limits layout = {.a_trans = d.a_trans, .b_trans = d.b_trans};
    const unsigned smem = path == PATH_MMA ? (unsigned)mma_smem(v, &layout)
                          : path == PATH_WGMMA ? (unsigned)wgmma_smem(v) : 0;
    tess_strbuf b = {0};
    tess_strbuf_printf(&b, "// %s for %s, generated by tessera.\n// config: %s\n// launch: %s grid %lld, block %d\n",
                       key, dev->arch[0] ? dev->arch : "cuda", config, entries[path], (long long)grid, threads);
    tess_gemm_cuda_task_macros(&b, &d);
    tess_strbuf_printf(&b,
                       "#define BM %d\n#define BN %d\n#define BK %d\n#define GROUP_M %d\n#define THREADS %d\n"
                       "#define TM %d\n#define TN %d\n#define WM %d\n#define WN %d\n#define STAGES %d\n",
                       bm, bn, bk, (int)v[P_GROUP], threads, bm / (8 * (int)v[P_WM]), bn / (4 * (int)v[P_WN]),
                       (int)v[P_WM], (int)v[P_WN], (int)v[P_STAGES]);
    if (d.conv)
        tess_strbuf_printf(&b,
                           "#define IMG_H %lldLL\n#define IMG_W %lldLL\n#define CH %lldLL\n#define FS %d\n"
                           "#define STRIDE %d\n#define PAD %d\n#define OUT_P %lldLL\n#define OUT_Q %lldLL\n",
                           (long long)d.height, (long long)d.width, (long long)d.channels, d.filter, d.stride, d.pad,
                           (long long)d.out_h, (long long)d.out_w);
    if (path == PATH_WGMMA) tess_strbuf_printf(&b, "#define SWIZZLE_MODE %d\n", bk == 64 ? 1 : 2);
    if (path == PATH_MMA)
        tess_strbuf_printf(&b, "#define KSPLIT %d\n#define TILES %lld\n#define SLICES_PER %lld\n", kslices, (long long)tiles,
                           (long long)per);
    tess_gemm_cuda_params(&b, &d);
    tess_strbuf_puts(&b, "\n");
    tess_strbuf_puts(&b, tess_src_gemm_templates_gemm_common_cuh);
    tess_strbuf_puts(&b, "\n");
    if (path == PATH_MMA) {
        tess_strbuf_puts(&b, tess_src_gemm_templates_gemm_sm80_cuh);
        tess_strbuf_puts(&b, tess_src_gemm_templates_gemm_split_cuh);
    }
    if (path == PATH_WGMMA) wgmma_function(&b, bn, d.in);
    tess_strbuf_puts(&b, templates[path]);
    if ((st = tess_strbuf_finish(&b, &out->code))) return st;
    snprintf(out->options, sizeof out->options, "--minimal");
    if (path == PATH_WGMMA) {
        snprintf(out->min_arch, sizeof out->min_arch, "sm_90a");
        wgmma_tensor_maps(&d, bm, bn, bk, out);
    }
    return tess_kernel_source_add_launch(out, entries[path], (unsigned)grid, (unsigned)threads, smem);
}
