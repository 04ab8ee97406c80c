/* gen_cpu_tile.c - temporal tiling in the C/OpenMP generator: stencils of
 * several steps run TIME_TILE steps per pass over the grid.
 *
 * The scheme, overlapped in y and pipelined in z. A tile owns TILE_Z planes
 * by TILE_Y rows (whole rows along x). For a pass of n steps, level k of
 * the tile (0 = the input, n = the output) must hold the planes and rows
 * that the n - k steps after it read: the tile widened by (n - k) times the
 * reach on each side; rows beyond the tile are computed again by the
 * neighbouring tile, planes beyond it only at the ends of the slab. A thread
 * walks up the slab: at iteration i, level 0 loads plane i of the input,
 * level k computes plane i - k*HI_Z from the planes of level k - 1, and
 * level n writes its plane to the output. Each level below n keeps a ring of
 * LO_Z + HI_Z + 1 planes in the thread's scratch, which is what stays in
 * cache between steps: TIME_TILE * RING planes of SY rows per state field.
 *
 * Boundaries. On a fixed axis a level's range stops at the grid's edges and
 * band points copy the level below, as in the grid. On a periodic axis
 * coordinates run past the edges (virtual planes and rows, possibly several
 * periods away in a small grid): the scratch holds them like any other, and
 * only reads from the grid (level 0, coefficients) reduce them with MOD. x
 * is never tiled, so periodic x wraps at the edges of a row as in the grid.
 *
 * In 2D the same scheme runs one axis down: a tile is a band of TILE_Y whole
 * rows, pipelined along y, each level keeping a ring of LO_Y + HI_Y + 1 rows;
 * neighbouring bands recompute only the rows at their ends.
 *
 * Without scratch (malloc fails) the entry point runs one sweep per step. */
#include <stdio.h>
#include "gen_cpu_internal.h"
#include "gen_util.h"

static bool is_state(const tess_spec *s, int f) { return tess_gen_advancer(s, f) >= 0; }

static void emit_macros(tess_strbuf *b, const tess_spec *s) {
    if (s->rank == 2) {
        tess_strbuf_puts(b,
            "/* ---- Time tiles: TIME_TILE steps per pass, pipelined in y. ----\n"
            " * A tile owns TILE_Y rows. In a pass of n__ steps, level k__ of a tile (0 the\n"
            " * input, n__ the output) covers the tile widened by n__ - k__ reaches on each\n"
            " * side. A thread walks down its rows: at iteration i__ level k__ computes row\n"
            " * i__ - k__*HI_Y from level k__ - 1 (level 1 from the grid's rows), and level n__\n"
            " * writes to the grid. Levels 1 .. n__ - 1 keep rings of RING rows in the thread's\n"
            " * scratch. Along periodic y rows run past the edges and GRID_ROW wraps them; along\n"
            " * fixed y it clamps them (only band rows, which copy their own, read those). */\n"
            "#define RING (LO_Y + HI_Y + 1)                     /* rows a level keeps */\n"
            "#define SCRATCH ((TIME_TILE - 1) * RING * (ptrdiff_t)NX)   /* a thread's, per state field */\n"
            "#define MOD(i, n) ((((i) % (n)) + (n)) % (n))\n"
            "#define SLOT(k, y) (((k) - 1) * RING * (ptrdiff_t)NX + MOD(y, RING) * (ptrdiff_t)NX)   /* row y of level k >= 1 */\n"
            "#define PL(dy) (LO_Y + (dy))                       /* row y + dy of a ring */\n");
        if (tess_spec_periodic(s, 0)) tess_strbuf_puts(b, "#define GRID_ROW(y) MOD(y, NY)\n\n");
        else tess_strbuf_puts(b, "#define GRID_ROW(y) ((y) < 0 ? 0 : (y) >= NY ? NY - 1 : (y))\n\n");
        return;
    }
    tess_strbuf_puts(b,
        "/* ---- Time tiles: TIME_TILE steps per pass, overlapped in y and pipelined in z. ----\n"
        " * A tile owns TILE_Z planes by TILE_Y rows. In a pass of n__ steps, level k__ of a\n"
        " * tile (0 the input, n__ the output) covers the tile widened by n__ - k__ reaches on\n"
        " * each side. A thread walks up its planes: at iteration i__ level 0 loads plane i__,\n"
        " * level k__ computes plane i__ - k__*HI_Z from level k__ - 1, and level n__ writes to\n"
        " * the grid. Levels below n__ keep rings of RING planes in the thread's scratch. Along\n"
        " * periodic axes planes and rows run past the edges; reads from the grid use MOD. */\n"
        "#define RING (LO_Z + HI_Z + 1)                     /* planes a level keeps */\n"
        "#define SY (TILE_Y + TIME_TILE * (LO_Y + HI_Y))    /* rows of a scratch plane */\n"
        "#define PLANE ((ptrdiff_t)SY * NX)\n"
        "#define SCRATCH (TIME_TILE * RING * PLANE)         /* a thread's, per state field */\n"
        "#define MOD(i, n) ((((i) % (n)) + (n)) % (n))\n"
        "#define SLOT(k, z) (((k) * RING + MOD(z, RING)) * PLANE)   /* plane z of level k */\n"
        "#define PL(dz) (LO_Z + (dz))                       /* plane z + dz of a ring */\n"
        "#define SIDX(y, x) (((y) - yb__) * NX + (x))       /* rows of scratch planes start at yb__ */\n\n");
}

/* Arguments of a tile row: state fields as rings (f__v), outputs as rows (f__r). */
static void emit_row_args(tess_strbuf *b, const tess_spec *s) {
    for (int f = 0; f < s->nfields; f++)
        tess_strbuf_printf(b, "%s%s%s", f ? ", " : "", s->field[f].name,
                           s->field[f].role == TESS_FIELD_OUT ? "__r" : is_state(s, f) ? "__v" : "");
}

static void emit_row(tess_strbuf *b, const cpu_plan *p) {
    const tess_spec *s = p->s;
    const cpu_fns *fns = &tess_cpu_tile_fns;
    tess_strbuf_puts(b, "/* One row of a level: plane z, row y, from the rings of the level below. */\n"
                        "static inline __attribute__((always_inline)) void tess_tile_row(");
    for (int f = 0; f < s->nfields; f++) {
        const char *ty = tess_gen_ctype(s, f, p->t->dtype), *sep = f ? ", " : "";
        if (s->field[f].role == TESS_FIELD_OUT) tess_strbuf_printf(b, "%s%s *restrict %s", sep, ty, s->field[f].name);
        else if (is_state(s, f)) tess_strbuf_printf(b, "%sconst %s *const *%s", sep, ty, s->field[f].name);
        else tess_strbuf_printf(b, "%sconst %s *restrict %s", sep, ty, s->field[f].name);
    }
    tess_strbuf_puts(b, s->rank == 3 ? ",\n    ptrdiff_t yb__, ptrdiff_t z, ptrdiff_t y)\n{\n" : ",\n    ptrdiff_t y)\n{\n");
    tess_strbuf test = {0};
    if (tess_cpu_band_test(&test, s, false) > 0) {
        tess_strbuf_printf(b, "    /* Rows on a fixed boundary band keep their values. */\n    if (%s) {\n"
                              "        for (ptrdiff_t x = 0; x < NX; x++)\n", test.data);
        tess_cpu_emit_call(b, s, fns, "            ", fns->fixed);
        tess_strbuf_puts(b, "        return;\n    }\n");
    }
    tess_strbuf_free(&test);
    tess_cpu_emit_x_runs(b, p, fns, "    ");
    tess_strbuf_puts(b, "}\n\n");
}

/* Clamps a level's range to the grid along a fixed axis (Z or Y). */
static void emit_clamp(tess_strbuf *b, const tess_spec *s, int axis, const char *lo, const char *hi) {
    if (tess_spec_periodic(s, axis)) return;
    char N = (char)(tess_spec_axis_name(s->rank, axis) - 'a' + 'A');
    tess_strbuf_printf(b, "            if (%s < 0) %s = 0;\n            if (%s > N%c) %s = N%c;\n", lo, lo, hi, N, hi, N);
}

/* The fields, then each state field's scratch (f__s). */
static void emit_tile_params(tess_strbuf *b, const cpu_plan *p) {
    const tess_spec *s = p->s;
    tess_cpu_emit_params(b, p);
    for (int f = 0; f < s->nfields; f++)
        if (is_state(s, f))
            tess_strbuf_printf(b, ", %s *restrict %s__s", tess_gen_ctype(s, f, p->t->dtype), s->field[f].name);
}

static void emit_tile(tess_strbuf *b, const cpu_plan *p) {
    const tess_spec *s = p->s;
    tess_dtype real = p->t->dtype;
    bool pz = tess_spec_periodic(s, 0), py = tess_spec_periodic(s, 1);
    tess_strbuf_puts(b, "/* One time tile: n__ steps (n__ <= TIME_TILE) of planes z0__ .. z1__ - 1 and rows\n"
                        " * y0__ .. y1__ - 1. f__s is this thread's scratch for state field f. */\nstatic void tess_tile(");
    emit_tile_params(b, p);
    tess_strbuf_puts(b, ",\n    ptrdiff_t z0__, ptrdiff_t z1__, ptrdiff_t y0__, ptrdiff_t y1__, int n__)\n{\n"
                        "    const ptrdiff_t yb__ = y0__ - TIME_TILE * LO_Y;   /* row 0 of a scratch plane */\n"
                        "    for (ptrdiff_t i__ = z0__ - n__ * LO_Z; i__ < z1__ + n__ * HI_Z; i__++)\n"
                        "        for (int k__ = 0; k__ <= n__; k__++) {\n"
                        "            const ptrdiff_t z = i__ - k__ * HI_Z;\n"
                        "            ptrdiff_t zlo__ = z0__ - (n__ - k__) * LO_Z, zhi__ = z1__ + (n__ - k__) * HI_Z;\n"
                        "            ptrdiff_t ylo__ = y0__ - (n__ - k__) * LO_Y, yhi__ = y1__ + (n__ - k__) * HI_Y;\n");
    emit_clamp(b, s, 0, "zlo__", "zhi__");
    emit_clamp(b, s, 1, "ylo__", "yhi__");
    tess_strbuf_puts(b, "            if (z < zlo__ || z >= zhi__) continue;\n"
                        "            if (k__ == 0) {   /* load the input's rows */\n"
                        "                for (ptrdiff_t y = ylo__; y < yhi__; y++) {\n");
    for (int f = 0; f < s->nfields; f++) {
        if (!is_state(s, f)) continue;
        const char *u = s->field[f].name;
        tess_strbuf_printf(b, "                    memcpy(%s__s + SLOT(0, z) + SIDX(y, 0), %s + IDX(%s, %s, 0), "
                              "NX * sizeof *%s);\n",
                           u, u, pz ? "MOD(z, NZ)" : "z", py ? "MOD(y, NY)" : "y", u);
    }
    tess_strbuf_puts(b, "                }\n                continue;\n            }\n");
    for (int f = 0; f < s->nfields; f++) {
        if (!is_state(s, f)) continue;
        const char *u = s->field[f].name;
        tess_strbuf_printf(b, "            const %s *%s__v[RING];   /* planes z - LO_Z .. z + HI_Z of level k__ - 1 */\n"
                              "            for (int d__ = 0; d__ < RING; d__++) %s__v[d__] = %s__s + SLOT(k__ - 1, z + d__ - LO_Z);\n",
                           tess_gen_ctype(s, f, real), u, u, u);
    }
    tess_strbuf_puts(b, "            for (ptrdiff_t y = ylo__; y < yhi__; y++) {\n");
    for (int f = 0; f < s->nfields; f++) {
        if (s->field[f].role != TESS_FIELD_OUT) continue;
        const char *o = s->field[f].name, *in = s->field[s->field[f].advances].name;
        tess_strbuf_printf(b, "                %s *%s__r = k__ == n__ ? %s + IDX(z, y, 0) : %s__s + SLOT(k__, z) + SIDX(y, 0);\n",
                           tess_gen_ctype(s, f, real), o, o, in);
    }
    tess_strbuf_puts(b, "                tess_tile_row(");
    emit_row_args(b, s);
    tess_strbuf_puts(b, ", yb__, z, y);\n            }\n        }\n}\n\n");
}

/* 2D: one band of rows, pipelined along y. */
static void emit_tile2(tess_strbuf *b, const cpu_plan *p) {
    const tess_spec *s = p->s;
    tess_dtype real = p->t->dtype;
    tess_strbuf_puts(b, "/* One time tile: n__ steps (n__ <= TIME_TILE) of rows y0__ .. y1__ - 1. f__s is\n"
                        " * this thread's scratch for state field f. */\nstatic void tess_tile(");
    emit_tile_params(b, p);
    tess_strbuf_puts(b, ",\n    ptrdiff_t y0__, ptrdiff_t y1__, int n__)\n{\n"
                        "    for (ptrdiff_t i__ = y0__ - n__ * LO_Y; i__ < y1__ + n__ * HI_Y; i__++)\n"
                        "        for (int k__ = 1; k__ <= n__; k__++) {\n"
                        "            const ptrdiff_t y = i__ - k__ * HI_Y;\n"
                        "            ptrdiff_t ylo__ = y0__ - (n__ - k__) * LO_Y, yhi__ = y1__ + (n__ - k__) * HI_Y;\n");
    emit_clamp(b, s, 0, "ylo__", "yhi__");
    tess_strbuf_puts(b, "            if (y < ylo__ || y >= yhi__) continue;\n");
    for (int f = 0; f < s->nfields; f++) {
        if (!is_state(s, f)) continue;
        const char *u = s->field[f].name;
        tess_strbuf_printf(b, "            const %s *%s__v[RING];   /* rows y - LO_Y .. y + HI_Y of level k__ - 1 */\n"
                              "            for (int d__ = 0; d__ < RING; d__++)\n"
                              "                %s__v[d__] = k__ == 1 ? %s + IDX(GRID_ROW(y + d__ - LO_Y), 0) : %s__s + SLOT(k__ - 1, y + d__ - LO_Y);\n",
                           tess_gen_ctype(s, f, real), u, u, u, u);
    }
    for (int f = 0; f < s->nfields; f++) {
        if (s->field[f].role != TESS_FIELD_OUT) continue;
        const char *o = s->field[f].name, *in = s->field[s->field[f].advances].name;
        tess_strbuf_printf(b, "            %s *%s__r = k__ == n__ ? %s + IDX(y, 0) : %s__s + SLOT(k__, y);\n",
                           tess_gen_ctype(s, f, real), o, o, in);
    }
    tess_strbuf_puts(b, "            tess_tile_row(");
    emit_row_args(b, s);
    tess_strbuf_puts(b, ", y);\n        }\n}\n\n");
}

static void emit_pass(tess_strbuf *b, const cpu_plan *p) {
    const tess_spec *s = p->s;
    tess_strbuf_puts(b, "/* n__ steps (n__ <= TIME_TILE) over the whole grid, by time tiles. */\nstatic void tess_pass(");
    tess_cpu_emit_params(b, p);
    for (int f = 0; f < s->nfields; f++)
        if (is_state(s, f)) tess_strbuf_printf(b, ", %s *%s__s", tess_gen_ctype(s, f, p->t->dtype), s->field[f].name);
    tess_strbuf_puts(b, ", int n__)\n{\n");
    if (s->rank == 3)
        tess_strbuf_puts(b, "#pragma omp parallel for collapse(2) schedule(static) num_threads(THREADS)\n"
                            "    for (ptrdiff_t zt = 0; zt < NZ; zt += TILE_Z)\n"
                            "        for (ptrdiff_t yt = 0; yt < NY; yt += TILE_Y)\n"
                            "            tess_tile(");
    else
        tess_strbuf_puts(b, "#pragma omp parallel for schedule(static) num_threads(THREADS)\n"
                            "    for (ptrdiff_t yt = 0; yt < NY; yt += TILE_Y)\n"
                            "        tess_tile(");
    tess_cpu_emit_args(b, s);
    for (int f = 0; f < s->nfields; f++)
        if (is_state(s, f)) tess_strbuf_printf(b, ", %s__s + omp_get_thread_num() * SCRATCH", s->field[f].name);
    if (s->rank == 3)
        tess_strbuf_puts(b, ",\n                      zt, zt + TILE_Z < NZ ? zt + TILE_Z : NZ, "
                            "yt, yt + TILE_Y < NY ? yt + TILE_Y : NY, n__);\n}\n\n");
    else
        tess_strbuf_puts(b, ",\n                  yt, yt + TILE_Y < NY ? yt + TILE_Y : NY, n__);\n}\n\n");
}

void tess_cpu_emit_tiles(tess_strbuf *b, const cpu_plan *p) {
    const tess_spec *s = p->s;
    const cpu_fns *fns = &tess_cpu_tile_fns;
    emit_macros(b, s);
    tess_cpu_emit_point(b, p, fns, false);
    if (tess_spec_periodic(s, s->rank - 1)) tess_cpu_emit_point(b, p, fns, true);
    tess_cpu_emit_fixed(b, p, fns);
    emit_row(b, p);
    if (s->rank == 3) emit_tile(b, p);
    else emit_tile2(b, p);
    emit_pass(b, p);
}

void tess_cpu_emit_tiled_entry(tess_strbuf *b, const cpu_plan *p, const char *entry) {
    const tess_spec *s = p->s;
    tess_dtype real = p->t->dtype;
    tess_cpu_emit_entry_start(b, p, entry);
    tess_strbuf_puts(b, "    /* The time tiles' scratch, for every thread; without it, one step per pass. */\n");
    for (int f = 0; f < s->nfields; f++)
        if (is_state(s, f))
            tess_strbuf_printf(b, "    %s *%s__s = malloc(sizeof *%s__s * THREADS * SCRATCH);\n",
                               tess_gen_ctype(s, f, real), s->field[f].name, s->field[f].name);
    tess_strbuf_puts(b, "    const int tt__ = ");
    for (int f = 0, n = 0; f < s->nfields; f++)
        if (is_state(s, f)) tess_strbuf_printf(b, "%s%s__s", n++ ? " && " : "", s->field[f].name);
    tess_strbuf_puts(b, " ? TIME_TILE : 1;\n"
                        "    const int passes__ = (STEPS + tt__ - 1) / tt__;\n"
                        "    /* Passes alternate between each output and its scratch buffer, so that the\n"
                        "     * last pass writes the output; each pass reads what the previous wrote. */\n"
                        "    for (int pass__ = 0; pass__ < passes__; pass__++) {\n"
                        "        const int n__ = STEPS - pass__ * tt__ < tt__ ? STEPS - pass__ * tt__ : tt__;\n");
    tess_cpu_emit_ping_pong(b, s, real, "pass__", "passes__");
    tess_strbuf args = {0};
    for (int f = 0; f < s->nfields; f++) {
        const char *suffix = s->field[f].role == TESS_FIELD_OUT ? "__dst" : is_state(s, f) ? "__src" : "";
        tess_strbuf_printf(&args, "%s%s%s", f ? ", " : "", s->field[f].name, suffix);
    }
    tess_strbuf_printf(b, "        if (n__ == 1)\n            tess_sweep(%s);\n        else\n            tess_pass(%s",
                       args.data, args.data);
    tess_strbuf_free(&args);
    for (int f = 0; f < s->nfields; f++)
        if (is_state(s, f)) tess_strbuf_printf(b, ", %s__s", s->field[f].name);
    tess_strbuf_puts(b, ", n__);\n    }\n");
    for (int f = 0; f < s->nfields; f++)
        if (is_state(s, f)) tess_strbuf_printf(b, "    free(%s__s);\n", s->field[f].name);
    tess_strbuf_puts(b, "}\n");
}
