/*
 * rowwise_cuda.c - CUDA code generation for the row-wise operators: a
 * config becomes the #defines above templates/storage.cuh and
 * templates/rowwise.cu. Tunables:
 *   vec               elements per load (at most 16 bytes; C a multiple of it)
 *   threads_per_row   threads sharing a row (8 to 1024; below 32 a warp holds several rows)
 *   rows_per_block    rows of a block (threads_per_row * rows_per_block in 32..1024)
 *   cache             where the row stays between passes: registers (as
 *                     stored, at most 256 bytes per thread: 64 floats, 128
 *                     bf16), shared (as stored, within the device's shared
 *                     memory per block) or global (read again)
 *   unroll            unroll of the passes over a row in shared or global memory
 *   cluster           sm_90: blocks of a thread-block cluster sharing each row
 *                     (a slice each, statistics combined through distributed
 *                     shared memory); for long rows, which one block per row
 *                     leaves with too few blocks in flight
 *   online            softmax kinds: max and sum in one pass (cross-entropy
 *                     then reads its row once: cache global)
 *   row_loop          row groups per block, one after another, the next
 *                     one's slice loaded while the current one is combined
 *                     and written: into registers (the row in registers,
 *                     twice the registers) or, with bulk, into a second
 *                     shared memory buffer; not cross-entropy, add_rmsnorm
 *   bulk              sm_90, cache=shared: the row's slice copied into
 *                     shared memory by bulk copies (cp.async.bulk) on an
 *                     mbarrier, all of it in flight at once (slices of a
 *                     multiple of 16 bytes; not add_rmsnorm)
 *   bulk_store        with bulk: the outputs written over the slice in
 *                     shared memory and copied out by bulk copies (not
 *                     cross-entropy)
 *   keep_exp          softmax: the sum's exponentials kept in registers (as
 *                     floats, 64 at most) for the output, one exp per
 *                     element instead of two, wherever the row is (online:
 *                     each thread's against its own max, then one
 *                     combination of the row's max and sum)
 *   hold_weights      the norms: the weight (and bias) vectors of a thread's
 *                     columns loaded before the first row's statistics and
 *                     kept for every row group, so the write pass waits for
 *                     no load from memory: 1 in registers (256 bytes at
 *                     most), 2 in shared memory after the row's buffers
 * Shortcuts, with an error budget: fast_exp (__expf), max_sub=0 (softmax
 * without the max: unsafe for large logits), fast_rsqrt (rsqrtf).
 */
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "core/strbuf.h"
#include "accuracy.h"
#include "rowwise.h"

extern const char tess_src_reductions_templates_rowwise_cu[];

#define MAX_HELD_BYTES 256          /* of the row a thread may hold in registers (64 of them) */
#define MAX_EXPS 64                 /* exponentials a thread may keep (keep_exp) */
#define REDUCE_SMEM (2 * 16 * 32 * 4)   /* the template's static shared memory, at most */

static const char *const cache_labels[] = {"registers", "shared", "global"};
enum { CACHE_REGISTERS, CACHE_SHARED, CACHE_GLOBAL };

/* What the constraints need: the parameters' indices, the row and the device. */
typedef struct row_limits {
    int vec, tpr, rpb, cache, unroll, online, max_sub, cluster, keep_exp, row_loop, bulk, bulk_store, hold;   /* indices; -1: absent */
    bool read_once_online;          /* online reads the row once (cross-entropy): nothing to keep */
    bool loops;                     /* the operator may take row groups one after another */
    bool bulk_ok;                   /* the operator may have its rows copied in by bulk copies */
    int64_t cols;
    int esize, nweights;
    int64_t smem;                   /* dynamic shared memory a block may have */
    int max_threads;
} row_limits;

static int64_t cluster_of(const row_limits *l, const double *v) { return l->cluster < 0 ? 1 : (int64_t)v[l->cluster]; }
static bool bulk_of(const row_limits *l, const double *v) { return l->bulk >= 0 && v[l->bulk] > 0; }
static bool bulk_store_of(const row_limits *l, const double *v) { return l->bulk_store >= 0 && v[l->bulk_store] > 0; }
static bool loops_of(const row_limits *l, const double *v) { return l->row_loop >= 0 && v[l->row_loop] > 1; }

static int64_t items_of(const row_limits *l, const double *v) {
    const int64_t nv = l->cols / (int64_t)v[l->vec] / cluster_of(l, v), tpr = (int64_t)v[l->tpr];
    return (nv + tpr - 1) / tpr;
}

static bool vec_divides_row(const double *v, void *user) {
    const row_limits *l = user;
    return l->cols % ((int64_t)v[l->vec] * cluster_of(l, v)) == 0;
}

static bool block_size_ok(const double *v, void *user) {
    const row_limits *l = user;
    const double threads = v[l->tpr] * v[l->rpb];
    return threads >= 32 && threads <= l->max_threads;
}

static bool cache_fits(const double *v, void *user) {
    const row_limits *l = user;
    const int64_t elements = items_of(l, v) * (int64_t)v[l->vec];
    if (l->keep_exp >= 0 && v[l->keep_exp] == 1 && elements > MAX_EXPS) return false;
    if (l->hold >= 0 && v[l->hold] == 1 && elements * l->esize * l->nweights > MAX_HELD_BYTES) return false;
    const int64_t weights_smem = l->hold >= 0 && v[l->hold] == 2 ? l->nweights * l->cols / cluster_of(l, v) * l->esize : 0;
    switch ((int)v[l->cache]) {
    case CACHE_REGISTERS:
        return elements * l->esize * (loops_of(l, v) ? 2 : 1) <= MAX_HELD_BYTES &&
               weights_smem + REDUCE_SMEM <= l->smem;
    case CACHE_SHARED:   /* two buffers of row groups with bulk copies and row_loop */
        return (loops_of(l, v) ? 2 : 1) * (int64_t)v[l->rpb] * l->cols / cluster_of(l, v) * l->esize + weights_smem +
                   REDUCE_SMEM <=
               l->smem;
    default: return weights_smem + REDUCE_SMEM <= l->smem;
    }
}

/* unroll only means something for loops over a row in memory; online needs
 * the max; a row read once is kept nowhere; exponentials are kept only
 * beside a row in registers, between the two passes after the max; bulk
 * copies fill shared memory, in whole 16-byte units */
static bool no_idle_parameters(const double *v, void *user) {
    const row_limits *l = user;
    if (bulk_of(l, v) && ((int)v[l->cache] != CACHE_SHARED || !l->bulk_ok ||
                          l->cols / cluster_of(l, v) * l->esize % 16 != 0))
        return false;
    if (bulk_store_of(l, v) && !bulk_of(l, v)) return false;
    if (loops_of(l, v) && (!l->loops || ((int)v[l->cache] != CACHE_REGISTERS && !bulk_of(l, v)))) return false;
    const bool keep = l->keep_exp >= 0 && v[l->keep_exp] == 1, hold = l->hold >= 0 && v[l->hold] == 1;
    if (keep && l->max_sub >= 0 && v[l->max_sub] == 0) return false;
    /* kept exponentials and held weights unroll the passes fully */
    if (((int)v[l->cache] == CACHE_REGISTERS || keep || hold) && v[l->unroll] != 1) return false;
    if (l->read_once_online && v[l->online] == 1 && (int)v[l->cache] != CACHE_GLOBAL) return false;
    return l->online < 0 || l->max_sub < 0 || v[l->online] == 0 || v[l->max_sub] == 1;
}

static int index_of(const double *values, int n, double v) {
    for (int i = 0; i < n; i++)
        if (values[i] == v) return i;
    return 0;
}

tess_status tess_rowwise_cuda_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out) {
    const bool softmax = tess_rowwise_is_softmax(op), shortcuts = tess_error_budget(t) > 0,
               keep_exp = tess_rowwise_of(op)->kind == TESS_ROW_SOFTMAX;
    const int esize = tess_storage_size(t);
    const int64_t cols = t->shape[1];
    const double vecs[] = {1, 2, 4, 8}, tprs[] = {8, 16, 32, 64, 128, 256, 512, 1024}, rpbs[] = {1, 2, 4, 8, 16},
                 unrolls[] = {1, 2, 4}, flag[] = {0, 1}, clusters[] = {1, 2, 4, 8}, row_loops[] = {1, 2, 4, 8};
    int cc = 0;
    bool arch_specific;
    const bool has_clusters = tess_arch_parse(dev->arch, &cc, &arch_specific) == TESS_OK && cc >= 90;
    const int nvec = 16 / esize < 8 ? 3 : 4;   /* loads of at most 16 bytes */
    const tess_rowwise_kind kind = tess_rowwise_of(op)->kind;
    row_limits l = {.cols = cols, .esize = esize, .nweights = tess_rowwise_of(op)->nweights, .hold = -1, .online = -1, .max_sub = -1, .cluster = -1, .keep_exp = -1,
                    .row_loop = -1, .bulk = -1, .bulk_store = -1, .loops = kind != TESS_ROW_CROSS_ENTROPY && kind != TESS_ROW_ADD_RMSNORM,
                    .bulk_ok = kind != TESS_ROW_ADD_RMSNORM,
                    .read_once_online = kind == TESS_ROW_CROSS_ENTROPY,
                    .smem = dev->smem_per_block_optin > 0 ? dev->smem_per_block_optin : dev->smem_per_block,
                    .max_threads = dev->max_threads_per_block > 0 ? dev->max_threads_per_block : 1024};

    /* The default: the widest load that divides the row, the fewest
     * threads per row that hold it in at most 4 loads each, 128 threads or
     * more per block, the row in registers if it fits, else shared memory;
     * softmax keeps its exponentials where they fit. */
    int dvec = nvec - 1;
    while (dvec > 0 && cols % (int64_t)vecs[dvec] != 0) dvec--;
    const int64_t nv = cols / (int64_t)vecs[dvec];
    int dtpr = 0;
    while (dtpr < 7 && (nv + (int64_t)tprs[dtpr] - 1) / (int64_t)tprs[dtpr] > 4) dtpr++;
    int drpb = 0;
    while (drpb < 4 && tprs[dtpr] * rpbs[drpb] < 128) drpb++;
    const int64_t items = (nv + (int64_t)tprs[dtpr] - 1) / (int64_t)tprs[dtpr];
    const int dcache = items * (int64_t)vecs[dvec] * esize <= MAX_HELD_BYTES ? CACHE_REGISTERS
                       : (int64_t)rpbs[drpb] * cols * esize + REDUCE_SMEM <= l.smem ? CACHE_SHARED
                                                                                      : CACHE_GLOBAL;

    tess_space *s = tess_space_create();
    if (!s) return tess_error(TESS_ERR_NOMEM, "%s cuda space", op->name);
    tess_status st = tess_space_add(s, "vec", nvec, vecs, dvec);
    if (!st) st = tess_space_add(s, "threads_per_row", 8, tprs, dtpr);
    if (!st) st = tess_space_add(s, "rows_per_block", 5, rpbs, drpb);
    if (!st) st = tess_space_add_labels(s, "cache", 3, cache_labels, dcache);
    if (!st) st = tess_space_add(s, "unroll", 3, unrolls, index_of(unrolls, 3, dcache == CACHE_REGISTERS ? 1 : 2));
    if (!st && softmax) st = tess_space_add(s, "online", 2, flag, dcache == CACHE_GLOBAL);
    /* recorded before row_loop existed: one row group per block */
    if (!st) st = tess_space_add(s, "row_loop", 4, row_loops, 0);
    if (!st) st = tess_space_set_optional(s, "row_loop", 1);
    /* recorded before keep_exp existed: exponentials computed twice */
    /* kept by default where they fit: one exp per element instead of two */
    const bool keep_default = dcache == CACHE_REGISTERS && items * (int64_t)vecs[dvec] <= MAX_EXPS;
    if (!st && keep_exp) st = tess_space_add(s, "keep_exp", 2, flag, keep_default);
    if (!st && keep_exp) st = tess_space_set_optional(s, "keep_exp", 0);
    /* recorded before hold_weights existed: the weights loaded in the write pass */
    const double holds[] = {0, 1, 2};
    if (!st && l.nweights > 0) st = tess_space_add(s, "hold_weights", 3, holds, 0);
    if (!st && l.nweights > 0) st = tess_space_set_optional(s, "hold_weights", 0);
    /* recorded before clusters existed: none */
    if (!st && has_clusters) st = tess_space_add(s, "cluster", 4, clusters, 0);
    if (!st && has_clusters) st = tess_space_set_optional(s, "cluster", 1);
    /* recorded before bulk copies existed: plain loads */
    if (!st && has_clusters && l.bulk_ok) st = tess_space_add(s, "bulk", 2, flag, 0);
    if (!st && has_clusters && l.bulk_ok) st = tess_space_set_optional(s, "bulk", 0);
    const bool store_ok = has_clusters && l.bulk_ok && kind != TESS_ROW_CROSS_ENTROPY;
    if (!st && store_ok) st = tess_space_add(s, "bulk_store", 2, flag, 0);
    if (!st && store_ok) st = tess_space_set_optional(s, "bulk_store", 0);
    if (!st && softmax && shortcuts) st = tess_shortcut_add(s, "fast_exp", 0, 1);
    if (!st && softmax && shortcuts) st = tess_shortcut_add(s, "max_sub", 1, 0);
    if (!st && !softmax && shortcuts) st = tess_shortcut_add(s, "fast_rsqrt", 0, 1);
    if (!st) {
        l.vec = tess_space_param_index(s, "vec");
        l.tpr = tess_space_param_index(s, "threads_per_row");
        l.rpb = tess_space_param_index(s, "rows_per_block");
        l.cache = tess_space_param_index(s, "cache");
        l.unroll = tess_space_param_index(s, "unroll");
        l.online = tess_space_param_index(s, "online");
        l.max_sub = tess_space_param_index(s, "max_sub");
        l.cluster = tess_space_param_index(s, "cluster");
        l.keep_exp = tess_space_param_index(s, "keep_exp");
        l.row_loop = tess_space_param_index(s, "row_loop");
        l.bulk = tess_space_param_index(s, "bulk");
        l.bulk_store = tess_space_param_index(s, "bulk_store");
        l.hold = tess_space_param_index(s, "hold_weights");
        st = tess_space_add_constraint_copy(s, vec_divides_row, &l, sizeof l, "C % (vec * cluster) == 0");
    }
    if (!st)
        st = tess_space_add_constraint_copy(s, block_size_ok, &l, sizeof l,
                                            "32 <= threads_per_row * rows_per_block <= max threads per block");
    if (!st)
        st = tess_space_add_constraint_copy(s, cache_fits, &l, sizeof l,
                                            "the row (its slice, in a cluster) fits where cache keeps it (256 bytes "
                                            "per thread in registers, shared memory per block); kept "
                                            "exponentials 64 floats, held weights 256 bytes per thread");
    if (!st)
        st = tess_space_add_constraint_copy(s, no_idle_parameters, &l, sizeof l,
                                            "unroll 1 with the row in registers, keep_exp or hold_weights; online needs max_sub=1; "
                                            "cross-entropy online keeps no row (cache=global); keep_exp needs "
                                            "max_sub=1; row_loop > 1 needs "
                                            "cache=registers or bulk=1, neither cross-entropy nor add_rmsnorm; "
                                            "bulk=1 needs cache=shared and slices of a multiple of 16 bytes; "
                                            "bulk_store=1 needs bulk=1");
    if (st) {
        tess_space_destroy(s);
        return st;
    }
    *out = s;
    return TESS_OK;
}

tess_status tess_rowwise_cuda_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                                   const tess_config *c, tess_kernel_source *out) {
    const tess_rowwise_info *info = tess_rowwise_of(op);
    const int vec = (int)tess_config_get(s, c, "vec"), tpr = (int)tess_config_get(s, c, "threads_per_row"),
              rpb = (int)tess_config_get(s, c, "rows_per_block"), cache = (int)tess_config_get(s, c, "cache"),
              unroll = (int)tess_config_get(s, c, "unroll"), cluster = (int)tess_config_get_or(s, c, "cluster", 1),
              row_loop = (int)tess_config_get_or(s, c, "row_loop", 1), bulk = (int)tess_config_get_or(s, c, "bulk", 0),
              bulk_store = (int)tess_config_get_or(s, c, "bulk_store", 0);
    if (vec < 1 || tpr < 1 || rpb < 1 || cache < 0 || unroll < 1 || cluster < 1 || row_loop < 1)
        return tess_error(TESS_ERR_ARG, "%s cuda: the space is not a row-wise cuda space", op->name);
    const int64_t rows = t->shape[0], cols = t->shape[1];
    if (cols % ((int64_t)vec * cluster) != 0)
        return tess_error(TESS_ERR_ARG, "%s cuda: vec=%d times cluster=%d does not divide C=%lld", op->name, vec, cluster,
                          (long long)cols);
    const int64_t items = (cols / vec / cluster + tpr - 1) / tpr;
    char config[512], entry[48];
    tess_status st = tess_config_format(s, c, config, sizeof config);
    if (st) return st;
    snprintf(entry, sizeof entry, "%s_rows", op->name);
    const int64_t groups = (rows + rpb - 1) / rpb, blocks = (groups + row_loop - 1) / row_loop * cluster;
    const int buffers = bulk && row_loop > 1 ? 2 : 1;
    const int hold = (int)tess_config_get_or(s, c, "hold_weights", 0);
    const unsigned smem =
        (unsigned)((cache == CACHE_SHARED ? buffers * rpb * cols / cluster * tess_storage_size(t) : 0) +
                   (hold == 2 ? info->nweights * cols / cluster * tess_storage_size(t) : 0));
    tess_strbuf b = {0};
    tess_strbuf_printf(&b,
        "// %s over %lld rows of %lld %s elements for %s, generated by tessera.\n"
        "// config: %s\n"
        "// launch: %s grid %lld, block %d, dynamic shared memory %u bytes\n"
        "#define %s 1\n#define %s\n#define STORAGE_BYTES %d\n"
        "#define R %lldLL\n#define C %lld\n#define VEC %d\n#define TPR %d\n#define RPB %d\n#define ITEMS %lld\n"
        "#define CACHE %d\n#define UNROLL %d\n#define CLUSTER %d\n#define ROW_LOOP %d\n#define BULK %d\n#define BULK_STORE %d\n#define ONLINE %d\n#define KEEP_EXP %d\n#define HOLD_WEIGHTS %d\n"
        "#define FAST_EXP %d\n#define MAX_SUB %d\n#define FAST_RSQRT %d\n",
        op->name, (long long)rows, (long long)cols, tess_dtype_name(t->dtype), dev->arch[0] ? dev->arch : "cuda",
        config, entry, (long long)blocks, tpr * rpb, smem, info->macro, tess_storage_macro(t),
        tess_storage_size(t), (long long)rows, (long long)cols, vec, tpr, rpb, (long long)items, cache, unroll, cluster, row_loop, bulk, bulk_store,
        (int)tess_config_get_or(s, c, "online", 0), (int)tess_config_get_or(s, c, "keep_exp", 0),
        hold,
        (int)tess_config_get_or(s, c, "fast_exp", 0), (int)tess_config_get_or(s, c, "max_sub", 1),
        (int)tess_config_get_or(s, c, "fast_rsqrt", 0));
    if (!tess_rowwise_is_softmax(op)) tess_strbuf_printf(&b, "#define EPS %.9gf\n", tess_rowwise_eps(t));
    tess_strbuf_puts(&b, "\n");
    tess_storage_cuda_put(&b);
    tess_strbuf_puts(&b, "\n");
    tess_strbuf_puts(&b, tess_src_reductions_templates_rowwise_cu);
    st = tess_strbuf_finish(&b, &out->code);
    if (st) return st;
    snprintf(out->options, sizeof out->options, "--minimal");
    st = tess_kernel_source_add_launch(out, entry, (unsigned)blocks, (unsigned)(tpr * rpb), smem);
    if (!st && cluster > 1) out->launch[out->nlaunches - 1].cluster[0] = (unsigned)cluster;
    return st;
}
