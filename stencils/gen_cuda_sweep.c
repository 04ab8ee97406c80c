/* gen_cuda_sweep.c - the CUDA sweep of one step.
 *
 * A thread updates PY consecutive rows of PX vectors of VEC points each; the
 * vectors of a row lie BX*VEC points apart, so a warp's loads and stores of
 * one vector are contiguous. For each vector the thread loads register
 * windows: the rows and vector columns around its points that the update
 * reads, with aligned vector loads. The update then reads constant entries
 * of the windows, and a value that two of the thread's points share (a
 * neighbour, or an intermediate such as hdiff's lap[0,0,1] and lap) is loaded
 * and computed once: the compiler folds the copies.
 *
 * Windows come from global memory (through the read-only cache) or, with
 * staging=shared, from a tile of the plane in shared memory. With streaming
 * (3D) a block walks up a chunk of z and each field read along its own
 * column keeps its values at the thread's points in a register queue, one
 * new plane per step; the queue's centre plane also fills the tile's
 * interior, so only the halo comes from memory. The tile is double
 * buffered: one barrier per plane. The windows of 2D fields (coefficients
 * that do not change along z) are loaded once, before the walk, and kept in
 * registers for all its planes.
 *
 * Loads that may leave the grid wrap on periodic axes and clamp on fixed
 * ones (whole vectors: the extent along x is a multiple of VEC); values so
 * clamped are only read by boundary points, which copy their input. */
#include <stdio.h>
#include <string.h>
#include "gen_cuda_internal.h"
#include "gen_util.h"
#include "spec_print.h"

/* ---- where values come from ------------------------------------------------------ */

static void scan_uses(const tess_spec *s, const tess_expr *e, tess_cuda_use *use) {
    for (int i = 0; i < e->nargs; i++) scan_uses(s, e->arg[i], use);
    if (e->kind != TESS_EXPR_REF || e->ref != TESS_REF_FIELD) return;
    tess_cuda_use *u = &use[e->index];
    int r = s->rank, dz = r == 3 ? e->off[0] : 0;
    bool centre_column = e->off[r - 1] == 0 && e->off[r - 2] == 0;
    if (dz == 0 && !centre_column) u->plane = true;
    if (!centre_column) {
        if (!u->offcol || dz < u->ozlo) u->ozlo = dz;
        if (!u->offcol || dz > u->ozhi) u->ozhi = dz;
        u->offcol = true;
    }
    if (centre_column) {
        u->centre = true;
        if (dz != 0) u->column = true;
        if (dz < u->zlo) u->zlo = dz;
        if (dz > u->zhi) u->zhi = dz;
    }
}

void tess_cuda_uses(const tess_spec *s, tess_cuda_use use[TESS_SPEC_MAX_FIELDS]) {
    memset(use, 0, TESS_SPEC_MAX_FIELDS * sizeof *use);
    for (int i = 0; i < s->ninst; i++) scan_uses(s, s->inst[i].expr, use);
}

bool tess_cuda_in_ring(const tess_spec *s, const tess_cuda_use use[TESS_SPEC_MAX_FIELDS], int f) {
    return s->rank == 3 && s->field[f].rank == 3 && use[f].offcol;
}

void tess_cuda_ring_reach(const tess_spec *s, const tess_cuda_use use[TESS_SPEC_MAX_FIELDS], int *lo, int *hi) {
    *lo = *hi = 0;
    for (int f = 0; f < s->nfields; f++) {
        if (!tess_cuda_in_ring(s, use, f)) continue;
        if (-use[f].ozlo > *lo) *lo = -use[f].ozlo;
        if (use[f].ozhi > *hi) *hi = use[f].ozhi;
        if (use[f].centre && use[f].zhi > *hi) *hi = use[f].zhi;
    }
}

typedef enum { SRC_QUEUE, SRC_TILE, SRC_GLOBAL } source;

static int ref_dz(const tess_spec *s, int f, const int *off) {
    return s->rank == 3 && s->field[f].rank == 3 ? off[0] : 0;
}

/* A 2D field of a streaming sweep: its windows are loaded before the walk up z. */
static bool hoisted(const tess_cuda_plan *p, int f) { return p->stream && p->s->field[f].rank == 2 && !p->coef_tile[f]; }

static source ref_source(const tess_cuda_plan *p, int f, const int *off) {
    int r = p->s->rank;
    if (p->queue[f] && off[r - 1] == 0 && off[r - 2] == 0 && !(p->centre_in_window[f] && ref_dz(p->s, f, off) == 0))
        return SRC_QUEUE;
    if (p->coef_tile[f] || (p->staged[f] && (p->async || ref_dz(p->s, f, off) == 0))) return SRC_TILE;
    return SRC_GLOBAL;
}

static void mark_window(tess_cuda_plan *p, int f, const int *off) {
    int at = ref_dz(p->s, f, off) + TESS_CUDA_MAX_DZ;
    switch (ref_source(p, f, off)) {
    case SRC_QUEUE: break;
    case SRC_TILE: p->twin[f][at] = true; break;
    case SRC_GLOBAL: p->gwin[f][at] = true; break;
    }
}

static void mark_windows(tess_cuda_plan *p, const tess_expr *e) {
    for (int i = 0; i < e->nargs; i++) mark_windows(p, e->arg[i]);
    if (e->kind == TESS_EXPR_REF && e->ref == TESS_REF_FIELD) mark_window(p, e->index, e->off);
}

/* The input a band point copies: the field an output advances, at the centre. */
static const int centre[TESS_SPEC_MAX_RANK] = {0};

/* Some intermediate is computed at an offset from the point: a thread then
 * computes it for its neighbours too, which it shares with its own points. */
static bool offset_intermediates(const tess_spec *s) {
    for (int i = 0; i < s->ninst; i++) {
        if (tess_gen_inst_output(s, i) >= 0) continue;
        for (int a = 0; a < s->rank; a++)
            if (s->inst[i].off[a] != 0) return true;
    }
    return false;
}

void tess_cuda_plan_sources(tess_cuda_plan *p) {
    const tess_spec *s = p->s;
    tess_cuda_use use[TESS_SPEC_MAX_FIELDS];
    tess_cuda_uses(s, use);
    bool shared_work = offset_intermediates(s);
    for (int f = 0; f < s->nfields; f++) p->centre_in_window[f] = p->queue[f] && use[f].plane && shared_work;
    memset(p->gwin, 0, sizeof p->gwin);
    memset(p->twin, 0, sizeof p->twin);
    for (int i = 0; i < s->ninst; i++) mark_windows(p, s->inst[i].expr);
    for (int f = 0; f < s->nfields; f++) {
        int src = s->field[f].advances;
        if (s->field[f].role == TESS_FIELD_OUT && src >= 0) mark_window(p, src, centre);
    }
}

/* ---- references ----------------------------------------------------------------- */

static void dz_suffix(tess_strbuf *b, int dz) {
    if (dz == 0) tess_strbuf_puts(b, "0");
    else tess_strbuf_printf(b, "z%c%d", dz > 0 ? 'p' : 'm', dz > 0 ? dz : -dz);
}

static void print_field(tess_strbuf *b, const tess_cuda_plan *p, int f, const int *off) {
    const tess_spec *s = p->s;
    int r = s->rank, dz = ref_dz(s, f, off);
    const char *name = s->field[f].name;
    switch (ref_source(p, f, off)) {
    case SRC_QUEUE:
        tess_strbuf_printf(b, "%s__q_", name);
        dz_suffix(b, dz);
        tess_strbuf_puts(b, "[i__][j__][v__]");
        return;
    case SRC_TILE:
        tess_strbuf_printf(b, "%s__w_", name);
        dz_suffix(b, dz);
        tess_strbuf_puts(b, "[");
        break;
    case SRC_GLOBAL:
        tess_strbuf_printf(b, "%s__g_", name);
        dz_suffix(b, dz);
        tess_strbuf_puts(b, hoisted(p, f) ? "[i__][" : "[");
        break;
    }
    tess_gen_coord(b, "j__ + LO_Y", off[r - 2]);
    tess_strbuf_puts(b, "][");
    tess_gen_coord(b, "v__ + PADX", off[r - 1]);
    tess_strbuf_puts(b, "]");
}

static void print_ref(tess_strbuf *b, const tess_expr *e, void *user) {
    const tess_cuda_plan *p = user;
    if (!tess_gen_print_named_ref(b, p->s, e)) print_field(b, p, e->index, e->off);
}

/* "AT(z + dz, off)" in 3D (the plane wrapped or clamped off the centre), "off"
 * in 2D and for 2D fields. */
static void print_at(tess_strbuf *b, const tess_cuda_plan *p, int f, const char *z, int dz, const char *off) {
    if (p->s->rank != 3 || p->s->field[f].rank != 3) {
        tess_strbuf_puts(b, off);
        return;
    }
    tess_strbuf_puts(b, dz ? "AT(SAFE_Z(" : "AT(");
    tess_gen_coord(b, z, dz);
    tess_strbuf_printf(b, "%s, %s)", dz ? ")" : "", off);
}

/* ---- pieces of the sweep ------------------------------------------------------------ */

/* A queue topped up from the ring (staging=async) loads no plane ahead: its
 * top plane comes from shared memory once the ring holds it. */
static bool ring_fed(const tess_cuda_plan *p, int f) { return p->async && p->staged[f] && p->queue[f]; }

static int queue_top(const tess_cuda_plan *p, int f) { return p->qhi[f] + !ring_fed(p, f); }

#define LOOP_IJ "#pragma unroll\n%sfor (int i__ = 0; i__ < PX; i__++)\n#pragma unroll\n%s    for (int j__ = 0; j__ < PY; j__++)\n"
#define LOOP_IJ_K "#pragma unroll\n%sfor (int i__ = 0; i__ < PX; i__++)\n#pragma unroll\n%s    for (int r__ = 0; r__ < WIN_H; r__++)\n" \
                  "#pragma unroll\n%s        for (int k__ = 0; k__ < WIN_W / VEC; k__++)\n"

static void emit_queue_decls(tess_strbuf *b, const tess_cuda_plan *p) {
    const tess_spec *s = p->s;
    for (int f = 0; f < s->nfields; f++) {
        if (!p->queue[f]) continue;
        if (ring_fed(p, f))
            tess_strbuf_printf(b, "    /* Register queue: %s at planes z%+d .. z%+d of the thread's points, the top\n"
                                  "     * one from the ring. */\n    %s",
                               s->field[f].name, p->qlo[f], p->qhi[f], tess_gen_ctype(s, f, p->t->dtype));
        else
            tess_strbuf_printf(b, "    /* Register queue: %s at planes z%+d .. z%+d of the thread's points, and z%+d,\n"
                                  "     * loaded one plane ahead. */\n    %s",
                               s->field[f].name, p->qlo[f], p->qhi[f], p->qhi[f] + 1, tess_gen_ctype(s, f, p->t->dtype));
        for (int dz = p->qlo[f]; dz <= queue_top(p, f); dz++) {
            tess_strbuf_printf(b, "%s%s__q_", dz > p->qlo[f] ? ", " : " ", s->field[f].name);
            dz_suffix(b, dz);
            tess_strbuf_puts(b, "[PX][PY][VEC]");
        }
        tess_strbuf_puts(b, ";\n");
    }
}

static void emit_queue_load(tess_strbuf *b, const tess_cuda_plan *p, int f, int dz, const char *z, const char *ind) {
    const char *name = p->s->field[f].name;
    tess_strbuf_printf(b, "%s" LOOP_IJ "%s        tess_ldg(%s__q_", ind, ind, ind, ind, name);
    dz_suffix(b, dz);
    tess_strbuf_printf(b, "[i__][j__], &%s[", name);
    print_at(b, p, f, z, dz, "own__[i__][j__]");
    tess_strbuf_puts(b, "]);\n");
}

static void emit_queue_shift(tess_strbuf *b, const tess_cuda_plan *p) {
    const tess_spec *s = p->s;
    bool any = false;
    for (int f = 0; f < s->nfields; f++) {
        if (!p->queue[f] || queue_top(p, f) == p->qlo[f]) continue;
        if (!any) tess_strbuf_puts(b, "        /* Move the queues up one plane. */\n");
        any = true;
        tess_strbuf_printf(b, "        " LOOP_IJ "#pragma unroll\n                for (int v__ = 0; v__ < VEC; v__++) {\n",
                           "        ", "        ");
        for (int dz = p->qlo[f]; dz < queue_top(p, f); dz++) {
            tess_strbuf_printf(b, "                    %s__q_", s->field[f].name);
            dz_suffix(b, dz);
            tess_strbuf_printf(b, "[i__][j__][v__] = %s__q_", s->field[f].name);
            dz_suffix(b, dz + 1);
            tess_strbuf_puts(b, "[i__][j__][v__];\n");
        }
        tess_strbuf_puts(b, "                }\n");
    }
}

/* Precomputed in-plane offsets: the thread's vectors, window rows and
 * columns, the halo points it stages. None changes with z. */
static void emit_offsets(tess_strbuf *b, const tess_cuda_plan *p, bool any_gwin) {
    tess_strbuf_puts(b, "    /* In-plane offsets of the thread's vectors, made loadable. */\n    idx_t own__[PX][PY];\n");
    tess_strbuf_printf(b, "    " LOOP_IJ "            own__[i__][j__] = (idx_t)SAFE_Y(Y0 + j__) * NX + SAFEV_X(X0 + i__ * (BX * VEC));\n",
                       "    ", "    ");
    if (any_gwin)
        tess_strbuf_puts(b, "    /* Rows and vector columns of the windows from global memory, made loadable. */\n"
                            "    int wy__[WIN_H], wx__[PX][WIN_W / VEC];\n"
                            "#pragma unroll\n    for (int r__ = 0; r__ < WIN_H; r__++) wy__[r__] = SAFE_Y(Y0 - LO_Y + r__);\n"
                            "#pragma unroll\n    for (int i__ = 0; i__ < PX; i__++)\n"
                            "#pragma unroll\n        for (int k__ = 0; k__ < WIN_W / VEC; k__++)\n"
                            "            wx__[i__][k__] = SAFEV_X(X0 + i__ * (BX * VEC) - PADX + k__ * VEC);\n");
    if (!p->shared) return;
    tess_strbuf_puts(b, "    /* Origin of the block's tile, halo included. */\n"
                        "    const int TX0 = blockIdx.x * TXV - PADX, TY0 = blockIdx.y * TY - LO_Y;\n");
    if (p->async) {
        tess_strbuf_puts(b, "    /* The tile's vectors this thread copies, row by row: offset in the tile (-1\n"
                            "     * past its end) and in the plane. */\n"
                            "    int cs__[COPIES_PER_THREAD];\n    idx_t cg__[COPIES_PER_THREAD];\n"
                            "#pragma unroll\n    for (int c__ = 0; c__ < COPIES_PER_THREAD; c__++) {\n"
                            "        const int u__ = threadIdx.y * BX + threadIdx.x + c__ * (BX * BY);\n"
                            "        const int r__ = u__ / (TILE_W / VEC), k__ = u__ % (TILE_W / VEC);\n"
                            "        cs__[c__] = u__ < COPIES ? r__ * TILE_W + k__ * VEC : -1;\n"
                            "        cg__[c__] = (idx_t)SAFE_Y(TY0 + r__) * NX + SAFEV_X(TX0 + k__ * VEC);\n"
                            "    }\n");
        return;
    }
    tess_strbuf_puts(b, "    /* The tile's halo points this thread stages: the bands above and below the\n"
                        "     * block's rows, then the columns left and right of them; -1 past the end. */\n"
                        "    int hs__[HALO_PER_THREAD];\n    idx_t hg__[HALO_PER_THREAD];\n"
                        "#pragma unroll\n    for (int h__ = 0; h__ < HALO_PER_THREAD; h__++) {\n"
                        "        const int t__ = threadIdx.y * BX + threadIdx.x + h__ * (BX * BY);\n"
                        "        int r__ = 0, c__ = 0;\n");
    /* A band or the columns may be empty (no reach along y or x). */
    const tess_spec *s = p->s;
    bool rows = s->lo[s->rank - 2] + s->hi[s->rank - 2] > 0, cols = p->padx + p->padr > 0;
    if (rows)
        tess_strbuf_printf(b, "        if (t__ < (LO_Y + HI_Y) * TILE_W) {\n"
                              "            r__ = t__ / TILE_W;\n            c__ = t__ %% TILE_W;\n"
                              "            if (r__ >= LO_Y) r__ += TY;\n        }%s", cols ? " else {\n" : "\n");
    if (cols)
        tess_strbuf_printf(b, "%s            const int e__ = t__ - (LO_Y + HI_Y) * TILE_W;\n"
                              "            r__ = LO_Y + e__ / (TILE_W - TXV);\n            c__ = e__ %% (TILE_W - TXV);\n"
                              "            if (c__ >= PADX) c__ += TXV;\n%s",
                           rows ? "" : "        {\n", "        }\n");
    tess_strbuf_puts(b,                         "        hs__[h__] = t__ < HALO ? r__ * TILE_W + c__ : -1;\n"
                        "        hg__[h__] = (idx_t)SAFE_Y(TY0 + r__) * NX + SAFE_X(TX0 + c__);\n"
                        "    }\n");
}

/* Where the thread's vector (i__, j__) lies in a shared tile of the plane. */
#define OWN_IN_TILE "[LO_Y + threadIdx.y * PY + j__][PADX + (threadIdx.x + i__ * BX) * VEC]"

/* Stages plane z of the staged fields: the thread's own vectors, from the
 * queue where the field has one, then its halo points. */
static void emit_stage(tess_strbuf *b, const tess_cuda_plan *p, const char *ind) {
    const tess_spec *s = p->s;
    for (int f = 0; f < s->nfields; f++) {
        if (!p->staged[f]) continue;
        const char *name = s->field[f].name;
        tess_strbuf_printf(b, "%s/* Plane z of %s into the tile: the thread's vectors, then its halo points. */\n", ind, name);
        tess_strbuf_printf(b, "%s" LOOP_IJ "%s    {\n", ind, ind, ind, ind);
        tess_strbuf_printf(b, "%s        %s *const d__ = &%s__s[b__]" OWN_IN_TILE ";\n",
                           ind, tess_gen_ctype(s, f, p->t->dtype), name);
        if (p->queue[f]) {
            tess_strbuf_printf(b, "%s        tess_sts(d__, %s__q_0[i__][j__]);\n", ind, name);
        } else {
            tess_strbuf_printf(b, "%s        %s t__[VEC];\n%s        tess_ldg(t__, &%s[", ind, tess_gen_ctype(s, f, p->t->dtype),
                               ind, name);
            print_at(b, p, f, "z", 0, "own__[i__][j__]");
            tess_strbuf_printf(b, "]);\n%s        tess_sts(d__, t__);\n", ind);
        }
        tess_strbuf_printf(b, "%s    }\n%s#pragma unroll\n%sfor (int h__ = 0; h__ < HALO_PER_THREAD; h__++)\n", ind, ind, ind);
        if (!p->stream) {
            tess_strbuf_printf(b, "%s    if (hs__[h__] >= 0) (&%s__s[b__][0][0])[hs__[h__]] = __ldg(&%s[", ind, name, name);
            print_at(b, p, f, "z", 0, "hg__[h__]");
            tess_strbuf_puts(b, "]);\n");
            continue;
        }
        tess_strbuf_printf(b, "%s    if (hs__[h__] >= 0) {\n%s        (&%s__s[b__][0][0])[hs__[h__]] = %s__h[h__];\n"
                              "%s        %s__h[h__] = __ldg(&%s[", ind, ind, name, name, ind, name, name);
        print_at(b, p, f, "z", 1, "hg__[h__]");
        tess_strbuf_printf(b, "]);   /* the next plane's */\n%s    }\n", ind);
    }
    tess_strbuf_printf(b, "%s__syncthreads();\n", ind);
}

/* "T name__X_dz[WIN_H][WIN_W];" and the loops over its rows and vector
 * columns, up to the load's first argument "&name__X_dz". */
static void emit_window_open(tess_strbuf *b, const char *ind, const char *type, const char *name, char kind, int dz,
                             const char *load) {
    tess_strbuf_printf(b, "%s%s %s__%c_", ind, type, name, kind);
    dz_suffix(b, dz);
    tess_strbuf_printf(b, "[WIN_H][WIN_W];\n%s#pragma unroll\n%sfor (int r__ = 0; r__ < WIN_H; r__++)\n%s#pragma unroll\n"
                          "%s    for (int k__ = 0; k__ < WIN_W / VEC; k__++)\n%s        %s(&%s__%c_",
                       ind, ind, ind, ind, ind, load, name, kind);
    dz_suffix(b, dz);
}

/* Register windows around the thread's vector i__: from the shared tile of
 * each plane read there (w), from global memory (g). */
static void emit_windows(tess_strbuf *b, const tess_cuda_plan *p, const char *ind) {
    const tess_spec *s = p->s;
    for (int f = 0; f < s->nfields; f++) {
        const char *name = s->field[f].name, *type = tess_gen_ctype(s, f, p->t->dtype);
        for (int dz = -TESS_CUDA_MAX_DZ; dz <= TESS_CUDA_MAX_DZ; dz++) {
            if (!p->twin[f][dz + TESS_CUDA_MAX_DZ]) continue;
            char slot[32] = "b__";
            if (p->coef_tile[f]) snprintf(slot, sizeof slot, "0");
            else if (p->async) snprintf(slot, sizeof slot, "RING_SLOT(%d)", p->ring_lo + dz);
            emit_window_open(b, ind, type, name, 'w', dz, "tess_lds");
            tess_strbuf_printf(b, "[r__][k__ * VEC], &%s__s[%s][threadIdx.y * PY + r__][(threadIdx.x + i__ * BX + k__) * VEC]);\n",
                               name, slot);
        }
        for (int dz = -TESS_CUDA_MAX_DZ; dz <= TESS_CUDA_MAX_DZ; dz++) {
            if (!p->gwin[f][dz + TESS_CUDA_MAX_DZ] || hoisted(p, f)) continue;
            emit_window_open(b, ind, type, name, 'g', dz, "tess_ldg");
            tess_strbuf_printf(b, "[r__][k__ * VEC], &%s[", name);
            print_at(b, p, f, "z", dz, "(idx_t)wy__[r__] * NX + wx__[i__][k__]");
            tess_strbuf_puts(b, "]);\n");
        }
    }
}

/* The windows of the 2D fields around each of the thread's vectors, before
 * the walk up z: registers that every plane reads. */
static void emit_hoisted_windows(tess_strbuf *b, const tess_cuda_plan *p) {
    const tess_spec *s = p->s;
    for (int f = 0; f < s->nfields; f++) {
        if (!hoisted(p, f) || !p->gwin[f][TESS_CUDA_MAX_DZ]) continue;
        const char *name = s->field[f].name;
        tess_strbuf_printf(b, "    /* Windows of %s, a 2D field: loaded once for every plane. */\n"
                              "    %s %s__g_0[PX][WIN_H][WIN_W];\n"
                              "    " LOOP_IJ_K "                tess_ldg(&%s__g_0[i__][r__][k__ * VEC], "
                              "&%s[(idx_t)wy__[r__] * NX + wx__[i__][k__]]);\n",
                           name, tess_gen_ctype(s, f, p->t->dtype), name, "    ", "    ", "    ", name, name);
    }
}

/* coefs=shared: the tiles of the 2D fields around the block, loaded once
 * by all its threads; every plane's windows read them. */
static void emit_coef_tiles(tess_strbuf *b, const tess_cuda_plan *p) {
    const tess_spec *s = p->s;
    bool any = false;
    for (int f = 0; f < s->nfields; f++) any |= p->coef_tile[f];
    if (!any) return;
    tess_strbuf_puts(b, "    /* Tiles of the 2D fields around the block, loaded once for every plane. */\n");
    for (int f = 0; f < s->nfields; f++)
        if (p->coef_tile[f])
            tess_strbuf_printf(b, "    __shared__ __align__(16) %s %s__s[1][TILE_H][TILE_W];\n", tess_gen_ctype(s, f, p->t->dtype),
                               s->field[f].name);
    tess_strbuf_puts(b, "    {\n        const int cx0__ = blockIdx.x * TXV - PADX, cy0__ = blockIdx.y * TY - LO_Y;\n"
                        "        for (int c__ = threadIdx.y * BX + threadIdx.x; c__ < TILE_H * (TILE_W / VEC); c__ += BX * BY) {\n"
                        "            const int r__ = c__ / (TILE_W / VEC), k__ = c__ % (TILE_W / VEC);\n"
                        "            const idx_t g__ = (idx_t)SAFE_Y(cy0__ + r__) * NX + SAFEV_X(cx0__ + k__ * VEC);\n");
    for (int f = 0; f < s->nfields; f++) {
        if (!p->coef_tile[f]) continue;
        const char *name = s->field[f].name;
        tess_strbuf_printf(b, "            {\n                %s t__[VEC];\n                tess_ldg(t__, &%s[g__]);\n"
                              "                tess_sts(&%s__s[0][r__][k__ * VEC], t__);\n            }\n",
                           tess_gen_ctype(s, f, p->t->dtype), name, name);
    }
    tess_strbuf_puts(b, "        }\n    }\n    __syncthreads();\n");
}

/* The update of the thread's points, one vector at a time. */
static void emit_points(tess_strbuf *b, const tess_cuda_plan *p, const char *ind) {
    const tess_spec *s = p->s;
    tess_strbuf_printf(b, "%s#pragma unroll\n%sfor (int i__ = 0; i__ < PX; i__++) {\n", ind, ind);
    char in2[64];
    snprintf(in2, sizeof in2, "%s    ", ind);
    emit_windows(b, p, in2);
    tess_strbuf_printf(b, "%s#pragma unroll\n%sfor (int j__ = 0; j__ < PY; j__++) {\n", in2, in2);
    for (int f = 0; f < s->nfields; f++)
        if (s->field[f].role == TESS_FIELD_OUT)
            tess_strbuf_printf(b, "%s    %s %s__v[VEC];\n", in2, tess_gen_ctype(s, f, p->t->dtype), s->field[f].name);
    tess_strbuf_printf(b, "%s#pragma unroll\n%s    for (int v__ = 0; v__ < VEC; v__++) {\n", in2, in2);
    tess_strbuf_printf(b, "%s        const int y = Y0 + j__, x = X0 + i__ * (BX * VEC) + v__;\n", in2);
    tess_strbuf_printf(b, "%s        (void)y, (void)x;\n", in2);
    tess_expr_printer pr = {.c_syntax = true, .ref = print_ref, .num = tess_cuda_print_number, .user = (void *)p};
    const char *at = s->rank == 3 ? "z, y, x" : "y, x";
    for (int i = 0; i < s->ninst; i++) {
        int out = tess_gen_inst_output(s, i);
        if (out < 0) {
            char name[64];
            tess_gen_inst_name(s, i, name, sizeof name);
            tess_strbuf_printf(b, "%s        const real %s = ", in2, name);
            tess_expr_print(b, s->inst[i].expr, &pr);
            tess_strbuf_puts(b, ";\n");
            continue;
        }
        /* Points on a fixed boundary band copy their input. */
        int src = s->field[out].advances;
        tess_strbuf_printf(b, "%s        %s__v[v__] = ON_BAND(%s) ? ", in2, s->field[out].name, at);
        if (src >= 0) print_field(b, p, src, centre);
        else tess_strbuf_puts(b, "0");
        tess_strbuf_puts(b, " : ");
        tess_expr_print(b, s->inst[i].expr, &pr);
        tess_strbuf_puts(b, ";\n");
    }
    tess_strbuf_printf(b, "%s    }\n", in2);
    tess_strbuf_printf(b, "%s    if (Y0 + j__ < NY && X0 + i__ * (BX * VEC) < NX) {\n", in2);
    for (int f = 0; f < s->nfields; f++) {
        if (s->field[f].role != TESS_FIELD_OUT) continue;
        tess_strbuf_printf(b, "%s        tess_st(&%s[", in2, s->field[f].name);
        print_at(b, p, f, "z", 0, "own__[i__][j__]");
        tess_strbuf_printf(b, "], %s__v);\n", s->field[f].name);
    }
    tess_strbuf_printf(b, "%s    }\n%s}\n%s}\n", in2, in2, ind);
}

/* ---- the ring of planes (staging=async) ------------------------------------------------ */

/* Copies plane zp (any plane: wrapped or clamped) of every staged field into
 * the ring's slot, if a step of the block's chunk reads it. */
static void emit_fetch(tess_strbuf *b, const tess_cuda_plan *p, const char *slot, const char *zp, const char *ind) {
    const tess_spec *s = p->s;
    tess_strbuf_printf(b, "%sif (%s <= Z1 - 1 + RING_HI) {\n%s    const idx_t zo__ = AT(SAFE_Z(%s), 0);\n", ind, zp, ind, zp);
    for (int f = 0; f < s->nfields; f++) {
        if (!p->staged[f]) continue;
        int bytes = p->vec * (int)tess_dtype_size(tess_spec_field_dtype(s, f, p->t->dtype));
        tess_strbuf_printf(b, "%s#pragma unroll\n%s    for (int c__ = 0; c__ < COPIES_PER_THREAD; c__++)\n"
                              "%s        if (cs__[c__] >= 0) tess_cp%d(&(&%s__s[%s][0][0])[cs__[c__]], &%s[zo__ + cg__[c__]]);\n",
                           ind, ind, ind, bytes, s->field[f].name, slot, s->field[f].name);
    }
    tess_strbuf_printf(b, "%s}\n", ind);
}

/* The ring's slots (dynamic shared memory, one after another per field),
 * and the copies of the planes the first step reads and of those after. */
static void emit_ring_setup(tess_strbuf *b, const tess_cuda_plan *p) {
    const tess_spec *s = p->s;
    tess_strbuf_puts(b, "    /* The ring: RING tiles per staged field; slot RING_SLOT(k) holds plane z - RING_LO + k. */\n"
                        "    extern __shared__ __align__(16) unsigned char tess_smem__[];\n");
    long offset = 0;
    for (int f = 0; f < s->nfields; f++) {
        if (!p->staged[f]) continue;
        const char *type = tess_gen_ctype(s, f, p->t->dtype);
        tess_strbuf_printf(b, "    %s (*const %s__s)[TILE_H][TILE_W] = (%s (*)[TILE_H][TILE_W])(tess_smem__ + %ld);\n", type,
                           s->field[f].name, type, offset);
        offset += tess_cuda_ring_field_bytes(p, f);
    }
    tess_strbuf_puts(b, "    /* Planes Z0 - RING_LO .. Z0 + RING_HI, which the first step reads, in one group\n"
                        "     * of copies, then one group per plane up to Z0 + AHEAD - 1. */\n"
                        "    for (int k__ = 0; k__ < RING - 1; k__++) {\n");
    emit_fetch(b, p, "k__", "Z0 - RING_LO + k__", "        ");
    tess_strbuf_puts(b, "        if (k__ >= RING_LO + RING_HI) tess_cp_commit();\n    }\n"
                        "    int s0__ = 0;   /* the slot of plane z - RING_LO */\n");
}

/* At the top of step z: plane z + RING_HI is complete (PREFETCH - 1 later
 * ones stay in flight) and seen by all threads; the barrier also ends the
 * reads of plane z - RING_LO - 1, whose slot takes plane z + AHEAD. Queues
 * fed from the ring take their top plane. */
static void emit_ring_step(tess_strbuf *b, const tess_cuda_plan *p) {
    const tess_spec *s = p->s;
    tess_strbuf_puts(b, "        tess_cp_wait(PREFETCH - 1);\n        __syncthreads();\n");
    emit_fetch(b, p, "RING_SLOT(RING - 1)", "z + AHEAD", "        ");
    tess_strbuf_puts(b, "        tess_cp_commit();\n");
    for (int f = 0; f < s->nfields; f++) {
        if (!ring_fed(p, f)) continue;
        const char *name = s->field[f].name;
        tess_strbuf_printf(b, "        " LOOP_IJ "            tess_lds(%s__q_", "        ", "        ", name);
        dz_suffix(b, p->qhi[f]);
        tess_strbuf_printf(b, "[i__][j__], &%s__s[RING_SLOT(%d)]" OWN_IN_TILE ");\n",
                           name, p->ring_lo + p->qhi[f]);
    }
}

/* ---- the sweep ----------------------------------------------------------------------- */

void tess_cuda_emit_sweep(tess_strbuf *b, const tess_cuda_plan *p) {
    const tess_spec *s = p->s;
    tess_dtype real = p->t->dtype;
    bool any_gwin = false;
    for (int f = 0; f < s->nfields; f++)
        for (int d = 0; d <= 2 * TESS_CUDA_MAX_DZ; d++) any_gwin |= p->gwin[f][d];
    tess_strbuf_puts(b, "/* One update of the grid. */\nstatic __device__ __forceinline__ void tess_sweep(");
    tess_cuda_emit_params(b, p, false);
    tess_strbuf_puts(b, ")\n{\n    /* This thread's points: rows Y0 .. Y0 + PY - 1, in each PX vectors of VEC points\n"
                        "     * from X0, BX * VEC apart. */\n"
                        "    const int X0 = (blockIdx.x * (BX * PX) + threadIdx.x) * VEC;\n"
                        "    const int Y0 = (blockIdx.y * BY + threadIdx.y) * PY;\n");
    emit_offsets(b, p, any_gwin);
    if (p->shared && !p->async) {
        tess_strbuf_printf(b, "    /* Shared tiles of the plane, %s. */\n",
                           p->stream ? "double buffered: one barrier per plane" : "with their halo");
        for (int f = 0; f < s->nfields; f++)
            if (p->staged[f])
                tess_strbuf_printf(b, "    __shared__ __align__(16) %s %s__s[%d][TILE_H][TILE_W];\n", tess_gen_ctype(s, f, real),
                                   s->field[f].name, p->stream ? 2 : 1);
    }
    if (s->rank == 2) {
        if (p->shared) {
            tess_strbuf_puts(b, "    const int b__ = 0;\n");
            emit_stage(b, p, "    ");
        }
        emit_points(b, p, "    ");
        tess_strbuf_puts(b, "}\n\n");
        return;
    }
    if (!p->stream) {
        tess_strbuf_puts(b, "    const int z = blockIdx.z * BZ + threadIdx.z;\n    if (z >= NZ) return;\n");
        emit_points(b, p, "    ");
        tess_strbuf_puts(b, "}\n\n");
        return;
    }
    tess_strbuf_puts(b, "    /* The block walks up planes Z0 .. Z1-1. */\n"
                        "    const int Z0 = blockIdx.z * CHUNK, Z1 = min(Z0 + CHUNK, NZ);\n");
    emit_queue_decls(b, p);
    for (int f = 0; f < s->nfields; f++)
        for (int dz = p->qlo[f]; p->queue[f] && dz < queue_top(p, f); dz++) emit_queue_load(b, p, f, dz, "Z0", "    ");
    if (p->async) emit_ring_setup(b, p);
    for (int f = 0; f < s->nfields; f++) {
        if (!p->staged[f] || p->async) continue;
        const char *name = s->field[f].name;
        tess_strbuf_printf(b, "    /* The halo points of %s this thread stages, loaded one plane ahead. */\n"
                              "    %s %s__h[HALO_PER_THREAD];\n#pragma unroll\n"
                              "    for (int h__ = 0; h__ < HALO_PER_THREAD; h__++) %s__h[h__] = __ldg(&%s[",
                           name, tess_gen_ctype(s, f, p->t->dtype), name, name, name);
        print_at(b, p, f, "Z0", 0, "hg__[h__]");
        tess_strbuf_puts(b, "]);\n");
    }
    emit_hoisted_windows(b, p);
    emit_coef_tiles(b, p);
    tess_strbuf_printf(b, "#pragma unroll %d\n    for (int z = Z0; z < Z1; z++) {\n", p->unroll);
    for (int f = 0; f < s->nfields; f++)
        if (p->queue[f] && !ring_fed(p, f)) emit_queue_load(b, p, f, p->qhi[f] + 1, "z", "        ");
    if (p->async) {
        emit_ring_step(b, p);
    } else if (p->shared) {
        tess_strbuf_puts(b, "        const int b__ = (z - Z0) & 1;   /* the tile buffer of this plane */\n");
        emit_stage(b, p, "        ");
    }
    emit_points(b, p, "        ");
    emit_queue_shift(b, p);
    if (p->async)
        tess_strbuf_puts(b, "        s0__ = s0__ + 1 < RING ? s0__ + 1 : 0;\n    }\n"
                            "    tess_cp_wait(0);   /* no copy outlives the block */\n}\n\n");
    else
        tess_strbuf_puts(b, "    }\n}\n\n");
}
