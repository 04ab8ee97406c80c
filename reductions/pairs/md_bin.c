/*
 * md_bin.c - cell binning as an operator (md_step.h): the atoms sorted into
 * S^3 cells by a counting sort, with C (serial, stable) and CUDA generators
 * (templates/md_bin.c.in, templates/md_bin.cu). On the GPU an atom's place
 * within its cell comes from an atomic counter, so the order within a cell
 * varies from run to run; verification therefore compares each cell's
 * atoms as a set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "core/result.h"
#include "core/strbuf.h"
#include "md_step.h"

extern const char tess_src_reductions_pairs_templates_md_cell_h[];
extern const char tess_src_reductions_pairs_templates_md_bin_c_in[];
extern const char tess_src_reductions_pairs_templates_md_bin_cu[];

static const tess_attr_spec bin_attrs[] = {
    {"rc", TESS_ATTR_REAL, "2.5", NULL, "cut-off radius (sigma)"},
    {"skin", TESS_ATTR_REAL, "0.3", NULL, "list radius beyond rc; cells are at least rc + skin wide"},
    {"density", TESS_ATTR_REAL, "0.8442", NULL, "atoms per sigma^3 of the verification inputs and default box"},
};

static tess_status bin_check(const tess_op *op, const tess_task *t) {
    (void)op;
    tess_md_params p;
    tess_status st = tess_md_params_get(t, &p);
    if (!st) st = tess_md_check_common(t, 2, &p);
    return st ? st : tess_md_check_cells(&p);
}

static tess_status bin_buffers(const tess_op *op, const tess_task *t, tess_buffer_list *out) {
    (void)op;
    const int64_t n = t->shape[0], s = t->shape[1];
    tess_status st = tess_buffer_list_add(out, "x", TESS_BUF_IN, TESS_F64, 3 * n);
    if (!st) st = tess_buffer_list_add(out, "cells", TESS_BUF_OUT, TESS_I32, s * s * s + 1 + n);
    return st ? st : tess_buffer_list_add(out, "rank", TESS_BUF_SCRATCH, TESS_I32, n);
}

static tess_status bin_fill(const tess_op *op, const tess_task *t, int index, void *host, uint64_t seed) {
    (void)op;
    (void)index;
    tess_md_params p;
    tess_status st = tess_md_params_get(t, &p);
    return st ? st : tess_md_positions(&p, seed, host);
}

static tess_status bin_reference(const tess_op *op, const tess_task *t, void *const *bufs) {
    (void)op;
    tess_md_params p;
    tess_status st = tess_md_params_get(t, &p);
    return st ? st : tess_md_bin_reference(&p, bufs[0], bufs[1]);
}

static int compare_i32(const void *a, const void *b) {
    const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The cell starts exactly; each cell's atoms as a set (the reference's are in increasing order). */
static bool bin_verify(const tess_op *op, const tess_task *t, int b, const void *got_v, const void *want_v,
                       tess_result *res) {
    (void)op;
    const long long n = t->shape[0], s = t->shape[1], ncells = s * s * s;
    const int32_t *got = got_v, *want = want_v;
    if (b != 1) return true;
    for (long long c = 0; c <= ncells; c++)
        if (got[c] != want[c]) {
            tess_result_fail(res, TESS_RESULT_WRONG_RESULT, "cells: cell %lld starts at %d, not %d", c, got[c],
                             want[c]);
            return false;
        }
    int32_t *sorted = malloc((size_t)n * sizeof *sorted);
    if (!sorted) {
        tess_result_fail(res, TESS_RESULT_WRONG_RESULT, "cells: no memory to compare %lld atoms", n);
        return false;
    }
    memcpy(sorted, got + ncells + 1, (size_t)n * sizeof *sorted);
    bool ok = true;
    for (long long c = 0; c < ncells && ok; c++) {
        const int32_t lo = want[c], len = want[c + 1] - want[c];
        qsort(sorted + lo, (size_t)len, sizeof *sorted, compare_i32);
        for (int32_t q = lo; q < lo + len && ok; q++)
            if (sorted[q] != want[ncells + 1 + q]) {
                tess_result_fail(res, TESS_RESULT_WRONG_RESULT, "cells: cell %lld does not hold atom %d", c,
                                 want[ncells + 1 + q]);
                ok = false;
            }
    }
    free(sorted);
    return ok;
}

/* Each atom's position read twice (count and place), its rank written and
 * read, its entry written; the cell starts written, counted and scanned. */
static double bin_bytes(const tess_op *op, const tess_task *t) {
    (void)op;
    const double n = (double)t->shape[0], s = (double)t->shape[1];
    return n * (2 * 24 + 3 * 4) + 3 * 4 * s * s * s;
}

static double bin_flops(const tess_op *op, const tess_task *t) {
    (void)op;
    return 2 * 9.0 * (double)t->shape[0];
}

static double bin_tolerance(const tess_op *op, const tess_task *t) {
    (void)op;
    (void)t;
    return 0.01;   /* what a planted error is scaled by: the verify hook compares exactly */
}

static tess_status bin_source(const tess_task *t, const tess_space *s, const tess_config *c, const char *defines,
                              const char *tpl, tess_kernel_source *out) {
    tess_md_params p;
    tess_status st = tess_md_params_get(t, &p);
    if (st) return st;
    char config[256] = "";
    tess_config_format(s, c, config, sizeof config);
    tess_strbuf b = {0};
    tess_strbuf_printf(&b,
                       "/* md_bin: %lld atoms into %lld^3 cells, generated by tessera.\n * config: %s */\n"
                       "#define N %lldLL\n#define S %lldLL\n#define NCELLS %lldLL\n%s\n",
                       p.n, p.s, config, p.n, p.s, p.s * p.s * p.s, defines);
    tess_strbuf_puts(&b, tess_src_reductions_pairs_templates_md_cell_h);
    tess_strbuf_puts(&b, tpl);
    memset(out, 0, sizeof *out);
    st = tess_strbuf_finish(&b, &out->code);
    return st ? st : tess_kernel_source_add_scalar(out, "box", TESS_SCALAR_F64, p.box);
}

static tess_status bin_cpu_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out) {
    (void)op;
    (void)t;
    (void)dev;
    /* a serial counting sort: nothing to tune but its one form */
    tess_space *s = tess_space_create();
    const double one[] = {1};
    tess_status st = s ? tess_space_add(s, "threads", 1, one, 0) : tess_error(TESS_ERR_NOMEM, "md_bin space");
    if (st) {
        tess_space_destroy(s);
        return st;
    }
    *out = s;
    return TESS_OK;
}

static tess_status bin_cpu_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                                const tess_config *c, tess_kernel_source *out) {
    (void)op;
    (void)dev;
    tess_status st = bin_source(t, s, c, "#include <math.h>\n#define MD_FN static inline\n#define MD_MUL(a, b) ((a) * (b))\n"
                                "#define MD_ADD(a, b) ((a) + (b))\n#define MD_SUB(a, b) ((a) - (b))",
                                tess_src_reductions_pairs_templates_md_bin_c_in, out);
    if (st) return st;
    snprintf(out->options, sizeof out->options, "-ffp-contract=off");
    out->nlaunches = 1;
    strcpy(out->launch[0].entry, "md_bin");
    return TESS_OK;
}

static tess_status bin_cuda_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out) {
    (void)op;
    (void)t;
    (void)dev;
    return tess_md_cuda_block_space(out);
}

static tess_status bin_cuda_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                                 const tess_config *c, tess_kernel_source *out) {
    (void)op;
    (void)dev;
    const int block = (int)tess_config_get(s, c, "block");
    const long long n = t->shape[0], cells = t->shape[1] * t->shape[1] * t->shape[1] + 1;
    char defines[256];
    snprintf(defines, sizeof defines,
             "#define BLOCK %d\n#define MD_FN static __device__ __forceinline__\n#define MD_MUL __dmul_rn\n"
             "#define MD_ADD __dadd_rn\n#define MD_SUB __dsub_rn",
             block);
    tess_status st = bin_source(t, s, c, defines, tess_src_reductions_pairs_templates_md_bin_cu, out);
    if (st) return st;
    snprintf(out->options, sizeof out->options, "--minimal");
    st = tess_kernel_source_add_launch(out, "md_bin_zero", (unsigned)((cells + block - 1) / block), (unsigned)block, 0);
    if (!st) st = tess_kernel_source_add_launch(out, "md_bin_count", (unsigned)((n + block - 1) / block), (unsigned)block, 0);
    if (!st) st = tess_kernel_source_add_launch(out, "md_bin_scan", 1, 1024, 0);
    return st ? st : tess_kernel_source_add_launch(out, "md_bin_place", (unsigned)((n + block - 1) / block), (unsigned)block, 0);
}

static const tess_op_backend bin_impl[] = {
    {.backend = "cpu", .space = bin_cpu_space, .emit = bin_cpu_emit},
    {.backend = "cuda", .space = bin_cuda_space, .emit = bin_cuda_emit},
};

const tess_op tess_op_md_bin = {
    .name = "md_bin",
    .family = "reductions",
    .summary = "atoms sorted into S^3 cells (buffers: x, cells = starts then atoms, rank scratch; scalar box)",
    .default_shape = "32000x11",
    .extents = "N,S",
    .attrs = bin_attrs,
    .nattrs = sizeof bin_attrs / sizeof bin_attrs[0],
    .impl = bin_impl,
    .nimpl = 2,
    .check_task = bin_check,
    .buffers = bin_buffers,
    .fill_input = bin_fill,
    .reference = bin_reference,
    .flops = bin_flops,
    .bytes = bin_bytes,
    .tolerance = bin_tolerance,
    .verify = bin_verify,
};
