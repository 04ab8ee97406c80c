/* gen_cuda_tb.c - temporal blocking for the CUDA generator: time_block (TB)
 * steps in one launch.
 *
 * A block's threads cover a tile of TY = BY*PY rows by TX = BX*PX columns:
 * the points it updates TB times (OUT_H x OUT_W) and TB halos around them,
 * which neighbouring blocks update too. Thread (ty, tx) owns columns
 * tx*PX .. tx*PX+PX-1 of rows ty*PY .. ty*PY+PY-1: its points, numbered
 * row by row. The block walks up a chunk of z with the steps
 * pipelined: at iteration i, level 0 loads plane i of each state field and
 * level L (1..TB) computes plane i - L*HI_Z from level L-1's values.
 *
 * Each thread keeps, per level and point, a register queue of the
 * LO_Z+HI_Z+1 planes of its column that the next level reads. References
 * along the column, and to the thread's other points, read the queues;
 * the others read a shared tile per plane offset, which the threads fill
 * from their queues before one barrier per level; the levels take turns in
 * two such tiles. Values near the tile's edge are wrong (their neighbours are
 * missing), one halo deeper at each level; the last level writes only the
 * inner points, which they never reach. Points on a fixed boundary band keep
 * their value, as in the reference (a select, or a branch when the update
 * reads other fields). Tiles that touch no band along y or x run copies of
 * the loop without those tests: one for the passes near the bottom and top
 * of the grid, which test the bands along z, and one without any test for
 * the passes between. Fields no output advances are read from global memory. */
#include <stdio.h>
#include <string.h>
#include "gen_cuda_internal.h"
#include "gen_util.h"
#include "spec_print.h"

static bool is_state(const tess_spec *s, int f) { return tess_gen_advancer(s, f) >= 0; }

static void mark_planes(const tess_expr *e, int f, bool *read) {
    for (int i = 0; i < e->nargs; i++) mark_planes(e->arg[i], f, read);
    if (e->kind == TESS_EXPR_REF && e->ref == TESS_REF_FIELD && e->index == f && (e->off[1] || e->off[2]))
        read[e->off[0] + TESS_CUDA_MAX_DZ] = true;
}

int tess_cuda_tb_planes(const tess_spec *s, int f, int dz[2 * TESS_CUDA_MAX_DZ + 1]) {
    bool read[2 * TESS_CUDA_MAX_DZ + 1] = {false};
    for (int i = 0; i < s->ninst; i++) mark_planes(s->inst[i].expr, f, read);
    int n = 0;
    for (int d = 0; d <= 2 * TESS_CUDA_MAX_DZ; d++)
        if (read[d]) dz[n++] = d - TESS_CUDA_MAX_DZ;
    return n;
}

/* Which fixed boundary bands a copy of the plane loop tests for. */
typedef enum {
    BANDS_ALL,    /* the block's tile reaches a band along y or x */
    BANDS_Z,      /* it does not; its planes may lie on a band along z */
    BANDS_NONE    /* neither: passes whose planes all lie off the bands along z */
} tb_bands;

/* Where the expressions of one level and point of a thread are printed, in
 * which phase of the queues' rotation. */
typedef struct tb_ctx {
    const tess_cuda_plan *p;
    int level, row, col, phase;   /* the point: row and column among the thread's */
    tb_bands bands;
} tb_ctx;

static int queue_len(const tess_spec *s) { return s->lo[0] + s->hi[0] + 1; }

/* Columns of a shared tile's halo: LO_X left and HI_X right of the block's
 * tile, rounded up to PX, so that a thread's points lie in one aligned
 * vector (the compiler merges their loads and stores). */
static int halo_columns(const tess_cuda_plan *p, int reach) { return (reach + p->px - 1) / p->px * p->px; }
static int pad_left(const tess_cuda_plan *p) { return halo_columns(p, p->s->lo[2]); }

int tess_cuda_tb_buffers(int time_block) { return time_block % 2 ? time_block : 2; }

/* The shared tile that level L's values are published in: two buffers
 * alternate, since a level's barrier also ends the reads of the buffer two
 * levels back (with an odd count of levels the alternation would break at
 * the loop's turn, so each level has its own). */
static int tile_of(const tess_cuda_plan *p, int level) { return level % tess_cuda_tb_buffers(p->time_block); }

/* With unroll > 1 the queues rotate instead of shifting: the loop over
 * planes is unrolled queue_len times, and in phase `phase` (once that
 * phase's plane is pushed) the register of plane z + dz is this one. Rotation
 * saves the moves of a shift and costs registers. */
static bool rotating(const tess_cuda_plan *p) { return p->unroll > 1; }

static int queue_reg(const tess_cuda_plan *p, int phase, int dz) {
    const tess_spec *s = p->s;
    return rotating(p) ? (dz + s->lo[0] + phase + 1) % queue_len(s) : dz + s->lo[0];
}

/* Pushes `value` onto the queue of field `name` at level, point j. */
static void emit_push(tess_strbuf *b, const tess_cuda_plan *p, const char *name, int level, int j, int phase,
                      const char *value, const char *indent) {
    int n = queue_len(p->s);
    if (rotating(p)) {
        tess_strbuf_printf(b, "%s%s__q%d_%d_%d = %s;\n", indent, name, level, j, phase, value);
        return;
    }
    for (int m = 0; m + 1 < n; m++)
        tess_strbuf_printf(b, "%s%s__q%d_%d_%d = %s__q%d_%d_%d;\n", indent, name, level, j, m, name, level, j, m + 1);
    tess_strbuf_printf(b, "%s%s__q%d_%d_%d = %s;\n", indent, name, level, j, n - 1, value);
}

static int plane_slot(const tess_spec *s, int f, int dz) {
    int planes[2 * TESS_CUDA_MAX_DZ + 1];
    int n = tess_cuda_tb_planes(s, f, planes);
    for (int k = 0; k < n; k++)
        if (planes[k] == dz) return k;
    return -1;
}

static void print_ref(tess_strbuf *b, const tess_expr *e, void *user) {
    const tb_ctx *c = user;
    const tess_spec *s = c->p->s;
    if (tess_gen_print_named_ref(b, s, e)) return;
    int f = e->index;
    const char *name = s->field[f].name;
    if (is_state(s, f)) {   /* level - 1: the thread's queues or the shared tile */
        int row = c->row + e->off[1], col = c->col + e->off[2];
        if (row >= 0 && row < c->p->py && col >= 0 && col < c->p->px)
            tess_strbuf_printf(b, "%s__q%d_%d_%d", name, c->level - 1, row * c->p->px + col,
                               queue_reg(c->p, c->phase, e->off[0]));
        else
            tess_strbuf_printf(b, "%s__s%d[%d][R__ + %d][C__ + %d]", name, tile_of(c->p, c->level - 1),
                               plane_slot(s, f, e->off[0]), row + s->lo[1], col + pad_left(c->p));
        return;
    }
    /* Halo points lie outside the grid along periodic axes: wrap. */
    int first = s->rank - s->field[f].rank;
    tess_strbuf_printf(b, "__ldg(&%s[%s(", name, first ? "IDX2" : "IDX");
    for (int a = first; a < s->rank; a++) {
        char var[2] = {tess_spec_axis_name(s->rank, a), '\0'};
        bool wrap = tess_spec_periodic(s, a);
        if (a > first) tess_strbuf_puts(b, ", ");
        if (wrap) tess_strbuf_printf(b, "SAFE_%c(", var[0] - 'a' + 'A');
        tess_gen_coord(b, var, e->off[a]);
        if (wrap) tess_strbuf_puts(b, ")");
    }
    tess_strbuf_puts(b, ")])");
}

static void print_number(tess_strbuf *b, double v, void *user) {
    tess_cuda_print_number(b, v, (void *)((const tb_ctx *)user)->p);
}

/* Whether some update reads a field no output advances (from global memory,
 * in bounds only on points off the fixed bands). */
static bool reads_other_fields(const tess_spec *s, const tess_expr *e) {
    for (int i = 0; i < e->nargs; i++)
        if (reads_other_fields(s, e->arg[i])) return true;
    return e->kind == TESS_EXPR_REF && e->ref == TESS_REF_FIELD && !is_state(s, e->index);
}

static bool band_by_branch(const tess_spec *s) {
    for (int i = 0; i < s->ninst; i++)
        if (reads_other_fields(s, s->inst[i].expr)) return true;
    return false;
}

/* Level L of point j: plane z of the thread's point. Points on a band keep
 * their value; without reads of other fields every point computes and
 * selects, which needs no branch (and off the bands, neither). */
static void emit_point(tess_strbuf *b, const tb_ctx *c) {
    const tess_cuda_plan *p = c->p;
    const tess_spec *s = p->s;
    int level = c->level, j = c->row * p->px + c->col, phase = c->phase;
    bool last = level == p->time_block, bands = c->bands != BANDS_NONE, branch = bands && band_by_branch(s);
    tess_strbuf_printf(b, "            {   /* row %d, column %d */\n", c->row, c->col);
    if (band_by_branch(s))   /* other fields are indexed by y and x */
        tess_strbuf_printf(b, "                const int y = Y0 + %d, x = X0 + %d;\n", c->row, c->col);
    if (c->bands == BANDS_ALL)
        tess_strbuf_printf(b, "                const bool band__ = band_z__ || band_yx%d__;\n", j);
    else if (bands)
        tess_strbuf_puts(b, "                const bool band__ = band_z__;\n");
    if (last)
        tess_strbuf_printf(b, "                if (in_z__ && write%d__) {\n", j);
    else
        tess_strbuf_puts(b, "                {\n");
    for (int i = 0; branch && i < s->ninst; i++) {
        int out = tess_gen_inst_output(s, i);
        if (out >= 0 && (last || s->field[out].advances >= 0))
            tess_strbuf_printf(b, "                    real %s__v = 0;\n", s->field[out].name);
    }
    if (branch) tess_strbuf_puts(b, "                    if (!band__) {\n");
    tess_expr_printer pr = {.c_syntax = true, .ref = print_ref, .num = print_number, .user = (void *)c};
    for (int i = 0; i < s->ninst; i++) {
        int out = tess_gen_inst_output(s, i);
        if (out >= 0 && !last && s->field[out].advances < 0) continue;   /* read by no later level */
        char name[64];
        if (out >= 0) snprintf(name, sizeof name, "%s__v", s->field[out].name);
        else tess_gen_inst_name(s, i, name, sizeof name);
        tess_strbuf_printf(b, "                    %s%s = ", out >= 0 && branch ? "" : "const real ", name);
        tess_expr_print(b, s->inst[i].expr, &pr);
        tess_strbuf_puts(b, ";\n");
    }
    if (branch) tess_strbuf_puts(b, "                    }\n");
    for (int f = 0; f < s->nfields; f++) {
        if (s->field[f].role != TESS_FIELD_OUT) continue;
        int g = s->field[f].advances;
        if (g < 0 && !last) continue;
        const char *name = s->field[f].name;
        char value[160];
        if (g < 0 || !bands) snprintf(value, sizeof value, "%s__v", name);
        else snprintf(value, sizeof value, "band__ ? %s__q%d_%d_%d : %s__v", s->field[g].name, level - 1, j,
                      queue_reg(p, phase, 0), name);
        if (last)
            tess_strbuf_printf(b, "                    %s%s[pz__ + at%d__] = %s;\n",
                               g < 0 && bands ? "if (!band__) " : "", name, j, value);
        else
            emit_push(b, p, s->field[g].name, level, j, phase, value, "                    ");
    }
    tess_strbuf_puts(b, "                }\n            }\n");
}

/* Level L (1..TB): publish level L-1's planes that neighbours read, then
 * compute plane i - L*HI_Z of each row. */
static void emit_level(tess_strbuf *b, const tess_cuda_plan *p, int level, int phase, tb_bands bands) {
    const tess_spec *s = p->s;
    tess_strbuf_printf(b, "        {   /* level %d: plane i - %d * HI_Z */\n", level, level);
    if (level == p->time_block || band_by_branch(s))
        tess_strbuf_printf(b, "            const int z = i - %d * HI_Z;\n", level);
    if (bands != BANDS_NONE) tess_strbuf_printf(b, "            const bool band_z__ = BAND_Z(i - %d * HI_Z);\n", level);
    for (int f = 0; f < s->nfields; f++) {
        int planes[2 * TESS_CUDA_MAX_DZ + 1];
        int n = is_state(s, f) ? tess_cuda_tb_planes(s, f, planes) : 0;
        for (int k = 0; k < n; k++)
            for (int j = 0; j < p->py * p->px; j++)
                tess_strbuf_printf(b, "            %s__s%d[%d][R__ + %d][C__ + %d] = %s__q%d_%d_%d;\n",
                                   s->field[f].name, tile_of(p, level - 1), k, j / p->px + s->lo[1],
                                   j % p->px + pad_left(p), s->field[f].name, level - 1, j,
                                   queue_reg(p, phase, planes[k]));
    }
    tess_strbuf_puts(b, "            __syncthreads();\n");
    if (level == p->time_block)
        tess_strbuf_puts(b, "            const bool in_z__ = z >= Z0 && z < Z1;\n"
                            "            const idx_t pz__ = (idx_t)z * NY * NX;\n");
    for (int j = 0; j < p->py * p->px; j++) {
        tb_ctx c = {p, level, j / p->px, j % p->px, phase, bands};
        emit_point(b, &c);
    }
    tess_strbuf_puts(b, "        }\n");
}

/* BAND_Z(z), BAND_YX(y, x): on a fixed boundary band along those axes. */
static void emit_band_macros(tess_strbuf *b, const tess_spec *s) {
    for (int part = 0; part < 2; part++) {
        tess_strbuf_puts(b, part ? "#define BAND_YX(y, x) (" : "#define BAND_Z(z) (");
        int n = 0;
        for (int a = part; a < (part ? 3 : 1); a++) {
            if (tess_spec_periodic(s, a) || (s->lo[a] == 0 && s->hi[a] == 0)) continue;
            char v = tess_spec_axis_name(3, a), V = (char)(v - 'a' + 'A');
            tess_strbuf_printf(b, "%s(%c) < LO_%c || (%c) >= N%c - HI_%c", n++ ? " || " : "", v, V, v, V, V);
        }
        tess_strbuf_puts(b, n ? ")\n" : "0)\n");
    }
}

static int passes(const tess_cuda_plan *p) { return rotating(p) ? queue_len(p->s) : 1; }

/* Passes of the walk up the chunk while `cond` holds: level 0 loads a plane,
 * levels 1..TB update. */
static void emit_plane_loop(tess_strbuf *b, const tess_cuda_plan *p, const char *cond, tb_bands bands) {
    const tess_spec *s = p->s;
    int phases = passes(p);
    tess_strbuf_printf(b, "    for (; %s; i0 += %d) {\n", cond, phases);
    for (int phase = 0; phase < phases; phase++) {
        tess_strbuf_printf(b, "    {   /* phase %d */\n        const int i = i0 + %d;\n"
                              "        /* level 0: plane i of the input */\n"
                              "        const idx_t pz__ = (idx_t)%s * NY * NX;\n", phase, phase,
                           bands == BANDS_NONE ? "i" : "SAFE_Z(i)");   /* passes off the bands: in the grid */
        for (int f = 0; f < s->nfields; f++) {
            if (!is_state(s, f)) continue;
            for (int j = 0; j < p->py * p->px; j++) {
                char value[128];
                snprintf(value, sizeof value, "__ldg(&%s[pz__ + at%d__])", s->field[f].name, j);
                emit_push(b, p, s->field[f].name, 0, j, phase, value, "        ");
            }
        }
        for (int k = 1; k <= p->time_block; k++) emit_level(b, p, k, phase, bands);
        tess_strbuf_puts(b, "    }\n");
    }
    tess_strbuf_puts(b, "    }\n");
}

void tess_cuda_emit_tb_sweep(tess_strbuf *b, const tess_cuda_plan *p) {
    const tess_spec *s = p->s;
    int tb = p->time_block, nq = queue_len(s);
    tess_strbuf_printf(b, "/* Temporal blocking: TB steps per launch, pipelined along z. The block's\n"
                          " * tile: TY x TX points, of which the inner OUT_H x OUT_W are written. */\n"
                          "#define TB %d\n#define TY (BY * PY)\n#define TX (BX * PX)\n"
                          "#define OUT_W (TX - TB * (LO_X + HI_X))\n#define OUT_H (TY - TB * (LO_Y + HI_Y))\n"
                          "/* Shared tiles: the block's tile and a halo that only edge points read\n"
                          " * (along x whole vectors of PX points). */\n"
                          "#define SH (TY + LO_Y + HI_Y)\n#define SW (%d + TX + %d)\n", tb, pad_left(p),
                          halo_columns(p, s->hi[2]));
    emit_band_macros(b, s);
    tess_strbuf_puts(b, "\n/* TB updates of the grid. */\nstatic __device__ __forceinline__ void tess_sweep(");
    tess_cuda_emit_params(b, p, false);
    tess_strbuf_puts(b, ")\n{\n"
                        "    const int R__ = threadIdx.y * PY, C__ = threadIdx.x * PX;   /* the thread in the tile */\n"
                        "    const int X0 = blockIdx.x * OUT_W - TB * LO_X + C__;   /* the thread's first column */\n"
                        "    const int Y0 = blockIdx.y * OUT_H - TB * LO_Y + R__;   /* and row */\n"
                        "    const int Z0 = blockIdx.z * CHUNK, Z1 = min(Z0 + CHUNK, NZ);\n");
    for (int c = 0; c < p->px; c++)   /* per column: made loadable, written */
        tess_strbuf_printf(b, "    const int sx%d__ = SAFE_X(X0 + %d);\n"
                              "    const bool out_x%d__ = C__ + %d >= TB * LO_X && C__ + %d < TB * LO_X + OUT_W && "
                              "X0 + %d < NX;\n", c, c, c, c, c, c);
    for (int f = 0; f < s->nfields; f++) {
        int planes[2 * TESS_CUDA_MAX_DZ + 1];
        int n = is_state(s, f) ? tess_cuda_tb_planes(s, f, planes) : 0;
        if (!is_state(s, f)) continue;
        const char *type = tess_gen_ctype(s, f, p->t->dtype), *name = s->field[f].name;
        tess_strbuf_printf(b, "    /* %s: the tiles of the planes read off the column, and per level the\n"
                              "     * queues of each point (planes z - LO_Z .. z + HI_Z of the next level's z). */\n",
                           name);
        for (int k = 0; k < tess_cuda_tb_buffers(tb) && n; k++) {
            tess_strbuf_printf(b, "    __shared__ __align__(16) %s %s__s%d[%d][SH][SW];\n", type, name, k, n);
            /* The halo no thread writes: zeros, so that edge points compute on numbers. */
            tess_strbuf_printf(b, "    for (int t__ = threadIdx.y * BX + threadIdx.x; t__ < %d * SH * SW; t__ += BX * BY)\n"
                                  "        (&%s__s%d[0][0][0])[t__] = 0;\n", n, name, k);
        }
        for (int k = 0; k < tb; k++)
            for (int j = 0; j < p->py * p->px; j++) {
                tess_strbuf_printf(b, "    %s ", type);
                for (int m = 0; m < nq; m++) tess_strbuf_printf(b, "%s%s__q%d_%d_%d = 0", m ? ", " : "", name, k, j, m);
                tess_strbuf_puts(b, ";\n");
            }
    }
    /* Per point: where it lies in a plane (clamped), on a band, written. */
    for (int j = 0; j < p->py * p->px; j++) {
        int r = j / p->px, c = j % p->px;
        tess_strbuf_printf(b, "    const idx_t at%d__ = (idx_t)SAFE_Y(Y0 + %d) * NX + sx%d__;\n"
                              "    const bool band_yx%d__ = BAND_YX(Y0 + %d, X0 + %d);\n"
                              "    const bool write%d__ = out_x%d__ && R__ + %d >= TB * LO_Y && R__ + %d < TB * LO_Y + OUT_H && "
                              "Y0 + %d < NY;\n", j, r, c, j, r, c, j, c, r, r, r);
    }
    tess_strbuf_puts(b, "    /* Tiles off the bands along y and x skip those tests, and so do their\n"
                        "     * passes off the bands along z: after the lower band's planes have left\n"
                        "     * the last level, before the upper band's reach the first. */\n"
                        "    const bool edge__ = BAND_YX(Y0 - R__, X0 - C__) || BAND_YX(Y0 - R__ + TY - 1, X0 - C__ + TX - 1);\n"
                        "    const int end__ = Z1 + TB * HI_Z;\n"
                        "    int i0 = Z0 - TB * LO_Z;\n"
                        "    __syncthreads();\n");
    if (rotating(p))
        tess_strbuf_printf(b, "    /* %d planes per pass, one per register of a queue: the last pass may run\n"
                              "     * past Z1, writing nothing. */\n", passes(p));
    tess_strbuf_puts(b, "    if (edge__) {\n");
    emit_plane_loop(b, p, "i0 < end__", BANDS_ALL);
    tess_strbuf_puts(b, "    } else {\n");
    char clean[96];
    snprintf(clean, sizeof clean, "i0 + %d <= min(NZ, end__)", passes(p));
    emit_plane_loop(b, p, "i0 < end__ && i0 < LO_Z + TB * HI_Z", BANDS_Z);
    emit_plane_loop(b, p, clean, BANDS_NONE);
    emit_plane_loop(b, p, "i0 < end__", BANDS_Z);
    tess_strbuf_puts(b, "    }\n}\n\n");
}
