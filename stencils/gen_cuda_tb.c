/* gen_cuda_tb.c - temporal blocking for the CUDA generator: time_block (TB)
 * steps in one launch.
 *
 * A block's threads cover a tile of TY = BY*PY rows by TX = BX*PX columns:
 * the points it updates TB times (OUT_H x OUT_W) and TB halos around them,
 * which neighbouring blocks update too. Thread (ty, tx) owns columns
 * tx*PX .. tx*PX+PX-1 of rows ty*PY .. ty*PY+PY-1: its points, numbered
 * row by row. The block walks up a chunk of z with the steps pipelined: at
 * iteration i, level 0 takes plane i of each state field (loaded one
 * iteration ahead) and level L (1..TB) computes plane i - L*LAG from level
 * L-1's values.
 *
 * Each thread keeps, per level and point, a register queue of the
 * LO_Z+LAG+1 planes of its column that the next level reads. References
 * along the column, and to the thread's other points, read the queues;
 * the others read shared tiles, or, when a warp is a row of the tile, the
 * neighbouring lanes' queues through shuffles. LAG exceeds the highest plane offset read
 * off the column, so every such plane was computed in an earlier
 * iteration: each iteration publishes all levels' planes at once, before
 * its only barrier, into tiles of its own parity (the other parity's tiles
 * are still being read by threads behind). Values near the tile's edge are
 * wrong (their neighbours are missing), one halo deeper at each level; the
 * last level writes only the inner points, which they never reach. Points
 * on a fixed boundary band keep their value, as in the reference (a
 * select, or a branch when the update reads other fields). Tiles that
 * touch no band along y or x run copies of the loop without those tests:
 * one for the passes near the bottom and top of the grid, which test the
 * bands along z, and one without any test for the passes between. Each
 * chunk starts with warm-up loops that run only the levels whose planes a
 * later level reads; in the band-free loop the block's top and bottom rows
 * of threads skip the rows of each level's halos that no later level reads.
 * Fields no output advances are read from global memory. */
#include <stdio.h>
#include <stdlib.h>
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

/* Where the expressions of one level and point of a thread are printed. */
typedef struct tb_ctx {
    const tess_cuda_plan *p;
    int level, row, col;   /* the point: row and column among the thread's */
    tb_bands bands;
} tb_ctx;

int tess_cuda_tb_lag(const tess_spec *s) {
    int lag = s->hi[0] > 1 ? s->hi[0] : 1;
    for (int f = 0; f < s->nfields; f++) {
        int planes[2 * TESS_CUDA_MAX_DZ + 1];
        int n = is_state(s, f) ? tess_cuda_tb_planes(s, f, planes) : 0;
        if (n && planes[n - 1] + 1 > lag) lag = planes[n - 1] + 1;
    }
    return lag;
}

int tess_cuda_tb_queue_len(const tess_spec *s) { return s->lo[0] + tess_cuda_tb_lag(s) + 1; }

/* Columns of a shared tile's halo: LO_X left and HI_X right of the block's
 * tile, rounded up to PX, so that a thread's points lie in one aligned
 * vector (the compiler merges their loads and stores). */
static int halo_columns(const tess_cuda_plan *p, int reach) { return (reach + p->px - 1) / p->px * p->px; }
static int pad_left(const tess_cuda_plan *p) { return halo_columns(p, p->s->lo[2]); }

/* The register of a queue that holds plane z + dz once the iteration's
 * plane is pushed (register 0 holds the oldest), and before. */
static int queue_reg(const tess_cuda_plan *p, int dz) { return dz + p->s->lo[0]; }
static int queue_reg_before_push(const tess_cuda_plan *p, int dz) { return queue_reg(p, dz + 1); }

/* Pushes `value` onto the queue of field `name` at level, point j: the
 * planes shift down one register (moves that the compiler renames away
 * where it can). */
static void emit_push(tess_strbuf *b, const tess_cuda_plan *p, const char *name, int level, int j,
                      const char *value, const char *indent) {
    int n = tess_cuda_tb_queue_len(p->s);
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

/* Field f's shared tiles: per parity of the iteration, per level 0..TB-1,
 * one per plane offset read off the column. Prints the tile of `level`
 * and plane slot k, at row and column of the thread's points. */
static void print_tile(tess_strbuf *b, const tess_cuda_plan *p, int f, int level, int k, int row, int col) {
    const tess_spec *s = p->s;
    int planes[2 * TESS_CUDA_MAX_DZ + 1];
    int n = tess_cuda_tb_planes(s, f, planes);
    tess_strbuf_printf(b, "%s__s[par__ * %d + %d][R__ + %d][C__ + %d]", s->field[f].name, p->time_block * n,
                       level * n + k, row + s->lo[1], col + pad_left(p));
}

long tess_cuda_tb_field_bytes(const tess_cuda_plan *p, int f) {
    const tess_spec *s = p->s;
    int planes[2 * TESS_CUDA_MAX_DZ + 1];
    int n = is_state(s, f) ? tess_cuda_tb_planes(s, f, planes) : 0;
    long sh = (long)p->by * p->py + s->lo[1] + s->hi[1];
    long sw = pad_left(p) + (long)p->bx * p->px + halo_columns(p, s->hi[2]);
    long bytes = 2L * p->time_block * n * sh * sw * (long)tess_dtype_size(tess_spec_field_dtype(s, f, p->t->dtype));
    return (bytes + 15) / 16 * 16;
}

/* With block_x = 32 and ppt_x = 1 a warp is one row of the tile: a read
 * along x within the thread's own rows takes the neighbouring lane's
 * register through a warp shuffle instead of the shared tile (lanes at the
 * tile's edges get a wrong value, as edge points do anyway). The shared
 * tiles then carry only the rows that the threads above and below read. */
static bool shuffles(const tess_cuda_plan *p) { return p->bx == 32 && p->px == 1; }

static bool shuffled(const tess_cuda_plan *p, int row, int dx) {
    return shuffles(p) && row >= 0 && row < p->py && dx != 0;
}

/* The name of queue register `reg` of point j at level, shuffled from the
 * lane dx away when dx != 0. */
static void print_queue(tess_strbuf *b, const char *name, int level, int j, int reg, int dx) {
    tess_strbuf_printf(b, "%s__q%d_%d_%d", name, level, j, reg);
    if (dx) tess_strbuf_printf(b, "__%c%d", dx < 0 ? 'm' : 'p', dx < 0 ? -dx : dx);
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
            print_queue(b, name, c->level - 1, row * c->p->px + col, queue_reg(c->p, e->off[0]), 0);
        else if (shuffled(c->p, row, e->off[2]))
            print_queue(b, name, c->level - 1, row, queue_reg(c->p, e->off[0]), e->off[2]);
        else
            print_tile(b, c->p, f, c->level - 1, plane_slot(s, f, e->off[0]), row, col);
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

/* Whether level L computes instruction i (or leaves it: no later level reads it). */
static bool computes(const tess_cuda_plan *p, int level, int i) {
    int out = tess_gen_inst_output(p->s, i);
    return out < 0 || level == p->time_block || p->s->field[out].advances >= 0;
}

/* Where point j lies in a plane: at<j>__ (clamped into the grid), or, in
 * the loops of tiles inside the grid and off the bands along y and x, an
 * offset from point 0's. */
static void print_at(tess_strbuf *b, const tess_cuda_plan *p, int j, tb_bands bands) {
    if (bands == BANDS_ALL) tess_strbuf_printf(b, "at%d__", j);
    else tess_strbuf_printf(b, "at0__ + (%d * NX + %d)", j / p->px, j % p->px);
}

/* Level L of point j: plane z of the thread's point. Points on a band keep
 * their value; without reads of other fields every point computes and
 * selects, which needs no branch (and off the bands, neither). */
static void emit_point(tess_strbuf *b, const tb_ctx *c) {
    const tess_cuda_plan *p = c->p;
    const tess_spec *s = p->s;
    int level = c->level, j = c->row * p->px + c->col;
    bool last = level == p->time_block, bands = c->bands != BANDS_NONE, branch = bands && band_by_branch(s);
    tess_strbuf_printf(b, "            {   /* row %d, column %d */\n", c->row, c->col);
    if (band_by_branch(s))   /* other fields are indexed by y and x */
        tess_strbuf_printf(b, "                const int y = Y0 + %d, x = X0 + %d;\n", c->row, c->col);
    if (c->bands == BANDS_ALL)
        tess_strbuf_printf(b, "                const bool band__ = band_z__ || band_yx%d__;\n", j);
    else if (bands)
        tess_strbuf_puts(b, "                const bool band__ = band_z__;\n");
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
        if (!computes(p, level, i)) continue;   /* read by no later level */
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
                      queue_reg(p, 0), name);
        if (last) {
            tess_strbuf_printf(b, "                    if (in_z__ && write%d__%s) %s[pz__ + ", j,
                               g < 0 && bands ? " && !band__" : "", name);
            print_at(b, p, j, c->bands);
            tess_strbuf_printf(b, "] = %s;\n", value);
        } else
            emit_push(b, p, s->field[g].name, level, j, value, "                    ");
    }
    tess_strbuf_puts(b, "                }\n            }\n");
}

/* The shuffles that point c reads in e, each declared once per level (the
 * names declared so far in `seen`, as ";name;name;"). */
static void emit_shuffles(tess_strbuf *b, const tess_expr *e, const tb_ctx *c, tess_strbuf *seen) {
    for (int i = 0; i < e->nargs; i++) emit_shuffles(b, e->arg[i], c, seen);
    const tess_spec *s = c->p->s;
    if (e->kind != TESS_EXPR_REF || e->ref != TESS_REF_FIELD || !is_state(s, e->index)) return;
    int row = c->row + e->off[1], dx = e->off[2];
    if (!shuffled(c->p, row, dx)) return;
    const char *name = s->field[e->index].name;
    int reg = queue_reg(c->p, e->off[0]);
    tess_strbuf var = {0};
    tess_strbuf_puts(&var, ";");
    print_queue(&var, name, c->level - 1, row, reg, dx);
    tess_strbuf_puts(&var, ";");
    if (!var.data) return;   /* out of memory: the kernel will not compile, which the compile reports */
    if (!seen->data || !strstr(seen->data, var.data)) {
        var.data[var.len - 1] = '\0';
        tess_strbuf_printf(b, "            const %s %s = __shfl_%s_sync(0xffffffffu, ",
                           tess_gen_ctype(s, e->index, c->p->t->dtype), var.data + 1, dx < 0 ? "up" : "down");
        print_queue(b, name, c->level - 1, row, reg, 0);
        tess_strbuf_printf(b, ", %d);\n", dx < 0 ? -dx : dx);
        tess_strbuf_printf(seen, "%s%s;", seen->len ? "" : ";", var.data + 1);
    }
    free(var.data);
}

/* The rows [*lo, *hi) among a thread's that level L computes in a loop for
 * the threads of row ty of the block (-1: any row, all of them). Level L's
 * values are wrong L halos deep from the tile's top and bottom, and no
 * later level reads those rows: they are skipped. */
static void level_rows(const tess_cuda_plan *p, int level, int ty, int *lo, int *hi) {
    *lo = 0;
    *hi = p->py;
    if (ty < 0) return;
    int first = level * p->s->lo[1] - ty * p->py, end = p->by * p->py - level * p->s->hi[1] - ty * p->py;
    *lo = first < 0 ? 0 : first > p->py ? p->py : first;
    *hi = end < 0 ? 0 : end > p->py ? p->py : end;
}

/* Loops of their own for the block's top and bottom rows of threads (a
 * warp or more each: block_x is a multiple of 32), where the halos that
 * levels skip lie only in those two rows. */
static bool row_variants(const tess_cuda_plan *p) {
    const tess_spec *s = p->s;
    return p->by >= 3 && p->time_block * s->lo[1] <= p->py && p->time_block * s->hi[1] <= p->py;
}

/* Level L (1..TB): plane i - L*LAG of the thread's points (of rows that
 * level_rows gives for thread row ty). */
static void emit_level(tess_strbuf *b, const tess_cuda_plan *p, int level, tb_bands bands, int ty) {
    const tess_spec *s = p->s;
    int lo, hi;
    level_rows(p, level, ty, &lo, &hi);
    if (lo >= hi) return;
    tess_strbuf_printf(b, "        {   /* level %d: plane i - %d * LAG */\n", level, level);
    if (level == p->time_block || band_by_branch(s))
        tess_strbuf_printf(b, "            const int z = i - %d * LAG;\n", level);
    if (bands != BANDS_NONE) tess_strbuf_printf(b, "            const bool band_z__ = BAND_Z(i - %d * LAG);\n", level);
    if (level == p->time_block)
        tess_strbuf_puts(b, "            const bool in_z__ = z >= Z0 && z < Z1;\n"
                            "            const idx_t pz__ = (idx_t)z * NY * NX;\n");
    if (shuffles(p)) {   /* by every lane, outside the branches of bands */
        tess_strbuf seen = {0};
        for (int j = lo; j < hi; j++) {
            tb_ctx c = {p, level, j, 0, bands};
            for (int i = 0; i < s->ninst; i++)
                if (computes(p, level, i)) emit_shuffles(b, s->inst[i].expr, &c, &seen);
        }
        free(seen.data);
    }
    for (int j = lo * p->px; j < hi * p->px; j++) {
        tb_ctx c = {p, level, j / p->px, j % p->px, bands};
        emit_point(b, &c);
    }
    tess_strbuf_puts(b, "        }\n");
}

/* Planes per pass of the loop (unroll): with two, each phase knows the
 * parity of its tiles. */
static int passes(const tess_cuda_plan *p) { return p->unroll; }

/* Before the iteration's barrier: every level 0..TB-1 publishes the planes
 * that the next level reads off the column this iteration (all computed in
 * earlier ones) into the tiles of this iteration's parity. */
static void emit_publish(tess_strbuf *b, const tess_cuda_plan *p, int phase) {
    const tess_spec *s = p->s;
    tess_strbuf_puts(b, "        /* publish the planes read off the column */\n");
    if (passes(p) % 2) tess_strbuf_puts(b, "        const int par__ = i & 1;\n");
    else tess_strbuf_printf(b, "        const int par__ = %d;\n", phase % 2);
    for (int level = 0; level < p->time_block; level++)
        for (int f = 0; f < s->nfields; f++) {
            int planes[2 * TESS_CUDA_MAX_DZ + 1];
            int n = is_state(s, f) ? tess_cuda_tb_planes(s, f, planes) : 0;
            for (int k = 0; k < n; k++)
                for (int j = 0; j < p->py * p->px; j++) {
                    int row = j / p->px;
                    if (shuffles(p) && row >= s->hi[1] && row < p->py - s->lo[1]) continue;   /* read by no other thread */
                    tess_strbuf_puts(b, "        ");
                    print_tile(b, p, f, level, k, j / p->px, j % p->px);
                    tess_strbuf_puts(b, " = ");
                    print_queue(b, s->field[f].name, level, j, queue_reg_before_push(p, planes[k]), 0);
                    tess_strbuf_puts(b, ";\n");
                }
        }
}

/* Level 0's values of plane `plane` (an expression) into the registers
 * n<j>, one iteration ahead of their push. */
static void emit_load_ahead(tess_strbuf *b, const tess_cuda_plan *p, const char *plane, tb_bands bands,
                            const char *indent) {
    const tess_spec *s = p->s;
    tess_strbuf_printf(b, "%s{\n%s    const idx_t pz__ = (idx_t)SAFE_Z(%s) * NY * NX;\n", indent, indent, plane);
    for (int f = 0; f < s->nfields; f++)
        for (int j = 0; is_state(s, f) && j < p->py * p->px; j++) {
            tess_strbuf_printf(b, "%s    %s__n%d = __ldg(&%s[pz__ + ", indent, s->field[f].name, j, s->field[f].name);
            print_at(b, p, j, bands);
            tess_strbuf_puts(b, "]);\n");
        }
    tess_strbuf_printf(b, "%s}\n", indent);
}

/* BAND_Z(z), BAND_YX(y, x): on a fixed boundary band along those axes, or
 * off the grid along a fixed axis the update does not reach along (levels
 * run ahead of and behind the grid along z, tiles past its ends along y and
 * x; reads of other fields there would leave their buffers). */
static void emit_band_macros(tess_strbuf *b, const tess_spec *s) {
    for (int part = 0; part < 2; part++) {
        tess_strbuf_puts(b, part ? "#define BAND_YX(y, x) (" : "#define BAND_Z(z) (");
        int n = 0;
        for (int a = part; a < (part ? 3 : 1); a++) {
            if (tess_spec_periodic(s, a)) continue;
            char v = tess_spec_axis_name(3, a), V = (char)(v - 'a' + 'A');
            tess_strbuf_printf(b, "%s(%c) < LO_%c || (%c) >= N%c - HI_%c", n++ ? " || " : "", v, V, v, V, V);
        }
        tess_strbuf_puts(b, n ? ")\n" : "0)\n");
    }
}

/* Passes of the walk up the chunk while `cond` holds: level 0 pushes the
 * plane loaded ahead and loads the next, levels 1..`levels` update (for
 * thread row ty, or -1: any). */
static void emit_plane_loop(tess_strbuf *b, const tess_cuda_plan *p, const char *cond, tb_bands bands, int levels,
                            int ty) {
    const tess_spec *s = p->s;
    int phases = passes(p);
    tess_strbuf_printf(b, "    for (; %s; i0 += %d) {\n", cond, phases);
    for (int phase = 0; phase < phases; phase++) {
        tess_strbuf_printf(b, "    {   /* phase %d */\n        const int i = i0 + %d;\n", phase, phase);
        emit_publish(b, p, phase);
        tess_strbuf_puts(b, "        /* level 0: plane i of the input, and plane i + 1 loaded */\n");
        for (int f = 0; f < s->nfields; f++)
            for (int j = 0; is_state(s, f) && j < p->py * p->px; j++) {
                char value[128];
                snprintf(value, sizeof value, "%s__n%d", s->field[f].name, j);
                emit_push(b, p, s->field[f].name, 0, j, value, "        ");
            }
        emit_load_ahead(b, p, "i + 1", bands, "        ");
        tess_strbuf_puts(b, "        __syncthreads();\n");
        for (int k = 1; k <= levels; k++) emit_level(b, p, k, bands, ty);
        tess_strbuf_puts(b, "    }\n");
    }
    tess_strbuf_puts(b, "    }\n");
}

/* The passes that start a chunk. The last level's first plane is Z0; level
 * L's first that a later level reads is Z0 - (TB - L)*LO_Z, which it
 * computes at i = Z0 - TB*LO_Z + L*(LO_Z + LAG). Until then its planes
 * are read by no one: loop k (0..TB-1) runs the passes up to level k+1's
 * first plane with levels 1..k only (and those that start within its last
 * pass when it runs several planes per pass). */
static void emit_warm_up(tess_strbuf *b, const tess_cuda_plan *p, tb_bands bands) {
    int w = p->s->lo[0] + tess_cuda_tb_lag(p->s);
    for (int k = 0; k < p->time_block; k++) {
        char cond[96];
        snprintf(cond, sizeof cond, "i0 < end__ && i0 < Z0 - TB * LO_Z + %d * (LO_Z + LAG)", k + 1);
        /* the last pass of loop k ends at base + P*ceil((k+1)*w / P) - 1 (passes
         * of P planes from base = Z0 - TB*LO_Z) */
        int np = passes(p), levels = (np * (((k + 1) * w + np - 1) / np) - 1) / w;
        emit_plane_loop(b, p, cond, bands, levels < p->time_block ? levels : p->time_block, -1);
    }
}

void tess_cuda_emit_tb_sweep(tess_strbuf *b, const tess_cuda_plan *p) {
    const tess_spec *s = p->s;
    int tb = p->time_block, nq = tess_cuda_tb_queue_len(s);
    tess_strbuf_printf(b, "/* Temporal blocking: TB steps per launch, pipelined along z. The block's\n"
                          " * tile: TY x TX points, of which the inner OUT_H x OUT_W are written. */\n"
                          "#define TB %d\n#define LAG %d   /* planes between levels */\n"
                          "#define TY (BY * PY)\n#define TX (BX * PX)\n"
                          "#define OUT_W (TX - TB * (LO_X + HI_X))\n#define OUT_H (TY - TB * (LO_Y + HI_Y))\n"
                          "/* Shared tiles: the block's tile and a halo that only edge points read\n"
                          " * (along x whole vectors of PX points). */\n"
                          "#define SH (TY + LO_Y + HI_Y)\n#define SW (%d + TX + %d)\n", tb, tess_cuda_tb_lag(s), pad_left(p),
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
    tess_strbuf_puts(b, "    /* The shared tiles (dynamic shared memory, one field after another). */\n"
                        "    extern __shared__ __align__(16) unsigned char tess_smem__[];\n");
    long offset = 0;
    for (int f = 0; f < s->nfields; f++) {
        if (!is_state(s, f)) continue;
        const char *type = tess_gen_ctype(s, f, p->t->dtype), *name = s->field[f].name;
        long bytes = tess_cuda_tb_field_bytes(p, f);
        if (bytes)
            tess_strbuf_printf(b, "    %s (*const %s__s)[SH][SW] = (%s (*)[SH][SW])(tess_smem__ + %ld);\n", type, name,
                               type, offset);
        offset += bytes;
        tess_strbuf_printf(b, "    /* %s: per level, the queues of each point (planes z - LO_Z .. z + LAG of\n"
                              "     * the next level's z), and the values loaded ahead. */\n", name);
        for (int k = 0; k < tb; k++)
            for (int j = 0; j < p->py * p->px; j++) {
                tess_strbuf_printf(b, "    %s ", type);
                for (int m = 0; m < nq; m++) tess_strbuf_printf(b, "%s%s__q%d_%d_%d = 0", m ? ", " : "", name, k, j, m);
                tess_strbuf_puts(b, ";\n");
            }
        tess_strbuf_printf(b, "    %s ", type);
        for (int j = 0; j < p->py * p->px; j++) tess_strbuf_printf(b, "%s%s__n%d", j ? ", " : "", name, j);
        tess_strbuf_puts(b, ";\n");
    }
    /* The halo no thread writes: zeros, so that edge points compute on numbers. */
    tess_strbuf_printf(b, "    for (int t__ = threadIdx.y * BX + threadIdx.x; t__ < %ld; t__ += BX * BY)\n"
                          "        ((unsigned *)tess_smem__)[t__] = 0;\n"
                          "    __syncthreads();\n", offset / 4);
    /* Per point: where it lies in a plane (clamped), on a band, written. */
    for (int j = 0; j < p->py * p->px; j++) {
        int r = j / p->px, c = j % p->px;
        tess_strbuf_printf(b, "    const idx_t at%d__ = (idx_t)SAFE_Y(Y0 + %d) * NX + sx%d__;\n"
                              "    const bool band_yx%d__ = BAND_YX(Y0 + %d, X0 + %d);\n"
                              "    const bool write%d__ = out_x%d__ && R__ + %d >= TB * LO_Y && R__ + %d < TB * LO_Y + OUT_H && "
                              "Y0 + %d < NY;\n", j, r, c, j, r, c, j, c, r, r, r);
    }
    tess_strbuf_puts(b, "    /* Tiles inside the grid and off the bands along y and x skip those tests\n"
                        "     * (and address their points from point 0's), and so do their passes off\n"
                        "     * the bands along z: after the lower band's planes have left the last\n"
                        "     * level, before the upper band's reach the first. */\n"
                        "    const bool edge__ = BAND_YX(Y0 - R__, X0 - C__) || BAND_YX(Y0 - R__ + TY - 1, X0 - C__ + TX - 1) ||\n"
                        "                        Y0 - R__ < 0 || Y0 - R__ + TY > NY || X0 - C__ < 0 || X0 - C__ + TX > NX;\n"
                        "    const int end__ = Z1 + TB * LAG;\n"
                        "    int i0 = Z0 - TB * LO_Z;\n");
    emit_load_ahead(b, p, "i0", BANDS_ALL, "    ");
    if (passes(p) > 1)
        tess_strbuf_printf(b, "    /* %d planes per pass: the last pass may run past Z1, writing nothing. */\n",
                           passes(p));
    tess_strbuf_puts(b, "    if (edge__) {\n");
    emit_warm_up(b, p, BANDS_ALL);
    emit_plane_loop(b, p, "i0 < end__", BANDS_ALL, tb, -1);
    tess_strbuf_puts(b, "    } else {\n");
    char clean[96];
    snprintf(clean, sizeof clean, "i0 + %d <= min(NZ, end__)", passes(p));
    emit_warm_up(b, p, BANDS_Z);
    emit_plane_loop(b, p, "i0 < end__ && i0 < LO_Z + TB * LAG", BANDS_Z, tb, -1);
    if (row_variants(p)) {
        tess_strbuf_puts(b, "    /* Levels skip the rows of their halos: the top and bottom rows of threads\n"
                            "     * run loops of their own (the same passes and barriers). */\n"
                            "    if (threadIdx.y == 0) {\n");
        emit_plane_loop(b, p, clean, BANDS_NONE, tb, 0);
        tess_strbuf_puts(b, "    } else if (threadIdx.y == BY - 1) {\n");
        emit_plane_loop(b, p, clean, BANDS_NONE, tb, p->by - 1);
        tess_strbuf_puts(b, "    } else {\n");
        emit_plane_loop(b, p, clean, BANDS_NONE, tb, -1);
        tess_strbuf_puts(b, "    }\n");
    } else
        emit_plane_loop(b, p, clean, BANDS_NONE, tb, -1);
    emit_plane_loop(b, p, "i0 < end__", BANDS_Z, tb, -1);
    tess_strbuf_puts(b, "    }\n}\n\n");
}
