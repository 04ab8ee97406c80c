/*
 * lbm_gen.c - the per-cell update shared by the C/OpenMP and CUDA
 * generators: lattice constants, then lbm_pull() (a cell's loads into an
 * lbm_pulled), lbm_update() (boundary rules, collision, stores) and
 * lbm_cell() (both), as straight-line code with every velocity, weight and
 * boundary term folded into literals, so neither compiler needs to unroll
 * loops over tables.
 *
 * The template that follows it supplies nothing; what it needs above it:
 * STORE (storage type), REAL (compute type), LD(v) (a STORE as REAL),
 * ST(v) (a REAL as STORE), QUAL (function qualifiers) and RESTRICT.
 */
#include <stdio.h>
#include "core/error.h"
#include "lattice.h"

/* "+ ux", "- uy", "" for velocity component c times variable v. */
static void lbm_term(tess_strbuf *b, int c, const char *v, bool *first) {
    if (c == 0) return;
    tess_strbuf_printf(b, "%s%s", c > 0 ? (*first ? "" : " + ") : (*first ? "-" : " - "), v);
    *first = false;
}

/* The sum over directions of c_i[a] * f_i (a < 0: of f_i). */
static void lbm_sum(tess_strbuf *b, const lbm_lattice *L, int a, const char *f) {
    bool first = true;
    char v[16];
    for (int i = 0; i < L->q; i++) {
        snprintf(v, sizeof v, "%s%d", f, i);
        lbm_term(b, a < 0 ? 1 : L->c[i][a], v, &first);
    }
    if (first) tess_strbuf_puts(b, "(REAL)0");
}

/* Moments of f0..f(Q-1): drho, ux, uy, uz, usq in a block's locals. */
static void lbm_emit_moments(tess_strbuf *b, const lbm_lattice *L, const char *f, const char *pre) {
    static const char *const axis[3] = {"x", "y", "z"};
    tess_strbuf_printf(b, "%sconst REAL drho = ", pre);
    lbm_sum(b, L, -1, f);
    tess_strbuf_printf(b, ";\n%sconst REAL inv_rho = (REAL)1 / ((REAL)1 + drho);\n", pre);
    for (int a = 0; a < 3; a++) {
        tess_strbuf_printf(b, "%sconst REAL u%s = (", pre, axis[a]);
        lbm_sum(b, L, a, f);
        tess_strbuf_puts(b, ") * inv_rho;\n");
    }
    tess_strbuf_printf(b, "%sconst REAL usq = (REAL)1.5 * (ux * ux + uy * uy + uz * uz);\n", pre);
}

/* cu = 3 c_i . u */
static void lbm_emit_cu(tess_strbuf *b, const lbm_lattice *L, int i) {
    static const char *const u[3] = {"ux", "uy", "uz"};
    bool first = true;
    tess_strbuf_puts(b, "(REAL)3 * (");
    for (int a = 0; a < 3; a++) lbm_term(b, L->c[i][a], u[a], &first);
    if (first) tess_strbuf_puts(b, "(REAL)0");
    tess_strbuf_puts(b, ")");
}

/* Appends "+ OFF" for the offset of axis a upstream of velocity component c
 * (x: 1, y: NX, z: NX * NY cells), wrapping around the periodic edge. */
static void lbm_upstream(tess_strbuf *b, int a, int c) {
    static const char *const minus[3] = {"xm", "ym", "zm"}, *const plus[3] = {"xp", "yp", "zp"};
    if (c != 0) tess_strbuf_printf(b, " + %s", c > 0 ? minus[a] : plus[a]);
}

/* "const lbm_index xm = x == 0 ? +(N - 1) * S : -S, xp = ..." for one axis. */
static void lbm_emit_offsets(tess_strbuf *b, const char *v, char axis, int64_t n, int64_t stride) {
    tess_strbuf_printf(b, "    const lbm_index %cm = %s == 0 ? (lbm_index)%lld : (lbm_index)-%lld, "
                          "%cp = %s == %lld ? (lbm_index)-%lld : (lbm_index)%lld;\n",
                       axis, v, (long long)((n - 1) * stride), (long long)stride, axis, v, (long long)(n - 1),
                       (long long)((n - 1) * stride), (long long)stride);
}

const char *const lbm_boundary_labels[2] = {"branch", "select"};

/* The cell's own populations: s0..s(Q-1) as stored (from g, or with
 * selects from the pull, which loaded them with the rest), o0..o(Q-1)
 * converted (every one, so that no conversion sits in a branch of its own). */
static void lbm_emit_own(tess_strbuf *b, int q, bool pulled, const char *ind) {
    for (int i = 0; i < q; i++)
        if (pulled) tess_strbuf_printf(b, "%sconst STORE s%d = in->s%d;\n", ind, i, i);
        else tess_strbuf_printf(b, "%sconst STORE s%d = g[IDX(%d, c)];\n", ind, i, i);
    for (int i = 0; i < q; i++) tess_strbuf_printf(b, "%sconst REAL o%d = LD(s%d);\n", ind, i, i);
}

/* The boundary rules: bounce-back (with Ladd's term next to moving walls)
 * and, next to outlets, the equilibrium at density 1 and the cell's own
 * velocity, which its populations after the last collision still carry.
 * Every solid upstream cell first bounces back (an outlet's directions are
 * then replaced), and Ladd's term is left out where c_i . u_w is 0. */
static void lbm_emit_rules(tess_strbuf *b, const lbm_params *p, const char *ind) {
    const lbm_lattice *L = p->lat;
    tess_strbuf_printf(b, "%sunsigned outlet = 0;   /* directions whose upstream cell is an outlet */\n", ind);
    for (int i = 1; i < L->q; i++) {
        const int *ci = L->c[i];
        double cu = ci[0] * p->u_wall[0] + ci[1] * p->u_wall[1] + ci[2] * p->u_wall[2];
        tess_strbuf_printf(b, "%sif (k%d == 3) outlet |= %uu;\n%sif (k%d != 0) f%d = o%d", ind, i, 1u << i, ind, i, i,
                           L->opp[i]);
        if (cu != 0) tess_strbuf_printf(b, " + (k%d == 2 ? (REAL)%.17g : (REAL)0)", i, 6.0 * L->w[i] * cu);
        tess_strbuf_puts(b, ";\n");
    }
    char inner[32];
    snprintf(inner, sizeof inner, "%s    ", ind);
    tess_strbuf_printf(b, "%sif (outlet) {\n", ind);
    lbm_emit_moments(b, L, "o", inner);
    tess_strbuf_printf(b, "%s(void)drho;\n", inner);
    /* a pair of opposite directions shares the even part of the equilibrium */
    for (int i = 1; i < L->q; i++) {
        const int o = L->opp[i];
        if (o < i) continue;
        tess_strbuf_printf(b, "%s{\n%s    const REAL cu = ", inner, inner);
        lbm_emit_cu(b, L, i);
        tess_strbuf_printf(b, ";\n%s    const REAL even = (REAL)%.17g * ((REAL)0.5 * cu * cu - usq), odd = (REAL)%.17g * cu;\n"
                              "%s    if (outlet & %uu) f%d = even + odd;\n%s    if (outlet & %uu) f%d = even - odd;\n%s}\n",
                           inner, L->w[i], L->w[i], inner, 1u << i, i, inner, 1u << o, o, inner);
    }
    tess_strbuf_printf(b, "%s}\n", ind);
}

/* The result of direction i: `expr`, or with `keep` the cell's own
 * population where the cell is not fluid (a select, computed in every cell). */
static void lbm_emit_result(tess_strbuf *b, int i, bool keep, const char *expr) {
    if (keep) tess_strbuf_printf(b, "    out->r%d = k0 != 0 ? o%d : %s;\n", i, i, expr);
    else tess_strbuf_printf(b, "    out->r%d = %s;\n", i, expr);
}

/* The collision of f0..f(Q-1) into the result r (in the compute type, which
 * the stores convert). A pair of opposite directions i, o shares the even
 * part of its equilibrium, and their odd parts differ in sign only:
 * feq = even +- odd. */
static void lbm_emit_collide(tess_strbuf *b, const lbm_params *p, bool keep) {
    const lbm_lattice *L = p->lat;
    char expr[160];
    lbm_emit_moments(b, L, "f", "    ");
    tess_strbuf_printf(b, "    const REAL rho = (REAL)1 + drho;\n"
                          "    const REAL eq0 = (REAL)%.17g * (drho - rho * usq);\n", L->w[0]);
    snprintf(expr, sizeof expr, "f0 - (REAL)%.17g * (f0 - eq0)", p->omega);
    lbm_emit_result(b, 0, keep, expr);
    for (int i = 1; i < L->q; i++) {
        const int o = L->opp[i];
        if (o < i) continue;
        tess_strbuf_printf(b, "    const REAL cu%d = ", i);
        lbm_emit_cu(b, L, i);
        tess_strbuf_printf(b, ";\n    const REAL even%d = (REAL)%.17g * (drho + rho * ((REAL)0.5 * cu%d * cu%d - usq)),"
                              " odd%d = (REAL)%.17g * rho * cu%d;\n", i, L->w[i], i, i, i, L->w[i], i);
        if (p->trt) {
            /* the sum and the difference of the pair's non-equilibrium parts */
            tess_strbuf_printf(b, "    const REAL sum%d = f%d + f%d - (REAL)2 * even%d, dif%d = f%d - f%d - (REAL)2 * odd%d;\n",
                               i, i, o, i, i, i, o, i);
            snprintf(expr, sizeof expr, "f%d - (REAL)%.17g * sum%d - (REAL)%.17g * dif%d", i, 0.5 * p->omega, i,
                     0.5 * p->omega_minus, i);
            lbm_emit_result(b, i, keep, expr);
            snprintf(expr, sizeof expr, "f%d - (REAL)%.17g * sum%d + (REAL)%.17g * dif%d", o, 0.5 * p->omega, i,
                     0.5 * p->omega_minus, i);
            lbm_emit_result(b, o, keep, expr);
        } else {
            snprintf(expr, sizeof expr, "f%d - (REAL)%.17g * (f%d - even%d - odd%d)", i, p->omega, i, i, i);
            lbm_emit_result(b, i, keep, expr);
            snprintf(expr, sizeof expr, "f%d - (REAL)%.17g * (f%d - even%d + odd%d)", o, p->omega, o, i, i);
            lbm_emit_result(b, o, keep, expr);
        }
    }
}

/* The cell's code is straight-line so that every load is issued before any
 * of them is used: the flags and populations of all upstream neighbours are
 * read unconditionally (a pull from a solid cell reads its unchanged values,
 * which the boundary rules then replace). Branching on each neighbour's kind
 * before its load would leave one load in flight per thread. The cell's own
 * populations, which bounce-back, outlets and solid cells need, are read
 * only next to a boundary (`select` false: a branch, which skips them in the
 * bulk of a flow) or always, in the pull with the rest (`select`: no branch
 * at all, so a loop over cells vectorizes, and solid cells keep their own
 * populations by a select). */

/* "    const lbm_index n5 = c + ym + zm;": the upstream neighbour of
 * direction i, or with `row` the row segment upstream of it along y and z
 * only (x is left to the pull of the segment). */
static void lbm_emit_neighbour(tess_strbuf *b, const lbm_lattice *L, int i, bool row) {
    tess_strbuf_printf(b, "    const lbm_index n%d = c", i);
    for (int a = row ? 1 : 0; a < L->dim; a++) lbm_upstream(b, a, L->c[i][a]);
    tess_strbuf_puts(b, ";\n");
}

/* The lattice's constants, the index type and lbm_pulled, lbm_result. */
static void lbm_emit_types(const lbm_params *p, bool select, tess_strbuf *b) {
    const int q = p->lat->q;
    /* 32-bit indices where every population's index fits, which saves the
     * 64-bit address arithmetic of each of the 2 Q accesses */
    const bool narrow = p->cells * q < ((int64_t)1 << 31);
    tess_strbuf_printf(b,
        "#define Q %d\n#define NX %lld\n#define NY %lld\n#define NZ %lld\n#define NCELLS %lld\n"
        "typedef %s lbm_index;\n",
        q, (long long)p->nx, (long long)p->ny, (long long)p->nz, (long long)p->cells,
        narrow ? "int" : "long long");
    if (p->aos)
        tess_strbuf_puts(b, "#define IDX(i, n) ((n) * Q + (i))   /* cell-major */\n");
    else
        tess_strbuf_puts(b, "#define IDX(i, n) ((lbm_index)(i) * NCELLS + (n))   /* direction-major */\n");
    /* The kind of the cell at index n, (dx, dy, dz) from the pulling cell: from
     * flags unless the backend reads it elsewhere (a tile in shared memory). */
    tess_strbuf_puts(b, "#ifndef LBM_FLAG\n#define LBM_FLAG(n, dx, dy, dz) flags[n]\n#endif\n");
    tess_strbuf_printf(b, "\n/* What a cell pulls: its index, its kind and its upstream neighbours' kinds and\n"
                          " * populations (k_i, f_i: of the neighbour at -c_i, as stored)%s. */\n"
                          "typedef struct lbm_pulled {\n    lbm_index c;\n    int k0",
                       select ? ", and its own populations s_i" : "");
    for (int i = 1; i < q; i++) tess_strbuf_printf(b, ", k%d", i);
    tess_strbuf_puts(b, ";\n    STORE f0");
    for (int i = 1; i < q; i++) tess_strbuf_printf(b, ", f%d", i);
    if (select) {
        tess_strbuf_puts(b, ";\n    STORE s0");
        for (int i = 1; i < q; i++) tess_strbuf_printf(b, ", s%d", i);
    }
    tess_strbuf_puts(b, ";\n} lbm_pulled;\n\n/* What a cell stores: its populations after the step, before the\n"
                        " * conversion to the storage type. */\n"
                        "typedef struct lbm_result {\n    REAL r0");
    for (int i = 1; i < q; i++) tess_strbuf_printf(b, ", r%d", i);
    tess_strbuf_puts(b, ";\n} lbm_result;\n\n");
}

/* lbm_pull: one cell's loads; with LBM_TILE the kinds come later, from
 * lbm_pull_kinds (after the tile is filled, so the two overlap). */
static void lbm_emit_pull(const lbm_params *p, bool select, tess_strbuf *b) {
    const lbm_lattice *L = p->lat;
    const int q = L->q;
    tess_strbuf_puts(b,
        "QUAL void lbm_pull(const STORE *RESTRICT g, const unsigned char *RESTRICT flags, int x, int y, int z,\n"
        "                   lbm_pulled *in)\n{\n"
        "    const lbm_index c = ((lbm_index)z * NY + y) * NX + x;\n");
    lbm_emit_offsets(b, "x", 'x', p->nx, 1);
    lbm_emit_offsets(b, "y", 'y', p->ny, p->nx);
    if (L->dim == 3) lbm_emit_offsets(b, "z", 'z', p->nz, p->nx * p->ny);
    tess_strbuf_puts(b, "    in->c = c;\n#if !LBM_TILE\n    in->k0 = LBM_FLAG(c, 0, 0, 0);\n#endif\n"
                        "    in->f0 = g[IDX(0, c)];\n");
    for (int i = 1; i < q; i++) {
        lbm_emit_neighbour(b, L, i, false);
        tess_strbuf_printf(b, "#if !LBM_TILE\n    in->k%d = LBM_FLAG(n%d, %d, %d, %d);\n#endif\n"
                              "    in->f%d = g[IDX(%d, n%d)];\n", i, i, -L->c[i][0], -L->c[i][1], -L->c[i][2], i, i, i);
    }
    if (select) {
        tess_strbuf_puts(b, "    in->s0 = in->f0;\n");
        for (int i = 1; i < q; i++) tess_strbuf_printf(b, "    in->s%d = g[IDX(%d, c)];\n", i, i);
    }
    tess_strbuf_puts(b, "}\n\n#if LBM_TILE\n"
                        "QUAL void lbm_pull_kinds(int x, int y, int z, lbm_pulled *in)\n{\n"
                        "    in->k0 = LBM_FLAG(0, 0, 0, 0);\n");
    for (int i = 1; i < q; i++)
        tess_strbuf_printf(b, "    in->k%d = LBM_FLAG(0, %d, %d, %d);\n", i, -L->c[i][0], -L->c[i][1], -L->c[i][2]);
    tess_strbuf_puts(b, "}\n#endif\n");
}

tess_status lbm_emit_cell(const lbm_params *p, bool select, tess_strbuf *b) {
    const lbm_lattice *L = p->lat;
    const int q = L->q;
    lbm_emit_types(p, select, b);
    lbm_emit_pull(p, select, b);
    tess_strbuf_printf(b, "\n"
        "/* The update of a pulled cell: bounce-back from walls, Ladd's term from moving\n"
        " * walls, the equilibrium at density 1 from outlets, collision (%s).\n"
        " * Solid, lid, inlet and outlet cells keep their populations. */\n"
        "QUAL void lbm_update(const STORE *RESTRICT g, const lbm_pulled *in, lbm_result *out)\n{\n",
        p->trt ? "TRT" : "BGK");
    if (select) tess_strbuf_puts(b, "    (void)g;\n");
    else tess_strbuf_puts(b, "    const lbm_index c = in->c;\n");
    for (int i = 0; i < q; i++)
        tess_strbuf_printf(b, "    const int k%d = in->k%d;\n    %sREAL f%d = LD(in->f%d);\n", i, i, i ? "" : "const ", i,
                           i);
    if (select) {
        lbm_emit_own(b, q, true, "    ");
        lbm_emit_rules(b, p, "    ");
    } else {
        tess_strbuf_puts(b, "    if ((k0");
        for (int i = 1; i < q; i++) tess_strbuf_printf(b, " | k%d", i);
        tess_strbuf_puts(b, ") != 0) {   /* next to a boundary, or not fluid */\n");
        lbm_emit_own(b, q, false, "        ");
        tess_strbuf_puts(b, "        if (k0 != 0) {\n");
        for (int i = 0; i < q; i++) tess_strbuf_printf(b, "            out->r%d = o%d;\n", i, i);
        tess_strbuf_puts(b, "            return;\n        }\n");
        lbm_emit_rules(b, p, "        ");
        tess_strbuf_puts(b, "    }\n");
    }
    lbm_emit_collide(b, p, select);
    tess_strbuf_puts(b, "}\n\nQUAL void lbm_store(STORE *RESTRICT go, lbm_index c, const lbm_result *out)\n{\n");
    for (int i = 0; i < q; i++) tess_strbuf_printf(b, "    go[IDX(%d, c)] = ST(out->r%d);\n", i, i);
    tess_strbuf_printf(b, "}\n\n"
        "/* One %s cell. */\n"
        "QUAL void lbm_cell(const STORE *RESTRICT g, const unsigned char *RESTRICT flags, STORE *RESTRICT go,\n"
        "                   int x, int y, int z)\n{\n"
        "    lbm_pulled in;\n    lbm_result out;\n    lbm_pull(g, flags, x, y, z, &in);\n"
        "    lbm_update(g, &in, &out);\n    lbm_store(go, in.c, &out);\n}\n\n",
        L->name);
    return TESS_OK;
}

tess_status lbm_emit_row(const lbm_params *p, bool select, int cpx, int store_bytes, const char *pack2,
                         tess_strbuf *b) {
    const lbm_lattice *L = p->lat;
    const int q = L->q;
    if (p->aos || cpx < 2 || p->nx % cpx != 0)
        return tess_error(TESS_ERR_ARG, "lattice rows of %d cells per thread need the soa layout and x extents"
                          " that they divide (%lld)", cpx, (long long)p->nx);
    tess_strbuf_printf(b,
        "/* A row segment of CPX cells as one vector: a load or store of it is one\n"
        " * access per thread. */\n"
        "typedef struct LBM_ALIGN(%d) lbm_vstore {\n    STORE v[%d];\n} lbm_vstore;\n"
        "typedef struct LBM_ALIGN(%d) lbm_vkind {\n    unsigned char v[%d];\n} lbm_vkind;\n\n"
        "/* The cells x0 .. x0 + %d of row (y, z), x0 a multiple of %d: per direction one\n"
        " * vector load of the row segment upstream along y and z (and of its kinds); a\n"
        " * direction with c_x != 0 needs one cell beyond that segment, which the next lane\n"
        " * (the lanes of a warp hold consecutive segments of the row) loaded as part of its\n"
        " * own and passes on by a shuffle. The warp's end lanes and the segments at the\n"
        " * row's ends load it themselves (wrapping around). Every lane of the warp calls\n"
        " * this with the same y and z. */\n"
        "QUAL void lbm_pull_row(const STORE *RESTRICT g, const unsigned char *RESTRICT flags, int x0, int y, int z,\n"
        "                       int lane, lbm_pulled *in)\n{\n"
        "    const lbm_index c = ((lbm_index)z * NY + y) * NX + x0;\n",
        cpx * store_bytes, cpx, cpx, cpx, cpx - 1, cpx);
    lbm_emit_offsets(b, "y", 'y', p->ny, p->nx);
    if (L->dim == 3) lbm_emit_offsets(b, "z", 'z', p->nz, p->nx * p->ny);
    tess_strbuf_printf(b,
        "    const lbm_index xm = x0 == 0 ? (lbm_index)%lld : (lbm_index)-1, xp = x0 == %lld ? (lbm_index)%lld : (lbm_index)%d;\n"
        "    const bool lo = lane == 0 || x0 == 0, hi = lane == 31 || x0 == %lld;\n",
        (long long)(p->nx - 1), (long long)(p->nx - cpx), (long long)(cpx - p->nx), cpx, (long long)(p->nx - cpx));
    for (int i = 0; i < q; i++) {
        const int cx = L->c[i][0];
        lbm_emit_neighbour(b, L, i, true);
        tess_strbuf_printf(b, "    const lbm_vstore v%d = *(const lbm_vstore *)&g[IDX(%d, n%d)];\n"
                              "    const lbm_vkind w%d = *(const lbm_vkind *)&flags[n%d];\n", i, i, i, i, i);
        if (cx != 0)
            tess_strbuf_printf(b, "    STORE e%d = 0;\n    int q%d = 0;\n"
                                  "    if (%s) {\n        e%d = g[IDX(%d, n%d + %s)];\n        q%d = flags[n%d + %s];\n    }\n",
                               i, i, cx > 0 ? "lo" : "hi", i, i, i, cx > 0 ? "xm" : "xp", i, i, cx > 0 ? "xm" : "xp");
    }
    if (select)
        for (int i = 1; i < q; i++)
            tess_strbuf_printf(b, "    const lbm_vstore s%d = *(const lbm_vstore *)&g[IDX(%d, c)];\n", i, i);
    tess_strbuf_puts(b, "    /* after every load: the cells beyond the segment from the next lanes */\n");
    for (int i = 1; i < q; i++) {
        const int cx = L->c[i][0];
        if (cx == 0) continue;
        const char *dir = cx > 0 ? "up" : "down", *own = cx > 0 ? "lo" : "hi";
        const int from = cx > 0 ? cpx - 1 : 0;
        tess_strbuf_printf(b, "    const STORE a%d = lbm_shfl_%s(v%d.v[%d]);\n"
                              "    const int b%d = lbm_shfl_%s_kind(w%d.v[%d]);\n"
                              "    if (!%s) {\n        e%d = a%d;\n        q%d = b%d;\n    }\n",
                           i, dir, i, from, i, dir, i, from, own, i, i, i, i);
    }
    for (int k = 0; k < cpx; k++) {
        tess_strbuf_printf(b, "    in[%d].c = c + %d;\n", k, k);
        for (int i = 0; i < q; i++) {
            const int cx = L->c[i][0], j = k - cx;   /* the element of the segment upstream */
            if (j < 0 || j >= cpx)
                tess_strbuf_printf(b, "    in[%d].k%d = q%d;\n    in[%d].f%d = e%d;\n", k, i, i, k, i, i);
            else
                tess_strbuf_printf(b, "    in[%d].k%d = w%d.v[%d];\n    in[%d].f%d = v%d.v[%d];\n", k, i, i, j, k, i, i, j);
            if (select) tess_strbuf_printf(b, "    in[%d].s%d = %s%d.v[%d];\n", k, i, i ? "s" : "v", i, k);
        }
    }
    tess_strbuf_puts(b, "}\n\n/* The stores of a row segment's results: a vector store per direction. */\n");
    if (pack2)
        tess_strbuf_printf(b, "typedef struct LBM_ALIGN(%d) lbm_vword {\n    unsigned v[%d];\n} lbm_vword;\n\n",
                           cpx * store_bytes, cpx / 2);
    tess_strbuf_puts(b, "QUAL void lbm_store_row(STORE *RESTRICT go, lbm_index c, const lbm_result *out)\n{\n");
    for (int i = 0; i < q; i++) {
        tess_strbuf_printf(b, "    {\n        %s r;\n", pack2 ? "lbm_vword" : "lbm_vstore");
        if (pack2)   /* two cells' results converted into one word */
            for (int k = 0; k < cpx; k += 2)
                tess_strbuf_printf(b, "        r.v[%d] = %s(out[%d].r%d, out[%d].r%d);\n", k / 2, pack2, k, i, k + 1, i);
        else
            for (int k = 0; k < cpx; k++) tess_strbuf_printf(b, "        r.v[%d] = ST(out[%d].r%d);\n", k, k, i);
        tess_strbuf_printf(b, "        *(%s *)&go[IDX(%d, c)] = r;\n    }\n", pack2 ? "lbm_vword" : "lbm_vstore", i);
    }
    tess_strbuf_puts(b, "}\n\n");
    return TESS_OK;
}
