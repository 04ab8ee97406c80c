/*
 * gemm_skinny.c - the cuda path for GEMMs of few rows of A (decoding steps,
 * GEMV): templates/gemm_skinny.cu, a kernel bound by reading B once, its
 * products on the tensor cores with A's rows zero-padded to 16.
 * Tunables, added to the cuda space after the other paths' (gemm_cuda.c):
 *   warps    warps per block, each owning nfrag fragments of 8 columns of D
 *   nfrag    fragments of 8 columns per warp (loads per step per lane)
 *   unroll   steps of 32 values of K whose loads are issued together
 *   ksplit   slices of K over blocks; their f32 partial sums are added in
 *            slice order before the epilogue: on sm_90, up to 8 slices, by the
 *            tile's blocks together as a cluster, each adding a share from the
 *            others' shared memory; else by the last block of each column tile
 *            from L2 (templates/gemm_split.cuh)
 *   prefetch bytes of B that L2 fetches around each load (0, 128, 256): a
 *            lane's row of B continues past its 16 bytes, and the next
 *            steps read on
 * and ctas (gemm_cuda.c's, shared with wgmma): 2 caps the kernel's registers
 * at 64 a thread (ptxas told to fit 64K / (64 threads) blocks on a
 * multiprocessor) for more loads in flight per multiprocessor.
 * A config is legal when every slice holds values of K (no empty blocks), A's
 * slice fits the device's shared memory and the partials at most 64 MiB.
 */
#include <math.h>
#include <stdio.h>
#include "core/error.h"
#include "gemm.h"

extern const char tess_src_gemm_templates_gemm_common_cuh[];
extern const char tess_src_gemm_templates_gemm_sm80_cuh[];
extern const char tess_src_gemm_templates_gemm_split_cuh[];
extern const char tess_src_gemm_templates_gemm_skinny_cu[];

enum { SKINNY_MAX_M = 64, SKINNY_DEFAULT_M = 16 };

/* Slices of K a cluster adds (sm_90; at most 8: the portable cluster size). */
enum { SKINNY_CLUSTER_MAX = 8 };

/* The kernel's geometry for one config. */
typedef struct skinny_plan {
    int mt, nf, warps, unroll, splits;
    int64_t kspan, cols, tiles_n;
    bool cluster;   /* the slices added within a cluster */
    double smem;
} skinny_plan;

/* The skinny parameters' values in the order they are added. */
enum { S_WARPS, S_NFRAG, S_UNROLL, S_SPLIT, S_PREFETCH, S_COUNT };
static const char *const skinny_names[S_COUNT] = {"warps", "nfrag", "unroll", "ksplit", "prefetch"};

/* The plan of values v (S_COUNT of them; prefetch changes no size) for an M x N x K task on a device of compute
 * capability cc_major; whether it is legal. */
static bool plan_of(int64_t m, int64_t n, int64_t k, const double *v, double smem_optin, int cc_major, skinny_plan *p) {
    p->mt = (int)((m + 15) / 16);
    p->warps = (int)v[S_WARPS];
    p->nf = (int)v[S_NFRAG];
    p->unroll = (int)v[S_UNROLL];
    const int64_t split = (int64_t)v[S_SPLIT];
    /* a multiple of 64 for gemm_skinny.cu's A_STRIDE, of 32 unroll for its steps */
    const int64_t align = 32 * p->unroll > 64 ? 32 * p->unroll : 64;
    p->kspan = ((k + split - 1) / split + align - 1) / align * align;
    p->splits = (int)((k + p->kspan - 1) / p->kspan);
    p->cols = 8LL * p->warps * p->nf;
    p->tiles_n = (n + p->cols - 1) / p->cols;
    /* gemm_skinny.cu's SROWS rows of A_STRIDE, then in a cluster SROWS x cols f32 partials (16-byte aligned) */
    const double srows = (double)(m < 16 * p->mt ? m : 16 * p->mt);
    p->cluster = cc_major >= 9 && p->splits > 1 && p->splits <= SKINNY_CLUSTER_MAX;
    p->smem = ceil(srows * (double)(p->kspan + 32) * 2 / 16) * 16 + (p->cluster ? srows * (double)p->cols * 4 : 0);
    const double workspace = p->splits > 1 && !p->cluster ? 4.0 * (double)p->splits * (double)m * (double)n : 0;
    /* 64: gemm_split.cuh's static shared counter */
    return p->splits == split && p->mt * p->nf <= 8 && p->unroll * p->nf <= 8 && p->smem + 64 <= smem_optin &&
           workspace <= TESS_GEMM_SPLIT_WORKSPACE_MAX && (double)p->tiles_n * p->splits < 2147483648.0;
}

/* What the constraint needs: the task, the device's shared memory, where the
 * skinny parameters are and every parameter's default. */
typedef struct skinny_rule {
    int64_t m, n, k;
    double smem_optin;
    int cc_major;
    double path;
    int first, nparams;
    double dflt[TESS_MAX_PARAMS];
} skinny_rule;

static bool skinny_legal(const double *v, void *user) {
    const skinny_rule *r = user;
    const bool on = v[0] == r->path;
    /* on the skinny path the other paths' parameters are held, elsewhere the skinny ones */
    for (int p = on ? 1 : r->first; p < (on ? r->first : r->nparams); p++)
        if (v[p] != r->dflt[p]) return false;
    skinny_plan plan;
    return !on || plan_of(r->m, r->n, r->k, v + r->first, r->smem_optin, r->cc_major, &plan);
}

bool tess_gemm_skinny_offered(const tess_gemm_desc *d, const tess_device *dev) {
    return (d->in == TESS_BF16 || d->in == TESS_F16) && dev->cc_major >= 8 && !d->conv && d->b_trans &&
           d->k % 8 == 0 && d->m <= SKINNY_MAX_M;
}

bool tess_gemm_skinny_default(const tess_gemm_desc *d) { return d->m <= SKINNY_DEFAULT_M; }

tess_status tess_gemm_skinny_add(tess_space *s, const tess_gemm_desc *d, const tess_device *dev, int path) {
    static const double warps[] = {1, 2, 4, 8}, nfrag[] = {1, 2, 4}, unroll[] = {1, 2, 4, 8},
                        splits[] = {1, 2, 4, 8, 16, 32, 64}, prefetch[] = {0, 128, 256};
    const int nsplits = (int)(sizeof splits / sizeof splits[0]);
    skinny_rule r = {.m = d->m, .n = d->n, .k = d->k, .path = path, .first = tess_space_nparams(s),
                     .smem_optin = dev->smem_per_block_optin > 0 ? (double)dev->smem_per_block_optin : 49152,
                     .cc_major = dev->cc_major};
    /* The default: the best config measured on an H200 (data/bench/gemm-skinny-h200-run2, -run3): 8 warps
     * of 2 fragments, unroll 4, prefetch 128, and the fewest slices that give the multiprocessors 1.5
     * blocks each (about 2 blocks of 8 warps, each streaming 8 KB or more of B per warp), where legal. */
    int split_index = 0;
    for (int i = 0; i < nsplits; i++) {
        const double v[S_COUNT] = {warps[3], nfrag[1], unroll[2], splits[i], prefetch[1]};
        skinny_plan plan;
        if (!plan_of(d->m, d->n, d->k, v, r.smem_optin, r.cc_major, &plan)) continue;
        split_index = i;
        if ((double)plan.tiles_n * plan.splits >= 1.5 * (dev->units > 0 ? dev->units : 1)) break;
    }
    tess_status st = tess_space_add(s, skinny_names[S_WARPS], 4, warps, 3);
    if (!st) st = tess_space_add(s, skinny_names[S_NFRAG], 3, nfrag, 1);
    if (!st) st = tess_space_add(s, skinny_names[S_UNROLL], 4, unroll, 2);
    if (!st) st = tess_space_add(s, skinny_names[S_SPLIT], nsplits, splits, split_index);
    if (!st) st = tess_space_add(s, skinny_names[S_PREFETCH], 3, prefetch, 1);
    if (st) return st;
    r.nparams = tess_space_nparams(s);
    tess_config c;
    tess_space_default(s, &c);
    tess_space_values(s, &c, r.dflt);
    return tess_space_add_constraint_copy(s, skinny_legal, &r, sizeof r,
                                          "skinny: every K slice used, nfrag (m tiles, unroll) <= 8, A's slice "
                                          "within shared memory, partials <= 64 MiB; the other paths' parameters "
                                          "at their defaults on it, its own elsewhere");
}

tess_status tess_gemm_skinny_emit(const tess_op *op, const tess_task *t, const tess_gemm_desc *d, const tess_device *dev,
                                  const tess_space *s, const tess_config *c, tess_kernel_source *out) {
    if (!tess_gemm_skinny_offered(d, dev))
        return tess_error(TESS_ERR_ARG,
                          "%s cuda: path skinny needs at most %d rows, bf16 or f16 inputs, B stored N x K (layout nt "
                          "or tt) and K a multiple of 8, on sm_80 or later",
                          op->name, SKINNY_MAX_M);
    double v[S_COUNT];
    for (int i = 0; i < S_COUNT; i++) {
        if (tess_space_param_index(s, skinny_names[i]) < 0)
            return tess_error(TESS_ERR_ARG, "%s cuda: the space has no skinny parameter %s", op->name, skinny_names[i]);
        v[i] = tess_config_get(s, c, skinny_names[i]);
    }
    skinny_plan p;
    const double optin = dev->smem_per_block_optin > 0 ? (double)dev->smem_per_block_optin : 49152;
    if (!plan_of(d->m, d->n, d->k, v, optin, dev->cc_major, &p))
        return tess_error(TESS_ERR_ARG, "%s cuda: the skinny config is not legal for %lldx%lldx%lld", op->name,
                          (long long)d->m, (long long)d->n, (long long)d->k);
    char config[512], key[TESS_KEY_MAX];
    tess_status st = tess_config_format(s, c, config, sizeof config);
    if (!st) st = tess_task_key(t, key, sizeof key);
    if (st) return st;
    const int threads = 32 * p.warps;
    const bool capped = tess_space_param_index(s, "ctas") >= 0 && tess_config_get(s, c, "ctas") == 2;
    const int min_blocks = capped ? 65536 / (64 * threads) : 1;
    const unsigned grid = (unsigned)(p.tiles_n * p.splits);
    tess_strbuf b = {0};
    tess_strbuf_printf(&b, "// %s for %s, generated by tessera.\n// config: %s\n// launch: gemm_skinny grid %u, block %d\n",
                       key, dev->arch[0] ? dev->arch : "cuda", config, grid, threads);
    tess_gemm_cuda_task_macros(&b, d);
    tess_strbuf_printf(&b,
                       "#define BM %d\n#define BN %lld\n#define GROUP_M 1\n#define THREADS %d\n#define MT %d\n"
                       "#define NF %d\n#define WARPS %d\n#define UNROLL %d\n#define KSPAN %lld\n#define KSPLIT %d\n"
                       "#define COLS %lld\n#define TILES %lld\n#define PREFETCH %d\n#define CLUSTER_REDUCE %d\n"
                       "#define MIN_BLOCKS %d\n",
                       16 * p.mt, (long long)p.cols, threads, p.mt, p.nf, p.warps, p.unroll, (long long)p.kspan,
                       p.splits, (long long)p.cols, (long long)p.tiles_n, (int)v[S_PREFETCH], p.cluster, min_blocks);
    tess_gemm_cuda_params(&b, d);
    tess_strbuf_puts(&b, "\n");
    tess_strbuf_puts(&b, tess_src_gemm_templates_gemm_common_cuh);
    tess_strbuf_puts(&b, "\n");
    tess_strbuf_puts(&b, tess_src_gemm_templates_gemm_sm80_cuh);
    if (!p.cluster) tess_strbuf_puts(&b, tess_src_gemm_templates_gemm_split_cuh);
    tess_strbuf_puts(&b, tess_src_gemm_templates_gemm_skinny_cu);
    if ((st = tess_strbuf_finish(&b, &out->code))) return st;
    snprintf(out->options, sizeof out->options, "--minimal");
    if ((st = tess_kernel_source_add_launch(out, "gemm_skinny", grid, (unsigned)threads, (unsigned)p.smem))) return st;
    if (p.cluster) out->launch[0].cluster[0] = (unsigned)p.splits;
    return TESS_OK;
}
