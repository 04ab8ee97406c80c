/* gen_cuda.c - CUDA code generation for stencil specs.
 *
 * One thread updates PY x PX points of a plane, strided by the block shape.
 * Without streaming a 3D block covers BZ planes, one per thread. With
 * streaming (3D) a block walks up a chunk of z: each field read along its
 * own column (u[-1,0,0], u[1,0,0]) keeps that column in a register queue,
 * loading one new value per plane; reads within the plane come from a
 * shared-memory tile staged once per plane, or through the read-only cache.
 * Loads that may fall outside the grid (queues, staging) are wrapped on
 * periodic axes and clamped on fixed ones; the values so clamped are only
 * ever read by boundary points, which copy their input instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "gen_cuda.h"
#include "gen_cuda_internal.h"
#include "gen_util.h"
#include "spec_print.h"

/* Parameter positions in the space, by rank (constraints read values by position). */
enum { P3_BX, P3_BY, P3_BZ, P3_PX, P3_PY, P3_STREAM, P3_CHUNK, P3_STAGING, P3_UNROLL, P3_MINB, P3_TB };
enum { P2_BX, P2_BY, P2_PX, P2_PY, P2_STAGING, P2_MINB };

static const char *const staging_labels[] = {"ldg", "shared"};

/* ---- what each field needs ----------------------------------------------------- */

typedef struct field_use {
    bool plane;      /* read in its own plane off the centre */
    bool column;     /* read off its own plane along its column */
    int zlo, zhi;    /* column offsets, including the centre */
} field_use;

static void scan_uses(const tess_spec *s, const tess_expr *e, field_use *use) {
    for (int i = 0; i < e->nargs; i++) scan_uses(s, e->arg[i], use);
    if (e->kind != TESS_EXPR_REF || e->ref != TESS_REF_FIELD) return;
    field_use *u = &use[e->index];
    int r = s->rank, dz = r == 3 ? e->off[0] : 0;
    bool centre_column = e->off[r - 1] == 0 && e->off[r - 2] == 0;
    if (dz == 0 && !centre_column) u->plane = true;
    if (centre_column) {
        if (dz != 0) u->column = true;
        if (dz < u->zlo) u->zlo = dz;
        if (dz > u->zhi) u->zhi = dz;
    }
}

static void analyse(const tess_spec *s, field_use *use) {
    memset(use, 0, TESS_SPEC_MAX_FIELDS * sizeof *use);
    for (int i = 0; i < s->ninst; i++) scan_uses(s, s->inst[i].expr, use);
}

void tess_stencil_cuda_limits_init(const tess_spec *s, tess_dtype real, tess_stencil_cuda_limits *lim) {
    field_use use[TESS_SPEC_MAX_FIELDS];
    analyse(s, use);
    memset(lim, 0, sizeof *lim);
    lim->rank = s->rank;
    for (int f = 0; f < s->nfields; f++)
        if (use[f].plane && s->field[f].rank == s->rank)
            lim->staged_bytes += (int)tess_dtype_size(tess_spec_field_dtype(s, f, real));
    lim->halo_y = s->lo[s->rank - 2] + s->hi[s->rank - 2];
    lim->halo_x = s->lo[s->rank - 1] + s->hi[s->rank - 1];
    lim->steps = s->steps;
    lim->zring = s->rank == 3 ? s->lo[0] + s->hi[0] + 1 : 1;
    for (int f = 0; f < s->nfields; f++)
        if (s->field[f].advances >= 0)
            lim->state_bytes += (int)tess_dtype_size(tess_spec_field_dtype(s, f, real));
}

/* ---- the space ------------------------------------------------------------------ */

static bool legal_threads(double threads) { return threads >= 32 && threads <= 1024; }

static bool fits_shared(const tess_stencil_cuda_limits *lim, double bx, double by, double px, double py) {
    double tile = (by * py + lim->halo_y) * (bx * px + lim->halo_x);
    return tile * lim->staged_bytes <= TESS_STENCIL_CUDA_SMEM_MAX;
}

/* Shared memory of temporal blocking: a ring of planes per fused step but
 * the last, each tile smaller by one halo than the one before. */
static bool fits_time_blocks(const tess_stencil_cuda_limits *lim, int tb, double tx, double ty) {
    double bytes = 0;
    for (int k = 0; k < tb; k++) bytes += (ty + (tb - k) * lim->halo_y) * (tx + (tb - k) * lim->halo_x);
    return bytes * lim->zring * lim->state_bytes <= TESS_STENCIL_CUDA_SMEM_MAX;
}

static bool legal3(const double *v, void *user) {
    const tess_stencil_cuda_limits *lim = user;
    if (!legal_threads(v[P3_BX] * v[P3_BY] * v[P3_BZ])) return false;
    int tb = lim->steps > 1 ? (int)v[P3_TB] : 1;
    if (lim->steps % tb != 0 || lim->steps / tb > TESS_MAX_LAUNCHES) return false;
    if (tb > 1)   /* streams through shared tiles of its own: the other settings take fixed values */
        return v[P3_STREAM] == 1 && v[P3_BZ] == 1 && v[P3_STAGING] == 1 && v[P3_UNROLL] == 1 &&
               fits_time_blocks(lim, tb, v[P3_BX] * v[P3_PX], v[P3_BY] * v[P3_PY]);
    if (v[P3_STREAM] == 0)   /* settings of streaming take their first value */
        return v[P3_CHUNK] == 4 && v[P3_STAGING] == 0 && v[P3_UNROLL] == 1;
    if (v[P3_BZ] != 1 || v[P3_UNROLL] > v[P3_CHUNK]) return false;
    return v[P3_STAGING] == 0 || (lim->staged_bytes > 0 && fits_shared(lim, v[P3_BX], v[P3_BY], v[P3_PX], v[P3_PY]));
}

static bool legal2(const double *v, void *user) {
    const tess_stencil_cuda_limits *lim = user;
    if (!legal_threads(v[P2_BX] * v[P2_BY])) return false;
    return v[P2_STAGING] == 0 || (lim->staged_bytes > 0 && fits_shared(lim, v[P2_BX], v[P2_BY], v[P2_PX], v[P2_PY]));
}

tess_status tess_stencil_cuda_space(const tess_spec *s, const tess_task *t, const tess_device *dev,
                                    const tess_stencil_cuda_limits *lim, tess_space **out) {
    (void)dev;
    *out = NULL;
    tess_status st = tess_gen_check_task(s, t);
    if (st) return st;
    /* More steps than launches need temporal blocking (3D only), which the
     * default config then uses: the fewest steps per launch that fit. */
    bool blocked = s->steps > TESS_MAX_LAUNCHES;
    int tb_default = 0;
    for (int tb = 1; tb <= 8 && !tb_default; tb *= 2)
        if (s->steps % tb == 0 && s->steps / tb <= TESS_MAX_LAUNCHES) tb_default = tb;
    if (blocked && (s->rank != 3 || !tb_default))
        return tess_error(TESS_ERR_ARG, "stencil '%s': cuda runs at most %d launches of up to 8 fused steps (3D "
                          "only); %d steps do not fit", s->name, TESS_MAX_LAUNCHES, s->steps);
    tess_space *sp = tess_space_create();
    if (!sp) return tess_error(TESS_ERR_NOMEM, "out of memory creating a space");
    static const double bx[] = {32, 64, 128, 256}, by[] = {1, 2, 4, 8, 16}, bz[] = {1, 2, 4, 8};
    static const double ppt[] = {1, 2, 4}, unroll[] = {1, 2, 4}, minb[] = {1, 2, 4};
    st = tess_space_add(sp, "block_x", 4, bx, 0);
    if (!st) st = tess_space_add(sp, "block_y", 5, by, 3);
    if (!st && s->rank == 3) st = tess_space_add(sp, "block_z", 4, bz, 0);
    if (!st) st = tess_space_add(sp, "ppt_x", 3, ppt, 0);
    if (!st) st = tess_space_add(sp, "ppt_y", 3, ppt, 0);
    if (!st && s->rank == 3) {
        long zmax = 4;
        while (zmax < t->shape[0] && zmax < 512) zmax *= 2;
        st = tess_space_add(sp, "stream", 2, (const double[]){0, 1}, blocked);
        if (!st) st = tess_space_add_pow2(sp, "chunk", 4, zmax, 4);
    }
    if (!st) st = tess_space_add_labels(sp, "staging", 2, staging_labels, blocked);
    if (!st && s->rank == 3) st = tess_space_add(sp, "unroll", 3, unroll, 0);
    if (!st) st = tess_space_add(sp, "min_blocks", 3, minb, 0);
    if (!st && s->rank == 3 && s->steps > 1)
        st = tess_space_add(sp, "time_block", 4, (const double[]){1, 2, 4, 8}, tb_default == 8 ? 3 : tb_default / 2);
    if (!st)
        st = tess_space_add_constraint(sp, s->rank == 3 ? legal3 : legal2, (void *)lim,
                                       s->rank == 3 ? "32 <= threads <= 1024; stream=0 keeps chunk=4, staging=ldg, "
                                                      "unroll=1; stream=1 needs block_z=1, unroll <= chunk; "
                                                      "staged tiles fit 48 KiB; time_block divides steps into "
                                                      "at most 4 launches and needs stream=1, staging=shared, "
                                                      "unroll=1, its tiles fitting 48 KiB"
                                                    : "32 <= threads <= 1024; staged tiles fit 48 KiB");
    tess_config dflt;
    tess_space_default(sp, &dflt);
    if (!st && !tess_space_valid(sp, &dflt))
        st = tess_error(TESS_ERR_ARG, "stencil '%s': no default cuda config (%s)", s->name,
                        tess_space_violation(sp, &dflt));
    if (st) {
        tess_space_destroy(sp);
        return st;
    }
    *out = sp;
    return TESS_OK;
}

/* ---- expressions ----------------------------------------------------------------- */

static void queue_name(tess_strbuf *b, const char *field, int dz) {
    if (dz == 0) tess_strbuf_printf(b, "%s__q_0", field);
    else tess_strbuf_printf(b, "%s__q_%c%d", field, dz > 0 ? 'p' : 'm', abs(dz));
}

static void print_ref(tess_strbuf *b, const tess_expr *e, void *user) {
    const tess_cuda_plan *p = user;
    const tess_spec *s = p->s;
    if (tess_gen_print_named_ref(b, s, e)) return;
    int f = e->index, r = s->rank, dz = r == 3 ? e->off[0] : 0;
    const char *fname = s->field[f].name;
    bool centre_column = e->off[r - 1] == 0 && e->off[r - 2] == 0;
    if (p->queue[f] && centre_column) {
        queue_name(b, fname, dz);
        tess_strbuf_puts(b, "[j__][i__]");
    } else if (p->staged[f] && dz == 0) {
        tess_strbuf_printf(b, "%s__s[", fname);
        tess_gen_coord(b, "sy__", e->off[r - 2]);
        tess_strbuf_puts(b, "][");
        tess_gen_coord(b, "sx__", e->off[r - 1]);
        tess_strbuf_puts(b, "]");
    } else {
        int first = r - s->field[f].rank;
        tess_strbuf_printf(b, "__ldg(&%s[%s(", fname, first ? "IDX2" : "IDX");
        for (int a = first; a < r; a++) {
            char var[2] = {tess_spec_axis_name(r, a), '\0'};
            bool wrap = tess_spec_periodic(s, a) && e->off[a] != 0;
            if (a > first) tess_strbuf_puts(b, ", ");
            if (wrap) tess_strbuf_printf(b, "WRAP_%c(", var[0] - 'a' + 'A');
            tess_gen_coord(b, var, e->off[a]);
            if (wrap) tess_strbuf_puts(b, ")");
        }
        tess_strbuf_puts(b, ")])");
    }
}

void tess_cuda_print_number(tess_strbuf *b, double v, void *user) {
    tess_gen_number(b, v, ((const tess_cuda_plan *)user)->t->dtype);
}

/* ---- the generated file ---------------------------------------------------------- */

void tess_cuda_emit_params(tess_strbuf *b, const tess_cuda_plan *p, bool with_scratch) {
    const tess_spec *s = p->s;
    tess_dtype real = p->t->dtype;
    for (int f = 0; f < s->nfields; f++)
        tess_strbuf_printf(b, "%s%s%s *__restrict__ %s", f ? ", " : "", s->field[f].role == TESS_FIELD_OUT ? "" : "const ",
                         tess_gen_ctype(s, f, real), s->field[f].name);
    if (!with_scratch || s->steps == 1) return;
    for (int f = 0; f < s->nfields; f++)
        if (s->field[f].role == TESS_FIELD_OUT)
            tess_strbuf_printf(b, ", %s *__restrict__ %s__tmp", tess_gen_ctype(s, f, real), s->field[f].name);
}

static void emit_macros(tess_strbuf *b, const tess_cuda_plan *p) {
    const tess_spec *s = p->s;
    int r = s->rank;
    int64_t total = tess_shape_elements(p->t->shape, r);
    tess_strbuf_printf(b, "/* Tuning. */\n#define BX %d\n#define BY %d\n", p->bx, p->by);
    if (r == 3) tess_strbuf_printf(b, "#define BZ %d\n", p->bz);
    tess_strbuf_printf(b, "#define PX %d\n#define PY %d\n", p->px, p->py);
    if (p->stream) tess_strbuf_printf(b, "#define CHUNK %d\n", p->chunk);
    tess_strbuf_printf(b, "#define MIN_BLOCKS %d\n", p->min_blocks);
    if (p->shared)
        tess_strbuf_puts(b, "/* Shared tiles: the block's points and their halo. */\n"
                          "#define TILE_H (BY * PY + LO_Y + HI_Y)\n#define TILE_W (BX * PX + LO_X + HI_X)\n");
    tess_strbuf_printf(b, "\ntypedef %s idx_t;\n", total < (1LL << 31) ? "int" : "long long");
    if (r == 3)
        tess_strbuf_puts(b, "#define IDX(z, y, x) (((idx_t)(z) * NY + (y)) * NX + (x))\n"
                          "#define IDX2(y, x) ((idx_t)(y) * NX + (x))   /* 2D fields */\n");
    else
        tess_strbuf_puts(b, "#define IDX(y, x) ((idx_t)(y) * NX + (x))\n");
    tess_strbuf_puts(b, "/* Periodic axes: a neighbour index wrapped once. SAFE_*: an index that may be\n"
                      " * anywhere, made loadable (wrapped if periodic, clamped if fixed). */\n");
    for (int a = 0; a < r; a++) {
        char A = (char)(tess_spec_axis_name(r, a) - 'a' + 'A');
        if (tess_spec_periodic(s, a)) {
            tess_strbuf_printf(b, "#define WRAP_%c(i) ((i) < 0 ? (i) + N%c : (i) >= N%c ? (i) - N%c : (i))\n", A, A, A, A);
            tess_strbuf_printf(b, "#define SAFE_%c(i) ((((i) %% N%c) + N%c) %% N%c)\n", A, A, A, A);
        } else {
            tess_strbuf_printf(b, "#define SAFE_%c(i) min(max((i), 0), N%c - 1)\n", A, A);
        }
    }
    tess_strbuf_puts(b, "/* Points on a fixed boundary band copy their input. */\n#define ON_BAND(");
    tess_strbuf_puts(b, r == 3 ? "z, y, x) (" : "y, x) (");
    int n = 0;
    for (int a = 0; a < r; a++) {
        if (tess_spec_periodic(s, a) || (s->lo[a] == 0 && s->hi[a] == 0)) continue;
        char v = tess_spec_axis_name(r, a), V = (char)(v - 'a' + 'A');
        tess_strbuf_printf(b, "%s(%c) < LO_%c || (%c) >= N%c - HI_%c", n++ ? " || " : "", v, V, v, V, V);
    }
    tess_strbuf_puts(b, n ? ")\n\n" : "0)\n\n");
}

/* The point loop: every instance, then the stores. `z` is in scope. */
static void emit_points(tess_strbuf *b, const tess_cuda_plan *p, const char *ind) {
    const tess_spec *s = p->s;
    const char *at = s->rank == 3 ? "z, y, x" : "y, x";
    tess_strbuf_printf(b, "%s#pragma unroll\n%sfor (int j__ = 0; j__ < PY; j__++) {\n", ind, ind);
    tess_strbuf_printf(b, "%s#pragma unroll\n%s    for (int i__ = 0; i__ < PX; i__++) {\n", ind, ind);
    tess_strbuf_printf(b, "%s        const int y = Y0 + j__ * BY, x = X0 + i__ * BX;\n", ind);
    if (p->shared)
        tess_strbuf_printf(b, "%s        const int sy__ = threadIdx.y + j__ * BY + LO_Y, sx__ = threadIdx.x + i__ * BX + LO_X;\n", ind);
    tess_strbuf_printf(b, "%s        if (y >= NY || x >= NX) continue;\n", ind);
    tess_strbuf_printf(b, "%s        if (ON_BAND(%s)) {\n", ind, at);
    for (int f = 0; f < s->nfields; f++) {
        if (s->field[f].role != TESS_FIELD_OUT) continue;
        int src = s->field[f].advances;
        tess_strbuf_printf(b, "%s            %s[IDX(%s)] = ", ind, s->field[f].name, at);
        if (src >= 0) tess_strbuf_printf(b, "%s[IDX(%s)];\n", s->field[src].name, at);
        else tess_strbuf_puts(b, "0;\n");
    }
    tess_strbuf_printf(b, "%s            continue;\n%s        }\n", ind, ind);
    tess_expr_printer pr = {.c_syntax = true, .ref = print_ref, .num = tess_cuda_print_number, .user = (void *)p};
    for (int i = 0; i < s->ninst; i++) {
        int out = -1;
        for (int f = 0; f < s->nfields; f++)
            if (s->out_inst[f] == i) out = f;
        if (out >= 0) {
            tess_strbuf_printf(b, "%s        %s[IDX(%s)] = ", ind, s->field[out].name, at);
        } else {
            char name[64];
            tess_gen_inst_name(s, i, name, sizeof name);
            tess_strbuf_printf(b, "%s        const real %s = ", ind, name);
        }
        tess_expr_print(b, s->inst[i].expr, &pr);
        tess_strbuf_puts(b, ";\n");
    }
    tess_strbuf_printf(b, "%s    }\n%s}\n", ind, ind);
}

/* Loads `what` for every point of the thread: dst[j__][i__] = field at plane zexpr. */
/* Loads field f at plane zexpr + dz into its queue slot, for every point of the thread. */
static void emit_queue_load(tess_strbuf *b, const tess_cuda_plan *p, int f, int dz, const char *zexpr, const char *ind) {
    const char *fname = p->s->field[f].name;
    tess_strbuf_printf(b, "%s#pragma unroll\n%sfor (int j__ = 0; j__ < PY; j__++)\n%s#pragma unroll\n"
                          "%s    for (int i__ = 0; i__ < PX; i__++)\n%s        ", ind, ind, ind, ind, ind);
    queue_name(b, fname, dz);
    tess_strbuf_printf(b, "[j__][i__] = __ldg(&%s[IDX(SAFE_Z(", fname);
    tess_gen_coord(b, zexpr, dz);
    tess_strbuf_puts(b, "), SAFE_Y(Y0 + j__ * BY), SAFE_X(X0 + i__ * BX))]);\n");
}

static void emit_stage(tess_strbuf *b, const tess_cuda_plan *p, const char *ind) {
    const tess_spec *s = p->s;
    const char *zarg = s->rank == 3 ? "z, " : "";
    tess_strbuf_printf(b, "%s__syncthreads();   /* the previous plane's readers are done */\n", ind);
    tess_strbuf_printf(b, "%sfor (int t__ = threadIdx.y * BX + threadIdx.x; t__ < TILE_H * TILE_W; t__ += BX * BY) {\n", ind);
    tess_strbuf_printf(b, "%s    const int r__ = t__ / TILE_W, c__ = t__ %% TILE_W;\n", ind);
    for (int f = 0; f < s->nfields; f++)
        if (p->staged[f])
            tess_strbuf_printf(b, "%s    %s__s[r__][c__] = __ldg(&%s[IDX(%sSAFE_Y(TY0 + r__), SAFE_X(TX0 + c__))]);\n", ind,
                             s->field[f].name, s->field[f].name, zarg);
    tess_strbuf_printf(b, "%s}\n%s__syncthreads();\n", ind, ind);
}

static void emit_sweep(tess_strbuf *b, const tess_cuda_plan *p) {
    const tess_spec *s = p->s;
    tess_dtype real = p->t->dtype;
    tess_strbuf_puts(b, "/* One update of the grid. */\nstatic __device__ __forceinline__ void tess_sweep(");
    tess_cuda_emit_params(b, p, false);
    tess_strbuf_puts(b, ")\n{\n    /* This thread's points: x = X0 + i__ * BX, y = Y0 + j__ * BY (i__ < PX, j__ < PY). */\n"
                      "    const int X0 = blockIdx.x * (BX * PX) + threadIdx.x;\n"
                      "    const int Y0 = blockIdx.y * (BY * PY) + threadIdx.y;\n");
    if (p->shared) {
        tess_strbuf_puts(b, "    /* Origin of the block's shared tile, halo included. */\n"
                          "    const int TX0 = blockIdx.x * (BX * PX) - LO_X, TY0 = blockIdx.y * (BY * PY) - LO_Y;\n");
        for (int f = 0; f < s->nfields; f++)
            if (p->staged[f])
                tess_strbuf_printf(b, "    __shared__ %s %s__s[TILE_H][TILE_W];\n", tess_gen_ctype(s, f, real), s->field[f].name);
    }
    if (s->rank == 2) {
        if (p->shared) emit_stage(b, p, "    ");
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
    bool any_queue = false;
    for (int f = 0; f < s->nfields; f++) {
        if (!p->queue[f]) continue;
        any_queue = true;
        tess_strbuf_printf(b, "    /* Register queue: %s at planes z%+d .. z%+d of each point. */\n    %s", s->field[f].name,
                         p->qlo[f], p->qhi[f], tess_gen_ctype(s, f, real));
        for (int dz = p->qlo[f]; dz <= p->qhi[f]; dz++) {
            tess_strbuf_puts(b, dz > p->qlo[f] ? ", " : " ");
            queue_name(b, s->field[f].name, dz);
            tess_strbuf_puts(b, "[PY][PX]");
        }
        tess_strbuf_puts(b, ";\n");
        for (int dz = p->qlo[f]; dz < p->qhi[f]; dz++) emit_queue_load(b, p, f, dz, "Z0", "    ");
    }
    tess_strbuf_printf(b, "#pragma unroll %d\n    for (int z = Z0; z < Z1; z++) {\n", p->unroll);
    for (int f = 0; f < s->nfields; f++)
        if (p->queue[f]) emit_queue_load(b, p, f, p->qhi[f], "z", "        ");
    if (p->shared) emit_stage(b, p, "        ");
    emit_points(b, p, "        ");
    if (any_queue) tess_strbuf_puts(b, "        /* Move the queues up one plane. */\n");
    for (int f = 0; f < s->nfields; f++) {
        if (!p->queue[f] || p->qlo[f] == p->qhi[f]) continue;
        tess_strbuf_puts(b, "#pragma unroll\n        for (int j__ = 0; j__ < PY; j__++)\n#pragma unroll\n"
                            "            for (int i__ = 0; i__ < PX; i__++) {\n");
        for (int dz = p->qlo[f]; dz < p->qhi[f]; dz++) {
            tess_strbuf_puts(b, "                ");
            queue_name(b, s->field[f].name, dz);
            tess_strbuf_puts(b, "[j__][i__] = ");
            queue_name(b, s->field[f].name, dz + 1);
            tess_strbuf_puts(b, "[j__][i__];\n");
        }
        tess_strbuf_puts(b, "            }\n");
    }
    tess_strbuf_puts(b, "    }\n}\n\n");
}

/* One __global__ entry per time step; step k reads what step k-1 wrote, and
 * steps alternate between each output and its scratch buffer so that the
 * last one writes the output. */
/* One __global__ entry per launch, each running time_block steps; launch k
 * reads what launch k-1 wrote, and launches alternate between each output
 * and its scratch buffer so that the last one writes the output. */
static void emit_entries(tess_strbuf *b, const tess_cuda_plan *p, tess_kernel_source *out) {
    const tess_spec *s = p->s;
    int n = s->steps / p->time_block;
    for (int k = 0; k < n; k++) {
        tess_launch *l = &out->launch[k];
        if (n == 1) snprintf(l->entry, sizeof l->entry, "%s_cuda", s->name);
        else snprintf(l->entry, sizeof l->entry, "%s_cuda_launch%d", s->name, k);
        tess_strbuf_printf(b, "extern \"C\" __global__ void __launch_bounds__(BX * BY%s, MIN_BLOCKS)\n%s(",
                           s->rank == 3 ? " * BZ" : "", l->entry);
        tess_cuda_emit_params(b, p, true);
        tess_strbuf_puts(b, ")\n{\n    tess_sweep(");
        for (int f = 0; f < s->nfields; f++) {
            int adv_by = -1;
            for (int g = 0; g < s->nfields; g++)
                if (s->field[g].advances == f) adv_by = g;
            const char *name = s->field[f].name;
            bool to_out = (n - 1 - k) % 2 == 0, prev_out = (n - k) % 2 == 0;
            if (f) tess_strbuf_puts(b, ", ");
            if (s->field[f].role == TESS_FIELD_OUT) tess_strbuf_printf(b, to_out ? "%s" : "%s__tmp", name);
            else if (adv_by >= 0 && k > 0) tess_strbuf_printf(b, prev_out ? "%s" : "%s__tmp", s->field[adv_by].name);
            else tess_strbuf_puts(b, name);
        }
        tess_strbuf_puts(b, ");\n}\n\n");
    }
    out->nlaunches = n;
}

static void geometry(const tess_cuda_plan *p, tess_launch *l) {
    const int64_t *n = p->t->shape;
    int r = p->s->rank;
    l->block[0] = (unsigned)p->bx;
    l->block[1] = (unsigned)p->by;
    l->block[2] = r == 3 && !p->stream ? (unsigned)p->bz : 1;
    l->grid[0] = (unsigned)((n[r - 1] + p->bx * p->px - 1) / (p->bx * p->px));
    l->grid[1] = (unsigned)((n[r - 2] + p->by * p->py - 1) / (p->by * p->py));
    l->grid[2] = r == 2 ? 1 : (unsigned)((n[0] + (p->stream ? p->chunk : p->bz) - 1) / (p->stream ? p->chunk : p->bz));
    l->shared_bytes = 0;
}

tess_status tess_stencil_cuda_emit(const tess_spec *s, const tess_task *t, const tess_space *sp,
                                   const tess_config *c, tess_kernel_source *out) {
    memset(out, 0, sizeof *out);
    tess_status st = tess_gen_check_task(s, t);
    if (st) return st;
    tess_cuda_plan p = {.s = s, .t = t};
    p.time_block = s->rank == 3 && s->steps > 1 ? tess_gen_param(sp, c, "time_block") : 1;
    if (p.time_block < 1 || s->steps % p.time_block || s->steps / p.time_block > TESS_MAX_LAUNCHES)
        return tess_error(TESS_ERR_ARG, "stencil '%s': %d steps do not split into at most %d launches of "
                          "time_block=%d", s->name, s->steps, TESS_MAX_LAUNCHES, p.time_block);
    p.bx = tess_gen_param(sp, c, "block_x");
    p.by = tess_gen_param(sp, c, "block_y");
    p.bz = s->rank == 3 ? tess_gen_param(sp, c, "block_z") : 1;
    p.px = tess_gen_param(sp, c, "ppt_x");
    p.py = tess_gen_param(sp, c, "ppt_y");
    p.stream = s->rank == 3 && tess_gen_param(sp, c, "stream") != 0;
    p.chunk = p.stream ? tess_gen_param(sp, c, "chunk") : 1;
    p.unroll = p.stream ? tess_gen_param(sp, c, "unroll") : 1;
    p.min_blocks = tess_gen_param(sp, c, "min_blocks");
    p.shared = strcmp(tess_gen_label(sp, c, "staging"), "shared") == 0 && (s->rank == 2 || p.stream);
    if (p.bx < 1 || p.by < 1 || p.bz < 1 || p.px < 1 || p.py < 1 || p.chunk < 1 || p.unroll < 1 || p.min_blocks < 1)
        return tess_error(TESS_ERR_ARG, "stencil '%s': the config lacks a cuda tunable", s->name);
    field_use use[TESS_SPEC_MAX_FIELDS];
    analyse(s, use);
    bool any_staged = false;
    for (int f = 0; f < s->nfields; f++) {
        p.staged[f] = p.shared && use[f].plane && s->field[f].rank == s->rank;
        p.queue[f] = p.stream && use[f].column && s->field[f].rank == 3;
        p.qlo[f] = use[f].zlo;
        p.qhi[f] = use[f].zhi;
        any_staged |= p.staged[f];
    }
    p.shared = any_staged && p.time_block == 1;
    geometry(&p, &out->launch[0]);
    if (out->launch[0].grid[1] > 65535 || out->launch[0].grid[2] > 65535)
        return tess_error(TESS_ERR_ARG, "stencil '%s': the grid of blocks exceeds 65535 along y or z", s->name);
    char config[512] = "";
    tess_config_format(sp, c, config, sizeof config);

    tess_strbuf b = {0};
    tess_gen_header(&b, s, t, "cuda", config);
    tess_strbuf_puts(&b, "\n");
    tess_gen_prelude(&b, s, t, "static __device__ __forceinline__");
    emit_macros(&b, &p);
    if (p.time_block > 1) tess_cuda_emit_tb_sweep(&b, &p);
    else emit_sweep(&b, &p);
    emit_entries(&b, &p, out);
    for (int i = 1; i < out->nlaunches; i++) {
        char entry[sizeof out->launch[i].entry];
        memcpy(entry, out->launch[i].entry, sizeof entry);
        out->launch[i] = out->launch[0];
        memcpy(out->launch[i].entry, entry, sizeof entry);
    }
    return tess_strbuf_finish(&b, &out->code);
}
