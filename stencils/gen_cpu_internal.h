/* gen_cpu_internal.h - what the C/OpenMP generator's files share: the plan
 * of one config and the pieces of the generated file that both the plain
 * sweep (gen_cpu.c) and the time tiles (gen_cpu_tile.c) print. */
#ifndef TESS_GEN_CPU_INTERNAL_H
#define TESS_GEN_CPU_INTERNAL_H

#include "core/op.h"
#include "core/strbuf.h"
#include "spec.h"

typedef struct cpu_plan {
    const tess_spec *s;
    const tess_task *t;
    int tile_y, tile_z, threads, unroll;
    int time_tile;   /* steps fused per pass over the grid; 1 = one sweep per step */
    bool simd, yz_order;
} cpu_plan;

/* The generated functions of one kind of row: the grid's (fields indexed
 * with IDX) or a time tile's (see gen_cpu_tile.c). */
typedef struct cpu_fns {
    const char *point, *point_wrap, *fixed;
    const char *coords;   /* the arguments after the fields: "z, y, x", "yb__, z, y, x" */
    bool tile;
} cpu_fns;

extern const cpu_fns tess_cpu_grid_fns, tess_cpu_tile_fns;

/* "const float *restrict u, float *restrict v": the fields as kernel parameters. */
void tess_cpu_emit_params(tess_strbuf *b, const cpu_plan *p);
/* "u, v": the fields as arguments. */
void tess_cpu_emit_args(tess_strbuf *b, const tess_spec *s);
/* The update at one point (wrap: indices wrap along periodic axes; in a
 * tile, x only) and the boundary copy, for the grid or a tile. */
void tess_cpu_emit_point(tess_strbuf *b, const cpu_plan *p, const cpu_fns *fns, bool wrap);
void tess_cpu_emit_fixed(tess_strbuf *b, const cpu_plan *p, const cpu_fns *fns);
/* A call of a point function fn at (z, y, x), with indent; in a tile, state
 * fields are passed as rings and outputs as rows under the same names. */
void tess_cpu_emit_call(tess_strbuf *b, const tess_spec *s, const cpu_fns *fns, const char *indent, const char *fn);
/* The three runs of a row along x: low edge, interior (with the simd and
 * unroll pragmas), high edge. */
void tess_cpu_emit_x_runs(tess_strbuf *b, const cpu_plan *p, const cpu_fns *fns, const char *ind);
/* Appends "y < LO_Y || y >= NY - HI_Y" for the outer axes (all but x) that
 * are periodic (or fixed) and have a band; returns how many. */
int tess_cpu_band_test(tess_strbuf *b, const tess_spec *s, bool periodic);
/* For pass `i` of `n` (C expressions), each output's destination (f__dst)
 * and its state's source (s__src): passes alternate between the output and
 * its scratch buffer (f__tmp), so that the last pass writes the output and
 * each pass reads what the previous one wrote. */
void tess_cpu_emit_ping_pong(tess_strbuf *b, const tess_spec *s, tess_dtype real, const char *i, const char *n);

/* "void ENTRY(void *const *buffers) {" and the buffers as typed pointers:
 * the fields, then (several steps) each output's scratch buffer f__tmp. */
void tess_cpu_emit_entry_start(tess_strbuf *b, const cpu_plan *p, const char *entry);

/* Time tiling (gen_cpu_tile.c), stencils of several steps: the macros,
 * the tile's point, row and tile functions and the parallel pass, then the
 * entry point that runs the passes. */
void tess_cpu_emit_tiles(tess_strbuf *b, const cpu_plan *p);
void tess_cpu_emit_tiled_entry(tess_strbuf *b, const cpu_plan *p, const char *entry);

#endif
