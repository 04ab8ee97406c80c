/*
 * md_list.c - the Verlet neighbour list as an operator (md_step.h): each
 * atom's neighbours within rc + skin from its own and the 26 surrounding
 * cells (md_bin's output), in the order the cells list them, with C/OpenMP
 * and CUDA generators (templates/md_list.c.in, templates/md_list.cu: tpp
 * threads share an atom's candidates). Entries past an atom's count are
 * left unwritten, so verification compares the listed ones only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "core/result.h"
#include "core/strbuf.h"
#include "md_step.h"

extern const char tess_src_reductions_pairs_templates_md_cell_h[];
extern const char tess_src_reductions_pairs_templates_md_list_c_in[];
extern const char tess_src_reductions_pairs_templates_md_list_cu[];

enum { B_X, B_CELLS, B_LIST, B_X0, B_MOST };

static const tess_attr_spec list_attrs[] = {
    {"rc", TESS_ATTR_REAL, "2.5", NULL, "cut-off radius (sigma)"},
    {"skin", TESS_ATTR_REAL, "0.3", NULL, "list radius beyond rc"},
    {"layout", TESS_ATTR_WORD, "rows", "rows,cols", "neighbour list: a row per atom, or transposed"},
    {"density", TESS_ATTR_REAL, "0.8442", NULL, "atoms per sigma^3 of the verification inputs and default box"},
};

static tess_status list_check(const tess_op *op, const tess_task *t) {
    (void)op;
    tess_md_params p;
    tess_status st = tess_md_params_get(t, &p);
    if (!st) st = tess_md_check_common(t, 3, &p);
    if (!st && p.m < 1) st = tess_error(TESS_ERR_ARG, "md_list: a list width M of at least 1");
    return st ? st : tess_md_check_cells(&p);
}

static tess_status list_buffers(const tess_op *op, const tess_task *t, tess_buffer_list *out) {
    (void)op;
    const int64_t n = t->shape[0], m = t->shape[1], s = t->shape[2];
    tess_status st = tess_buffer_list_add(out, "x", TESS_BUF_IN, TESS_F64, 3 * n);
    if (!st) st = tess_buffer_list_add(out, "cells", TESS_BUF_IN, TESS_I32, s * s * s + 1 + n);
    if (!st) st = tess_buffer_list_add(out, "list", TESS_BUF_OUT, TESS_I32, n + n * m);
    if (!st) st = tess_buffer_list_add(out, "x0", TESS_BUF_OUT, TESS_F64, 3 * n);
    return st ? st : tess_buffer_list_add(out, "most", TESS_BUF_OUT, TESS_I32, 1);
}

/* Positions from the instance's seed and their cells (problem.c seeds buffer i with base * 1000003 + i). */
static tess_status list_fill(const tess_op *op, const tess_task *t, int index, void *host, uint64_t seed) {
    (void)op;
    tess_md_params p;
    tess_status st = tess_md_params_get(t, &p);
    if (st) return st;
    if (index == B_X) return tess_md_positions(&p, seed, host);
    double *x = malloc((size_t)p.n * 3 * sizeof *x);
    if (!x) return tess_error(TESS_ERR_NOMEM, "md_list: positions of %lld atoms", p.n);
    st = tess_md_positions(&p, seed - (uint64_t)index, x);
    if (!st) st = tess_md_bin_reference(&p, x, host);
    free(x);
    return st;
}

static tess_status list_reference(const tess_op *op, const tess_task *t, void *const *bufs) {
    (void)op;
    tess_md_params p;
    tess_status st = tess_md_params_get(t, &p);
    if (st) return st;
    tess_md_list_reference(&p, bufs[B_X], bufs[B_CELLS], bufs[B_LIST], bufs[B_MOST]);
    memcpy(bufs[B_X0], bufs[B_X], (size_t)p.n * 3 * sizeof(double));
    return TESS_OK;
}

static bool same_i32(const int32_t *got, const int32_t *want, long long at, const char *what, tess_result *res) {
    if (got[at] == want[at]) return true;
    tess_result_fail(res, TESS_RESULT_WRONG_RESULT, "%s: element %lld is %d, not %d", what, at, got[at], want[at]);
    return false;
}

/* Exact: the counts and listed entries, the copy of x and the largest count. */
static bool list_verify(const tess_op *op, const tess_task *t, int b, const void *got, const void *want,
                        tess_result *res) {
    (void)op;
    tess_md_params p;
    if (tess_md_params_get(t, &p)) return false;
    if (b == B_X0) {
        const double *g = got, *w = want;
        for (long long e = 0; e < 3 * p.n; e++)
            if (g[e] != w[e]) {
                tess_result_fail(res, TESS_RESULT_WRONG_RESULT, "x0: element %lld is %.17g, not %.17g", e, g[e], w[e]);
                return false;
            }
        return true;
    }
    if (b == B_MOST) return same_i32(got, want, 0, "most", res);
    if (b != B_LIST) return true;
    const int32_t *g = got, *w = want;
    for (long long i = 0; i < p.n; i++) {
        if (!same_i32(g, w, i, "list (count)", res)) return false;
        for (long long k = 0; k < w[i]; k++)
            if (!same_i32(g, w, p.n + (p.cols ? k * p.n + i : i * p.m + k), "list (neighbour)", res)) return false;
    }
    return true;
}

/* Candidates of 27 cells of the mean occupancy each, their positions from cache. */
static double candidates(const tess_md_params *p) {
    const double cells = p->s == 1 ? 1 : 27, per_cell = (double)p->n / (double)(p->s * p->s * p->s);
    return cells * per_cell;
}

static double list_flops(const tess_op *op, const tess_task *t) {
    (void)op;
    tess_md_params p;
    if (tess_md_params_get(t, &p)) return 0;
    return 9 * (double)p.n * candidates(&p);
}

/* Each atom's position and cell entries read, its count, x0 and the mean
 * number within rc + skin of entries written. */
static double list_bytes(const tess_op *op, const tess_task *t) {
    (void)op;
    tess_md_params p;
    if (tess_md_params_get(t, &p)) return 0;
    const double rl = p.rc + p.skin, mean = 4.0 / 3.0 * 3.14159265358979 * rl * rl * rl * p.density;
    return (double)p.n * (24 + 4 + 4 + 24 + 4 * (mean < (double)p.m ? mean : (double)p.m));
}

static tess_status list_source(const tess_task *t, const tess_space *s, const tess_config *c, const char *defines,
                               const char *tpl, tess_kernel_source *out) {
    tess_md_params p;
    tess_status st = tess_md_params_get(t, &p);
    if (st) return st;
    char config[256] = "";
    tess_config_format(s, c, config, sizeof config);
    const double rl = p.rc + p.skin;
    tess_strbuf b = {0};
    tess_strbuf_printf(&b,
                       "/* md_list: the Verlet lists of %lld atoms within %g, width %lld (%s), from %lld^3 cells,\n"
                       " * generated by tessera. config: %s */\n"
                       "#define N %lldLL\n#define M %lldLL\n#define S %lldLL\n#define NCELLS %lldLL\n"
                       "#define REACH %d\n#define RL2 %.17g\n#define ENTRY(i, k) (N + %s)\n%s\n",
                       p.n, rl, p.m, p.cols ? "cols" : "rows", p.s, config, p.n, p.m, p.s, p.s * p.s * p.s,
                       p.s == 1 ? 0 : 1, rl * rl, p.cols ? "(k) * N + (i)" : "(i) * M + (k)", defines);
    tess_strbuf_puts(&b, tess_src_reductions_pairs_templates_md_cell_h);
    tess_strbuf_puts(&b, tpl);
    memset(out, 0, sizeof *out);
    st = tess_strbuf_finish(&b, &out->code);
    return st ? st : tess_kernel_source_add_scalar(out, "box", TESS_SCALAR_F64, p.box);
}

static tess_status list_cpu_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out) {
    (void)op;
    (void)t;
    return tess_md_cpu_threads_space(dev, out);
}

static tess_status list_cpu_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                                 const tess_config *c, tess_kernel_source *out) {
    (void)op;
    (void)dev;
    char defines[256];
    snprintf(defines, sizeof defines, "#define THREADS %d\n" TESS_MD_C_ROUNDING, (int)tess_config_get(s, c, "threads"));
    tess_status st = list_source(t, s, c, defines, tess_src_reductions_pairs_templates_md_list_c_in, out);
    if (!st) tess_md_cpu_launch(out, "md_list");
    return st;
}

/* Threads per block, and threads per atom sharing its candidates (dividing a warp). */
static tess_status list_cuda_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out) {
    (void)op;
    (void)t;
    (void)dev;
    const double tpp[] = {1, 2, 4, 8, 16, 32};
    *out = NULL;
    tess_status st = tess_md_cuda_block_space(out);
    if (!st) st = tess_space_add(*out, "tpp", 6, tpp, 3);
    if (st && *out) {
        tess_space_destroy(*out);
        *out = NULL;
    }
    return st;
}

static tess_status list_cuda_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                                  const tess_config *c, tess_kernel_source *out) {
    (void)op;
    (void)dev;
    const int block = (int)tess_config_get(s, c, "block"), tpp = (int)tess_config_get(s, c, "tpp");
    char defines[256];
    snprintf(defines, sizeof defines, "#define BLOCK %d\n#define TPP %d\n" TESS_MD_CUDA_ROUNDING, block, tpp);
    tess_status st = list_source(t, s, c, defines, tess_src_reductions_pairs_templates_md_list_cu, out);
    if (st) return st;
    snprintf(out->options, sizeof out->options, "--minimal");
    st = tess_kernel_source_add_launch(out, "md_list_zero", 1, 32, 0);
    const long long grid = (t->shape[0] * tpp + block - 1) / block;
    return st ? st : tess_kernel_source_add_launch(out, "md_list", (unsigned)grid, (unsigned)block, 0);
}

static const tess_op_backend list_impl[] = {
    {.backend = "cpu", .space = list_cpu_space, .emit = list_cpu_emit},
    {.backend = "cuda", .space = list_cuda_space, .emit = list_cuda_emit},
};

const tess_op tess_op_md_list = {
    .name = "md_list",
    .family = "reductions",
    .summary = "Verlet lists from cells (buffers: x, cells, list = counts then neighbours, x0, most; scalar box)",
    .default_shape = "32000x128x11",
    .extents = "N,M,S",
    .attrs = list_attrs,
    .nattrs = sizeof list_attrs / sizeof list_attrs[0],
    .impl = list_impl,
    .nimpl = 2,
    .check_task = list_check,
    .buffers = list_buffers,
    .fill_input = list_fill,
    .reference = list_reference,
    .flops = list_flops,
    .bytes = list_bytes,
    .tolerance = tess_md_exact_tolerance,
    .verify = list_verify,
};
