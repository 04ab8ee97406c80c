/* gen_cpu.c - C/OpenMP code generation for stencil specs.
 *
 * The generated file has: the task's constants; the update at one point
 * (plain, and with wrapped indices for the edges of periodic axes); the
 * fixed-boundary copy; one row of the grid (bands, edges, and the
 * vectorised interior run); the parallel sweep over tiles of rows; and the
 * entry point, which runs `steps` sweeps, alternating buffers. With
 * time_tile > 1, the time tiles of gen_cpu_tile.c come before the entry
 * point, which then runs passes of several steps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "gen_cpu.h"
#include "gen_cpu_internal.h"
#include "gen_util.h"
#include "spec_print.h"

const cpu_fns tess_cpu_grid_fns = {"tess_point", "tess_point_wrap", "tess_fixed", "z, y, x", false};
const cpu_fns tess_cpu_tile_fns = {"tess_tile_point", "tess_tile_point_wrap", "tess_tile_fixed", "yb__, z, y, x", true};

static const char *const order_labels[] = {"zy", "yz"};

/* `omp simd` and `GCC unroll` cannot both precede one loop: unroll only
 * without simd. The user pointer holds the positions of simd and unroll. */
static bool simd_or_unroll(const double *values, void *user) {
    const int *pos = user;
    return values[pos[0]] == 0 || values[pos[1]] == 1;
}


/* A time tile fuses steps along z, whatever the order of the tiles: only
 * zy is listed with time_tile > 1 (positions of order and time_tile). */
static bool order_or_time_tile(const double *values, void *user) {
    (void)user;
    return values[2] == 0 || values[6] == 1;
}

static long next_pow2(int64_t n) {
    long p = 1;
    while (p < n && p < (1L << 20)) p *= 2;
    return p;
}

/* time_tile: 1, then powers of two below the steps and the steps themselves,
 * up to 8. The default fuses up to 4 steps, in 3D in tiles of 32 rows by 64
 * planes (about 0.5 MB of scratch per thread for 256 points along x in f32).
 * with_order: the space has `order` (3D), which time tiles fix to zy. */
static tess_status add_time_tile(tess_space *sp, const tess_spec *s, bool with_order) {
    double v[5];
    int n = 0;
    for (int tt = 1; tt < s->steps && tt <= 8; tt *= 2) v[n++] = tt;
    if (s->steps <= 8) v[n++] = s->steps;
    int dflt = 0;
    while (dflt + 1 < n && v[dflt + 1] <= 4) dflt++;
    tess_status st = tess_space_add(sp, "time_tile", n, v, dflt);
    if (!st && with_order) st = tess_space_add_constraint(sp, order_or_time_tile, NULL, "order=zy or time_tile=1");
    return st;
}

tess_status tess_stencil_cpu_space(const tess_spec *s, const tess_task *t, const tess_device *dev,
                                   tess_space **out) {
    *out = NULL;
    tess_status st = tess_gen_check_task(s, t);
    if (st) return st;
    tess_space *sp = tess_space_create();
    if (!sp) return tess_error(TESS_ERR_NOMEM, "out of memory creating a space");
    int r = s->rank;
    bool tiled = s->steps > 1;
    long ymax = next_pow2(t->shape[r - 2]);
    if (ymax > 512) ymax = 512;
    /* Time tiles: in 3D 32 rows by whole slabs of planes; in 2D bands of 128
     * rows, which recompute 2 * time_tile reaches of rows at their ends. */
    long ydflt = !tiled ? ymax : r == 3 ? 32 : 128;
    st = tess_space_add_pow2(sp, "tile_y", 1, ymax, ymax < ydflt ? ymax : ydflt);
    if (!st && r == 3) {
        long zmax = next_pow2(t->shape[0]);
        if (zmax > 64) zmax = 64;
        st = tess_space_add_pow2(sp, "tile_z", 1, zmax, tiled ? zmax : 1);
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
    if (!st && tiled) st = add_time_tile(sp, s, r == 3);
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
    bool wrap;   /* wrap indices along periodic axes (in a tile, along x only) */
    bool tile;   /* inside a time tile, see gen_cpu_tile.c */
} ref_ctx;

void tess_cpu_emit_ping_pong(tess_strbuf *b, const tess_spec *s, tess_dtype real, const char *i, const char *n) {
    for (int f = 0; f < s->nfields; f++) {
        if (s->field[f].role != TESS_FIELD_OUT) continue;
        const char *o = s->field[f].name, *in = s->field[s->field[f].advances].name, *ty = tess_gen_ctype(s, f, real);
        tess_strbuf_printf(b, "        %s *%s__dst = (%s - 1 - %s) %% 2 == 0 ? %s : %s__tmp;\n", ty, o, n, i, o, o);
        tess_strbuf_printf(b, "        const %s *%s__src = %s == 0 ? %s : (%s - %s) %% 2 == 0 ? %s : %s__tmp;\n", ty, in,
                           i, in, n, i, o, o);
    }
}

/* One index of a field reference. In a tile, z and y may lie beyond the
 * edges of a periodic axis by several periods: they are reduced with MOD. */
static void print_index(tess_strbuf *b, const ref_ctx *r, int a, int off) {
    const tess_spec *s = r->s;
    char var[2] = {tess_spec_axis_name(s->rank, a), '\0'}, N = (char)(var[0] - 'a' + 'A');
    bool periodic = tess_spec_periodic(s, a), x = a == s->rank - 1;
    if (r->tile && periodic && !x) {
        tess_strbuf_puts(b, "MOD(");
        tess_gen_coord(b, var, off);
        tess_strbuf_printf(b, ", N%c)", N);
    } else if (r->wrap && periodic && off != 0 && (x || !r->tile)) {
        tess_strbuf_puts(b, "WRAP(");
        tess_gen_coord(b, var, off);
        tess_strbuf_printf(b, ", N%c)", N);
    } else {
        tess_gen_coord(b, var, off);
    }
}

static void print_ref(tess_strbuf *b, const tess_expr *e, void *user) {
    const ref_ctx *r = user;
    const tess_spec *s = r->s;
    if (tess_gen_print_named_ref(b, s, e)) return;
    const tess_spec_field *f = &s->field[e->index];
    if (r->tile && tess_gen_advancer(s, e->index) >= 0) {
        /* A state field in a tile: plane z + dz (in 2D row y + dy) of the previous level's ring. */
        tess_strbuf_printf(b, "%s[PL(%d)][", f->name, e->off[0]);
        if (s->rank == 3) {
            tess_strbuf_puts(b, "SIDX(");
            tess_gen_coord(b, "y", e->off[1]);
            tess_strbuf_puts(b, ", ");
        }
        print_index(b, r, s->rank - 1, e->off[s->rank - 1]);
        tess_strbuf_puts(b, s->rank == 3 ? ")]" : "]");
        return;
    }
    tess_strbuf_printf(b, "%s[%s(", f->name, f->rank < s->rank ? "IDX2" : "IDX");
    for (int a = s->rank - f->rank; a < s->rank; a++) {
        if (a > s->rank - f->rank) tess_strbuf_puts(b, ", ");
        print_index(b, r, a, e->off[a]);
    }
    tess_strbuf_puts(b, ")]");
}

static void print_number(tess_strbuf *b, double v, void *user) {
    tess_gen_number(b, v, ((const ref_ctx *)user)->real);
}

/* ---- functions of the generated file ---------------------------------------------- */

void tess_cpu_emit_params(tess_strbuf *b, const cpu_plan *p) {
    const tess_spec *s = p->s;
    for (int f = 0; f < s->nfields; f++)
        tess_strbuf_printf(b, "%s%s%s *restrict %s", f ? ", " : "", s->field[f].role == TESS_FIELD_OUT ? "" : "const ",
                         tess_gen_ctype(s, f, p->t->dtype), s->field[f].name);
}

void tess_cpu_emit_args(tess_strbuf *b, const tess_spec *s) {
    for (int f = 0; f < s->nfields; f++) tess_strbuf_printf(b, "%s%s", f ? ", " : "", s->field[f].name);
}

static const char *point_coords(const tess_spec *s) { return s->rank == 3 ? "z, y, x" : "y, x"; }

/* In a tile, a state field is its ring of planes of the previous level and
 * an output is the row the point writes. */
static void emit_signature(tess_strbuf *b, const cpu_plan *p, const cpu_fns *fns, const char *name, bool row) {
    const tess_spec *s = p->s;
    tess_strbuf_printf(b, "static inline __attribute__((always_inline)) void %s(", name);
    if (fns->tile) {
        for (int f = 0; f < s->nfields; f++) {
            const char *ty = tess_gen_ctype(s, f, p->t->dtype), *sep = f ? ", " : "";
            if (s->field[f].role == TESS_FIELD_OUT)
                tess_strbuf_printf(b, "%s%s *restrict %s", sep, ty, s->field[f].name);
            else if (tess_gen_advancer(s, f) >= 0)
                tess_strbuf_printf(b, "%sconst %s *const *%s", sep, ty, s->field[f].name);
            else
                tess_strbuf_printf(b, "%sconst %s *restrict %s", sep, ty, s->field[f].name);
        }
        tess_strbuf_puts(b, s->rank == 3 ? ",\n    ptrdiff_t yb__, " : ",\n    ");
    } else {
        tess_cpu_emit_params(b, p);
        tess_strbuf_puts(b, ",\n    ");
    }
    if (s->rank == 3) tess_strbuf_puts(b, "ptrdiff_t z, ");
    tess_strbuf_puts(b, row ? "ptrdiff_t y)\n{\n" : "ptrdiff_t y, ptrdiff_t x)\n{\n");
    /* A 2D tile's point reads its rings by offset: y only for other fields. */
    if (fns->tile && s->rank == 2 && !row) tess_strbuf_puts(b, "    (void)y;\n");
}

/* Where output f is stored at the point: the grid, or the tile's row. */
static void emit_store(tess_strbuf *b, const tess_spec *s, const cpu_fns *fns, int f) {
    if (fns->tile) tess_strbuf_printf(b, "    %s[x] = ", s->field[f].name);
    else tess_strbuf_printf(b, "    %s[IDX(%s)] = ", s->field[f].name, point_coords(s));
}

void tess_cpu_emit_point(tess_strbuf *b, const cpu_plan *p, const cpu_fns *fns, bool wrap) {
    const tess_spec *s = p->s;
    tess_strbuf_printf(b, "/* The update at one point%s%s. */\n", fns->tile ? " of a time tile" : "",
                     !wrap ? " whose neighbours are all in the grid"
                     : fns->tile ? " near the edge of periodic x: indices wrap"
                     : " near the edge of a periodic axis: indices wrap");
    emit_signature(b, p, fns, wrap ? fns->point_wrap : fns->point, false);
    ref_ctx rc = {s, p->t->dtype, wrap, fns->tile};
    tess_expr_printer pr = {.c_syntax = true, .ref = print_ref, .num = print_number, .user = &rc};
    for (int i = 0; i < s->ninst; i++) {
        int out = tess_gen_inst_output(s, i);
        if (out >= 0) {
            emit_store(b, s, fns, out);
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

void tess_cpu_emit_fixed(tess_strbuf *b, const cpu_plan *p, const cpu_fns *fns) {
    const tess_spec *s = p->s;
    tess_strbuf_puts(b, "/* A point on a fixed boundary band: outputs keep the values of the inputs they\n"
                      " * advance (0 for an output that advances none). */\n");
    emit_signature(b, p, fns, fns->fixed, false);
    for (int f = 0; f < s->nfields; f++) {
        if (s->field[f].role != TESS_FIELD_OUT) continue;
        emit_store(b, s, fns, f);
        const char *in = s->field[f].advances >= 0 ? s->field[s->field[f].advances].name : NULL;
        if (!in) tess_strbuf_puts(b, "0;\n");
        else if (fns->tile) tess_strbuf_printf(b, "%s[PL(0)][%s];\n", in, s->rank == 3 ? "SIDX(y, x)" : "x");
        else tess_strbuf_printf(b, "%s[IDX(%s)];\n", in, point_coords(s));
    }
    tess_strbuf_puts(b, "}\n\n");
}

int tess_cpu_band_test(tess_strbuf *b, const tess_spec *s, bool periodic) {
    int n = 0;
    for (int a = 0; a < s->rank - 1; a++) {
        if (tess_spec_periodic(s, a) != periodic || (s->lo[a] == 0 && s->hi[a] == 0)) continue;
        char v = tess_spec_axis_name(s->rank, a), V = (char)(v - 'a' + 'A');
        tess_strbuf_printf(b, "%s%c < LO_%c || %c >= N%c - HI_%c", n++ ? " || " : "", v, V, v, V, V);
    }
    return n;
}

void tess_cpu_emit_call(tess_strbuf *b, const tess_spec *s, const cpu_fns *fns, const char *indent, const char *fn) {
    tess_strbuf_printf(b, "%s%s(", indent, fn);
    tess_cpu_emit_args(b, s);
    tess_strbuf_printf(b, ", %s);\n", s->rank == 3 ? fns->coords : "y, x");
}

/* Edges wrap if x is periodic and keep their values if it is fixed. */
static void emit_runs(tess_strbuf *b, const cpu_plan *p, const cpu_fns *fns, const char *ind, const char *middle,
                      bool pragmas) {
    const tess_spec *s = p->s;
    int x = s->rank - 1;
    const char *edge = tess_spec_periodic(s, x) ? fns->point_wrap : fns->fixed;
    char inner[64];
    snprintf(inner, sizeof inner, "%s    ", ind);
    if (s->lo[x] > 0) {
        tess_strbuf_printf(b, "%sfor (ptrdiff_t x = 0; x < LO_X; x++)\n", ind);
        tess_cpu_emit_call(b, s, fns, inner, edge);
    }
    if (pragmas && p->simd) tess_strbuf_puts(b, "#pragma omp simd\n");
    if (pragmas && p->unroll > 1) tess_strbuf_printf(b, "#pragma GCC unroll %d\n", p->unroll);
    tess_strbuf_printf(b, "%sfor (ptrdiff_t x = LO_X; x < NX - HI_X; x++)\n", ind);
    tess_cpu_emit_call(b, s, fns, inner, middle);
    if (s->hi[x] > 0) {
        tess_strbuf_printf(b, "%sfor (ptrdiff_t x = NX - HI_X > LO_X ? NX - HI_X : LO_X; x < NX; x++)\n", ind);
        tess_cpu_emit_call(b, s, fns, inner, edge);
    }
}

void tess_cpu_emit_x_runs(tess_strbuf *b, const cpu_plan *p, const cpu_fns *fns, const char *ind) {
    emit_runs(b, p, fns, ind, fns->point, true);
}

static void emit_row(tess_strbuf *b, const cpu_plan *p) {
    const tess_spec *s = p->s;
    const cpu_fns *fns = &tess_cpu_grid_fns;
    tess_strbuf_puts(b, "/* One row of the grid along x. */\n");
    emit_signature(b, p, fns, "tess_row", true);
    for (int periodic = 0; periodic < 2; periodic++) {
        tess_strbuf test = {0};
        if (tess_cpu_band_test(&test, s, periodic) == 0) {
            tess_strbuf_free(&test);
            continue;
        }
        tess_strbuf_printf(b, "    %s\n    if (%s) {\n",
                           periodic ? "/* Rows near the edges of periodic axes wrap. */"
                                    : "/* Rows on a fixed boundary band keep their values. */",
                           test.data);
        if (periodic) {
            emit_runs(b, p, fns, "        ", fns->point_wrap, false);
        } else {
            tess_strbuf_puts(b, "        for (ptrdiff_t x = 0; x < NX; x++)\n");
            tess_cpu_emit_call(b, s, fns, "            ", fns->fixed);
        }
        tess_strbuf_puts(b, "        return;\n    }\n");
        tess_strbuf_free(&test);
    }
    tess_cpu_emit_x_runs(b, p, fns, "    ");
    tess_strbuf_puts(b, "}\n\n");
}

static void emit_sweep(tess_strbuf *b, const cpu_plan *p) {
    const tess_spec *s = p->s;
    tess_strbuf_puts(b, "/* One update of the whole grid, by tiles of rows. */\nstatic void tess_sweep(");
    tess_cpu_emit_params(b, p);
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
    tess_cpu_emit_args(b, s);
    tess_strbuf_printf(b, ", %s);\n}\n\n", s->rank == 3 ? "z, y" : "y");
}

void tess_cpu_emit_entry_start(tess_strbuf *b, const cpu_plan *p, const char *entry) {
    const tess_spec *s = p->s;
    tess_dtype real = p->t->dtype;
    tess_strbuf_printf(b, "void %s(void *const *buffers)\n{\n", entry);
    for (int f = 0; f < s->nfields; f++) {
        const char *ty = tess_gen_ctype(s, f, real), *cq = s->field[f].role == TESS_FIELD_OUT ? "" : "const ";
        tess_strbuf_printf(b, "    %s%s *%s = (%s%s *)buffers[%d];\n", cq, ty, s->field[f].name, cq, ty, f);
    }
    int scratch = s->nfields;
    for (int f = 0; s->steps > 1 && f < s->nfields; f++)
        if (s->field[f].role == TESS_FIELD_OUT)
            tess_strbuf_printf(b, "    %s *%s__tmp = (%s *)buffers[%d];\n", tess_gen_ctype(s, f, real),
                               s->field[f].name, tess_gen_ctype(s, f, real), scratch++);
}

static void emit_entry(tess_strbuf *b, const cpu_plan *p, const char *entry) {
    const tess_spec *s = p->s;
    tess_dtype real = p->t->dtype;
    tess_cpu_emit_entry_start(b, p, entry);
    if (s->steps == 1) {
        tess_strbuf_puts(b, "    tess_sweep(");
        tess_cpu_emit_args(b, s);
        tess_strbuf_puts(b, ");\n}\n");
        return;
    }
    tess_strbuf_puts(b, "    /* Steps alternate between each output and its scratch buffer, so that the\n"
                      "     * last step writes the output; each step reads what the previous wrote. */\n"
                      "    for (int step = 0; step < STEPS; step++) {\n");
    tess_cpu_emit_ping_pong(b, s, real, "step", "STEPS");
    tess_strbuf_puts(b, "        tess_sweep(");
    for (int f = 0; f < s->nfields; f++) {
        const char *suffix = s->field[f].role == TESS_FIELD_OUT ? "__dst" : tess_gen_advancer(s, f) >= 0 ? "__src" : "";
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
    p.time_tile = tess_space_param_index(sp, "time_tile") >= 0 ? tess_gen_param(sp, c, "time_tile") : 1;
    if (p.tile_y < 1 || p.tile_z < 1 || p.threads < 1 || p.unroll < 1 || p.time_tile < 1)
        return tess_error(TESS_ERR_ARG, "stencil '%s': the config lacks a cpu tunable", s->name);
    if (p.time_tile > s->steps)
        return tess_error(TESS_ERR_ARG, "stencil '%s': time_tile %d needs a stencil of as many steps",
                          s->name, p.time_tile);
    char config[512] = "";
    tess_config_format(sp, c, config, sizeof config);

    tess_strbuf b = {0};
    tess_gen_header(&b, s, t, "cpu (C/OpenMP)", config);
    tess_strbuf_puts(&b, "#include <math.h>\n#include <stddef.h>\n");
    if (p.time_tile > 1) tess_strbuf_puts(&b, "#include <stdlib.h>\n#include <string.h>\n#include <omp.h>\n");
    tess_strbuf_puts(&b, "\n");
    tess_gen_prelude(&b, s, t, "static inline", false);
    tess_strbuf_printf(&b, "/* Tuning. */\n#define TILE_Y %d\n", p.tile_y);
    if (s->rank == 3) tess_strbuf_printf(&b, "#define TILE_Z %d\n", p.tile_z);
    tess_strbuf_printf(&b, "#define THREADS %d\n#define STEPS %d\n", p.threads, s->steps);
    if (p.time_tile > 1) tess_strbuf_printf(&b, "#define TIME_TILE %d\n", p.time_tile);
    tess_strbuf_puts(&b, "\n");
    if (s->rank == 3)
        tess_strbuf_puts(&b, "#define IDX(z, y, x) (((ptrdiff_t)(z) * NY + (y)) * NX + (x))\n"
                           "#define IDX2(y, x) ((ptrdiff_t)(y) * NX + (x))   /* 2D fields */\n");
    else
        tess_strbuf_puts(&b, "#define IDX(y, x) ((ptrdiff_t)(y) * NX + (x))\n");
    tess_strbuf_puts(&b, "#define WRAP(i, n) ((i) < 0 ? (i) + (n) : (i) >= (n) ? (i) - (n) : (i))\n\n");
    const cpu_fns *grid = &tess_cpu_grid_fns;
    tess_cpu_emit_point(&b, &p, grid, false);
    if (s->periodic_xyz) tess_cpu_emit_point(&b, &p, grid, true);
    tess_cpu_emit_fixed(&b, &p, grid);
    emit_row(&b, &p);
    emit_sweep(&b, &p);
    snprintf(out->launch[0].entry, sizeof out->launch[0].entry, "%s_cpu", s->name);
    if (p.time_tile > 1) {
        tess_cpu_emit_tiles(&b, &p);
        tess_cpu_emit_tiled_entry(&b, &p, out->launch[0].entry);
    } else {
        emit_entry(&b, &p, out->launch[0].entry);
    }
    out->nlaunches = 1;
    /* Lets select() and min/max vectorise; values are the same as without. */
    snprintf(out->options, sizeof out->options, "-fno-trapping-math");
    return tess_strbuf_finish(&b, &out->code);
}
