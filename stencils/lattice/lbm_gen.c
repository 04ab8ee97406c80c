/*
 * lbm_gen.c - the per-cell update shared by the C/OpenMP and CUDA
 * generators: lattice constants, then lbm_cell() as straight-line code with
 * every velocity, weight and boundary term folded into literals, so neither
 * compiler needs to unroll loops over tables.
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

/* The neighbour coordinate of axis a upstream of velocity component c. */
static const char *lbm_upstream(int a, int c) {
    static const char *const same[3] = {"x", "y", "z"}, *const minus[3] = {"xm", "ym", "zm"},
                             *const plus[3] = {"xp", "yp", "zp"};
    return c > 0 ? minus[a] : c < 0 ? plus[a] : same[a];
}

tess_status lbm_emit_cell(const lbm_params *p, tess_strbuf *b) {
    const lbm_lattice *L = p->lat;
    const int q = L->q;
    tess_strbuf_printf(b,
        "#define Q %d\n#define NX %lld\n#define NY %lld\n#define NZ %lld\n#define NCELLS %lldLL\n",
        q, (long long)p->nx, (long long)p->ny, (long long)p->nz, (long long)p->cells);
    if (p->aos)
        tess_strbuf_puts(b, "#define IDX(i, n) ((long long)(n) * Q + (i))   /* cell-major */\n");
    else
        tess_strbuf_puts(b, "#define IDX(i, n) ((long long)(i) * NCELLS + (n))   /* direction-major */\n");
    tess_strbuf_printf(b,
        "\n/* One %s cell: pull the post-collision populations g_i - w_i of the upstream\n"
        " * neighbours (bounce-back from walls, Ladd's term from moving walls, the\n"
        " * equilibrium at density 1 from outlets), collide (%s), store. */\n"
        "QUAL void lbm_cell(const STORE *RESTRICT g, const int *RESTRICT flags, STORE *RESTRICT go,\n"
        "                   int x, int y, int z)\n{\n"
        "    const long long c = ((long long)z * NY + y) * NX + x;\n"
        "    if (flags[c] != 0) {   /* solid, lid, inlet and outlet cells keep their populations */\n",
        L->name, p->trt ? "TRT" : "BGK");
    for (int i = 0; i < q; i++) tess_strbuf_printf(b, "        go[IDX(%d, c)] = g[IDX(%d, c)];\n", i, i);
    tess_strbuf_puts(b,
        "        return;\n    }\n"
        "    const int xm = x == 0 ? NX - 1 : x - 1, xp = x == NX - 1 ? 0 : x + 1;\n"
        "    const int ym = y == 0 ? NY - 1 : y - 1, yp = y == NY - 1 ? 0 : y + 1;\n");
    if (L->dim == 3) tess_strbuf_puts(b, "    const int zm = z == 0 ? NZ - 1 : z - 1, zp = z == NZ - 1 ? 0 : z + 1;\n");
    tess_strbuf_puts(b, "    unsigned outlet = 0;   /* directions whose upstream cell is an outlet */\n");
    tess_strbuf_puts(b, "    const REAL f0 = LD(g[IDX(0, c)]);\n");
    for (int i = 1; i < q; i++) {
        const int *ci = L->c[i];
        double cu = ci[0] * p->u_wall[0] + ci[1] * p->u_wall[1] + ci[2] * p->u_wall[2];
        tess_strbuf_printf(b, "    REAL f%d;\n    {\n        const long long n = ", i);
        if (L->dim == 3) tess_strbuf_printf(b, "((long long)%s * NY + %s) * NX + %s;\n", lbm_upstream(2, ci[2]),
                                            lbm_upstream(1, ci[1]), lbm_upstream(0, ci[0]));
        else tess_strbuf_printf(b, "(long long)%s * NX + %s;\n", lbm_upstream(1, ci[1]), lbm_upstream(0, ci[0]));
        tess_strbuf_printf(b,
            "        const int k = flags[n];\n"
            "        if (k == 0) f%d = LD(g[IDX(%d, n)]);\n"
            "        else if (k == 3) { f%d = 0; outlet |= %uu; }\n"
            "        else f%d = LD(g[IDX(%d, c)]) + (k == 2 ? (REAL)%.17g : (REAL)0);\n    }\n",
            i, i, i, 1u << i, i, L->opp[i], 6.0 * L->w[i] * cu);
    }
    /* Outlets: the equilibrium at density 1 and the cell's own velocity,
     * which its populations after the last collision still carry. */
    tess_strbuf_puts(b, "    if (outlet) {\n");
    for (int i = 0; i < q; i++) tess_strbuf_printf(b, "        const REAL s%d = LD(g[IDX(%d, c)]);\n", i, i);
    lbm_emit_moments(b, L, "s", "        ");
    tess_strbuf_puts(b, "        (void)drho;\n");
    for (int i = 1; i < q; i++) {
        tess_strbuf_printf(b, "        if (outlet & %uu) { const REAL cu = ", 1u << i);
        lbm_emit_cu(b, L, i);
        tess_strbuf_printf(b, "; f%d = (REAL)%.17g * (cu + (REAL)0.5 * cu * cu - usq); }\n", i, L->w[i]);
    }
    tess_strbuf_puts(b, "    }\n    {\n");
    lbm_emit_moments(b, L, "f", "        ");
    tess_strbuf_puts(b, "        const REAL rho = (REAL)1 + drho;\n");
    for (int i = 0; i < q; i++) {
        tess_strbuf_printf(b, "        const REAL cu%d = ", i);
        lbm_emit_cu(b, L, i);
        tess_strbuf_printf(b, ";\n        const REAL n%d = f%d - (REAL)%.17g * (drho + rho * (cu%d + (REAL)0.5 * cu%d * cu%d - usq));\n",
                           i, i, L->w[i], i, i, i);
    }
    for (int i = 0; i < q; i++) {
        int o = L->opp[i];
        if (p->trt && o != i)
            tess_strbuf_printf(b,
                "        go[IDX(%d, c)] = ST(f%d - (REAL)%.17g * (n%d + n%d) - (REAL)%.17g * (n%d - n%d));\n",
                i, i, 0.5 * p->omega, i, o, 0.5 * p->omega_minus, i, o);
        else
            tess_strbuf_printf(b, "        go[IDX(%d, c)] = ST(f%d - (REAL)%.17g * n%d);\n", i, i, p->omega, i);
    }
    tess_strbuf_puts(b, "    }\n}\n\n");
    return TESS_OK;
}
