/* gen_cpu.c - C/OpenMP code generation for stencil specs.
 *
 * The generated file has: the task's constants; the update at one point
 * (plain, and with wrapped indices for the edges of periodic axes); the
 * fixed-boundary copy; one row of the grid (bands, edges, and the
 * vectorised interior run); the parallel sweep over tiles of rows; and the
 * entry point, which runs `steps` sweeps, alternating buffers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "gen_cpu.h"
#include "gen_util.h"
#include "spec_print.h"

typedef struct cpu_plan {
    const tess_spec *s;
    const tess_task *t;
    int tile_y, tile_z, threads, unroll;
    bool simd, yz_order;
} cpu_plan;

static const char *const order_labels[] = {"zy", "yz"};

/* `omp simd` and `GCC unroll` cannot both precede one loop: unroll only
 * without simd. The user pointer holds the positions of simd and unroll. */
static bool simd_or_unroll(const double *values, void *user) {
    const int *pos = user;
    return values[pos[0]] == 0 || values[pos[1]] == 1;
}

static long next_pow2(int64_t n) {
    long p = 1;
    while (p < n && p < (1L << 20)) p *= 2;
    return p;
}

tess_status tess_stencil_cpu_space(const tess_spec *s, const tess_task *t, const tess_device *dev,
                                   tess_space **out) {
    *out = NULL;
    tess_status st = tess_gen_check_task(s, t);
    if (st) return st;
    tess_space *sp = tess_space_create();
    if (!sp) return tess_error(TESS_ERR_NOMEM, "out of memory creating a space");
    int r = s->rank;
    long ymax = next_pow2(t->shape[r - 2]);
    if (ymax > 512) ymax = 512;
    st = tess_space_add_pow2(sp, "tile_y", 1, ymax, ymax);
    if (!st && r == 3) {
        long zmax = next_pow2(t->shape[0]);
        st = tess_space_add_pow2(sp, "tile_z", 1, zmax > 64 ? 64 : zmax, 1);
        if (!st) st = tess_space_add_labels(sp, "order", 2, order_labels, 0);
    }
    if (!st) st = tess_space_add(sp, "simd", 2, (const double[]){0, 1}, 1);
    /* Thread counts: powers of two below the core count, and the core count. */
    int units = dev && dev->units > 0 ? dev->units : 1;
    double threads[16];
    int nt = 0;
    for (int v = 1; v < units && nt < 15; v *= 2) threads[nt++] = v;
    threads[nt++] = units;
    if (!st) st = tess_space_add(sp, "threads", nt, threads, nt - 1);
    if (!st) st = tess_space_add(sp, "unroll", 4, (const double[]){1, 2, 4, 8}, 0);
    static const int pos3[] = {3, 5}, pos2[] = {1, 3};
    if (!st) st = tess_space_add_constraint(sp, simd_or_unroll, (void *)(r == 3 ? pos3 : pos2), "simd=0 or unroll=1");
    if (st) {
        tess_space_destroy(sp);
        return st;
    }
    *out = sp;
    return TESS_OK;
}

/* ---- expressions ------------------------------------------------------------------ */

typedef struct ref_ctx {
    const tess_spec *s;
    tess_dtype real;
    bool wrap;   /* wrap indices along periodic axes */
} ref_ctx;

static void print_ref(tess_strbuf *b, const tess_expr *e, void *user) {
    const ref_ctx *r = user;
    const tess_spec *s = r->s;
    if (tess_gen_print_named_ref(b, s, e)) return;
    const tess_spec_field *f = &s->field[e->index];
    tess_strbuf_printf(b, "%s[%s(", f->name, f->rank < s->rank ? "IDX2" : "IDX");
    for (int a = s->rank - f->rank; a < s->rank; a++) {
        char var[2] = {tess_spec_axis_name(s->rank, a), '\0'};
        bool wrap = r->wrap && tess_spec_periodic(s, a) && e->off[a] != 0;
        if (a > s->rank - f->rank) tess_strbuf_puts(b, ", ");
        if (wrap) tess_strbuf_puts(b, "WRAP(");
        tess_gen_coord(b, var, e->off[a]);
        if (wrap) tess_strbuf_printf(b, ", N%c)", var[0] - 'a' + 'A');
    }
    tess_strbuf_puts(b, ")]");
}

static void print_number(tess_strbuf *b, double v, void *user) {
    tess_gen_number(b, v, ((const ref_ctx *)user)->real);
}

/* ---- functions of the generated file ---------------------------------------------- */

static void emit_params(tess_strbuf *b, const cpu_plan *p) {
    const tess_spec *s = p->s;
    for (int f = 0; f < s->nfields; f++)
        tess_strbuf_printf(b, "%s%s%s *restrict %s", f ? ", " : "", s->field[f].role == TESS_FIELD_OUT ? "" : "const ",
                         tess_gen_ctype(s, f, p->t->dtype), s->field[f].name);
}

static void emit_args(tess_strbuf *b, const tess_spec *s) {
    for (int f = 0; f < s->nfields; f++) tess_strbuf_printf(b, "%s%s", f ? ", " : "", s->field[f].name);
}

static const char *point_coords(const tess_spec *s) { return s->rank == 3 ? "z, y, x" : "y, x"; }

static void emit_signature(tess_strbuf *b, const cpu_plan *p, const char *name, bool row) {
    const tess_spec *s = p->s;
    tess_strbuf_printf(b, "static inline __attribute__((always_inline)) void %s(", name);
    emit_params(b, p);
    tess_strbuf_puts(b, ",\n    ");
    if (s->rank == 3) tess_strbuf_puts(b, "ptrdiff_t z, ");
    tess_strbuf_puts(b, row ? "ptrdiff_t y)\n{\n" : "ptrdiff_t y, ptrdiff_t x)\n{\n");
}

static void emit_point(tess_strbuf *b, const cpu_plan *p, bool wrap) {
    const tess_spec *s = p->s;
    tess_strbuf_printf(b, "/* The update at one point%s. */\n",
                     wrap ? " near the edge of a periodic axis: indices wrap" : " whose neighbours are all in the grid");
    emit_signature(b, p, wrap ? "tess_point_wrap" : "tess_point", false);
    ref_ctx rc = {s, p->t->dtype, wrap};
    tess_expr_printer pr = {.c_syntax = true, .ref = print_ref, .num = print_number, .user = &rc};
    for (int i = 0; i < s->ninst; i++) {
        int out = -1;
        for (int f = 0; f < s->nfields; f++)
            if (s->out_inst[f] == i) out = f;
        if (out >= 0) {
            tess_strbuf_printf(b, "    %s[IDX(%s)] = ", s->field[out].name, point_coords(s));
        } else {
            char name[64];
            tess_gen_inst_name(s, i, name, sizeof name);
            tess_strbuf_printf(b, "    const real %s = ", name);
        }
        tess_expr_print(b, s->inst[i].expr, &pr);
        tess_strbuf_puts(b, ";\n");
    }
    tess_strbuf_puts(b, "}\n\n");
}

static void emit_fixed(tess_strbuf *b, const cpu_plan *p) {
    const tess_spec *s = p->s;
    tess_strbuf_puts(b, "/* A point on a fixed boundary band: outputs keep the values of the inputs they\n"
                      " * advance (0 for an output that advances none). */\n");
    emit_signature(b, p, "tess_fixed", false);
    for (int f = 0; f < s->nfields; f++) {
        if (s->field[f].role != TESS_FIELD_OUT) continue;
        tess_strbuf_printf(b, "    %s[IDX(%s)] = ", s->field[f].name, point_coords(s));
        if (s->field[f].advances >= 0)
            tess_strbuf_printf(b, "%s[IDX(%s)];\n", s->field[s->field[f].advances].name, point_coords(s));
        else
            tess_strbuf_puts(b, "0;\n");
    }
    tess_strbuf_puts(b, "}\n\n");
}

/* Appends "y < LO_Y || y >= NY - HI_Y" for the outer axes (all but x) that
 * are periodic (or fixed) and have a band; returns how many. */
static int band_test(tess_strbuf *b, const tess_spec *s, bool periodic) {
    int n = 0;
    for (int a = 0; a < s->rank - 1; a++) {
        if (tess_spec_periodic(s, a) != periodic || (s->lo[a] == 0 && s->hi[a] == 0)) continue;
        char v = tess_spec_axis_name(s->rank, a), V = (char)(v - 'a' + 'A');
        tess_strbuf_printf(b, "%s%c < LO_%c || %c >= N%c - HI_%c", n++ ? " || " : "", v, V, v, V, V);
    }
    return n;
}

static void emit_call(tess_strbuf *b, const tess_spec *s, const char *indent, const char *fn) {
    tess_strbuf_printf(b, "%s%s(", indent, fn);
    emit_args(b, s);
    tess_strbuf_printf(b, ", %s);\n", point_coords(s));
}

/* The three runs of a row along x: the low edge, the middle, the high edge.
 * Edges wrap if x is periodic and keep their values if it is fixed. */
static void emit_x_runs(tess_strbuf *b, const cpu_plan *p, const char *ind, const char *middle, bool pragmas) {
    const tess_spec *s = p->s;
    int x = s->rank - 1;
    const char *edge = tess_spec_periodic(s, x) ? "tess_point_wrap" : "tess_fixed";
    char inner[64];
    snprintf(inner, sizeof inner, "%s    ", ind);
    if (s->lo[x] > 0) {
        tess_strbuf_printf(b, "%sfor (ptrdiff_t x = 0; x < LO_X; x++)\n", ind);
        emit_call(b, s, inner, edge);
    }
    if (pragmas && p->simd) tess_strbuf_puts(b, "#pragma omp simd\n");
    if (pragmas && p->unroll > 1) tess_strbuf_printf(b, "#pragma GCC unroll %d\n", p->unroll);
    tess_strbuf_printf(b, "%sfor (ptrdiff_t x = LO_X; x < NX - HI_X; x++)\n", ind);
    emit_call(b, s, inner, middle);
    if (s->hi[x] > 0) {
        tess_strbuf_printf(b, "%sfor (ptrdiff_t x = NX - HI_X > LO_X ? NX - HI_X : LO_X; x < NX; x++)\n", ind);
        emit_call(b, s, inner, edge);
    }
}

static void emit_row(tess_strbuf *b, const cpu_plan *p) {
    const tess_spec *s = p->s;
    tess_strbuf_puts(b, "/* One row of the grid along x. */\n");
    emit_signature(b, p, "tess_row", true);
    for (int periodic = 0; periodic < 2; periodic++) {
        tess_strbuf test = {0};
        if (band_test(&test, s, periodic) == 0) {
            tess_strbuf_free(&test);
            continue;
        }
        tess_strbuf_printf(b, "    %s\n    if (%s) {\n",
                           periodic ? "/* Rows near the edges of periodic axes wrap. */"
                                    : "/* Rows on a fixed boundary band keep their values. */",
                           test.data);
        if (periodic) {
            emit_x_runs(b, p, "        ", "tess_point_wrap", false);
        } else {
            tess_strbuf_puts(b, "        for (ptrdiff_t x = 0; x < NX; x++)\n");
            emit_call(b, s, "            ", "tess_fixed");
        }
        tess_strbuf_puts(b, "        return;\n    }\n");
        tess_strbuf_free(&test);
    }
    emit_x_runs(b, p, "    ", "tess_point", true);
    tess_strbuf_puts(b, "}\n\n");
}

static void emit_sweep(tess_strbuf *b, const cpu_plan *p) {
    const tess_spec *s = p->s;
    tess_strbuf_puts(b, "/* One update of the whole grid, by tiles of rows. */\nstatic void tess_sweep(");
    emit_params(b, p);
    tess_strbuf_puts(b, ")\n{\n");
    if (s->rank == 3) {
        const char *zl = "for (ptrdiff_t zt = 0; zt < NZ; zt += TILE_Z)";
        const char *yl = "for (ptrdiff_t yt = 0; yt < NY; yt += TILE_Y)";
        tess_strbuf_printf(b, "#pragma omp parallel for collapse(2) schedule(static) num_threads(THREADS)\n"
                            "    %s\n        %s\n"
                            "            for (ptrdiff_t z = zt; z < zt + TILE_Z && z < NZ; z++)\n"
                            "                for (ptrdiff_t y = yt; y < yt + TILE_Y && y < NY; y++)\n"
                            "                    tess_row(",
                         p->yz_order ? yl : zl, p->yz_order ? zl : yl);
    } else {
        tess_strbuf_puts(b, "#pragma omp parallel for schedule(static) num_threads(THREADS)\n"
                          "    for (ptrdiff_t yt = 0; yt < NY; yt += TILE_Y)\n"
                          "        for (ptrdiff_t y = yt; y < yt + TILE_Y && y < NY; y++)\n"
                          "            tess_row(");
    }
    emit_args(b, s);
    tess_strbuf_printf(b, ", %s);\n}\n\n", s->rank == 3 ? "z, y" : "y");
}

static void emit_entry(tess_strbuf *b, const cpu_plan *p, const char *entry) {
    const tess_spec *s = p->s;
    tess_dtype real = p->t->dtype;
    tess_strbuf_printf(b, "void %s(void *const *buffers)\n{\n", entry);
    for (int f = 0; f < s->nfields; f++) {
        const char *ty = tess_gen_ctype(s, f, real), *cq = s->field[f].role == TESS_FIELD_OUT ? "" : "const ";
        tess_strbuf_printf(b, "    %s%s *%s = (%s%s *)buffers[%d];\n", cq, ty, s->field[f].name, cq, ty, f);
    }
    if (s->steps == 1) {
        tess_strbuf_puts(b, "    tess_sweep(");
        emit_args(b, s);
        tess_strbuf_puts(b, ");\n}\n");
        return;
    }
    int scratch = s->nfields;
    for (int f = 0; f < s->nfields; f++)
        if (s->field[f].role == TESS_FIELD_OUT)
            tess_strbuf_printf(b, "    %s *%s__tmp = (%s *)buffers[%d];\n", tess_gen_ctype(s, f, real),
                             s->field[f].name, tess_gen_ctype(s, f, real), scratch++);
    tess_strbuf_puts(b, "    /* Steps alternate between each output and its scratch buffer, so that the\n"
                      "     * last step writes the output; each step reads what the previous wrote. */\n"
                      "    for (int step = 0; step < STEPS; step++) {\n");
    for (int f = 0; f < s->nfields; f++) {
        if (s->field[f].role != TESS_FIELD_OUT) continue;
        const char *o = s->field[f].name, *in = s->field[s->field[f].advances].name, *ty = tess_gen_ctype(s, f, real);
        tess_strbuf_printf(b, "        %s *%s__dst = (STEPS - 1 - step) %% 2 == 0 ? %s : %s__tmp;\n", ty, o, o, o);
        tess_strbuf_printf(b, "        const %s *%s__src = step == 0 ? %s : (STEPS - step) %% 2 == 0 ? %s : %s__tmp;\n",
                         ty, in, in, o, o);
    }
    tess_strbuf_puts(b, "        tess_sweep(");
    for (int f = 0; f < s->nfields; f++) {
        bool advanced = false;
        for (int g = 0; g < s->nfields; g++) advanced |= s->field[g].advances == f;
        const char *suffix = s->field[f].role == TESS_FIELD_OUT ? "__dst" : advanced ? "__src" : "";
        tess_strbuf_printf(b, "%s%s%s", f ? ", " : "", s->field[f].name, suffix);
    }
    tess_strbuf_puts(b, ");\n    }\n}\n");
}

tess_status tess_stencil_cpu_emit(const tess_spec *s, const tess_task *t, const tess_space *sp,
                                  const tess_config *c, tess_kernel_source *out) {
    memset(out, 0, sizeof *out);
    tess_status st = tess_gen_check_task(s, t);
    if (st) return st;
    cpu_plan p = {.s = s, .t = t};
    p.tile_y = tess_gen_param(sp, c, "tile_y");
    p.tile_z = s->rank == 3 ? tess_gen_param(sp, c, "tile_z") : 1;
    p.threads = tess_gen_param(sp, c, "threads");
    p.unroll = tess_gen_param(sp, c, "unroll");
    p.simd = tess_gen_param(sp, c, "simd") != 0;
    p.yz_order = strcmp(tess_gen_label(sp, c, "order"), "yz") == 0;
    if (p.tile_y < 1 || p.tile_z < 1 || p.threads < 1 || p.unroll < 1)
        return tess_error(TESS_ERR_ARG, "stencil '%s': the config lacks a cpu tunable", s->name);
    char config[512] = "";
    tess_config_format(sp, c, config, sizeof config);

    tess_strbuf b = {0};
    tess_gen_header(&b, s, t, "cpu (C/OpenMP)", config);
    tess_strbuf_puts(&b, "#include <math.h>\n#include <stddef.h>\n\n");
    tess_gen_prelude(&b, s, t, "static inline");
    tess_strbuf_printf(&b, "/* Tuning. */\n#define TILE_Y %d\n", p.tile_y);
    if (s->rank == 3) tess_strbuf_printf(&b, "#define TILE_Z %d\n", p.tile_z);
    tess_strbuf_printf(&b, "#define THREADS %d\n#define STEPS %d\n\n", p.threads, s->steps);
    if (s->rank == 3)
        tess_strbuf_puts(&b, "#define IDX(z, y, x) (((ptrdiff_t)(z) * NY + (y)) * NX + (x))\n"
                           "#define IDX2(y, x) ((ptrdiff_t)(y) * NX + (x))   /* 2D fields */\n");
    else
        tess_strbuf_puts(&b, "#define IDX(y, x) ((ptrdiff_t)(y) * NX + (x))\n");
    tess_strbuf_puts(&b, "#define WRAP(i, n) ((i) < 0 ? (i) + (n) : (i) >= (n) ? (i) - (n) : (i))\n\n");
    emit_point(&b, &p, false);
    if (s->periodic_xyz) emit_point(&b, &p, true);
    emit_fixed(&b, &p);
    emit_row(&b, &p);
    emit_sweep(&b, &p);
    snprintf(out->launch[0].entry, sizeof out->launch[0].entry, "%s_cpu", s->name);
    emit_entry(&b, &p, out->launch[0].entry);
    out->nlaunches = 1;
    /* Lets select() and min/max vectorise; values are the same as without. */
    snprintf(out->options, sizeof out->options, "-fno-trapping-math");
    return tess_strbuf_finish(&b, &out->code);
}
