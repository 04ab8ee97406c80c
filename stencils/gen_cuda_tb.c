/* gen_cuda_tb.c - temporal blocking for the CUDA generator: time_block (TB)
 * steps in one launch.
 *
 * A block owns a tile of TY x TX points and walks up a chunk of z planes,
 * as in 2.5D streaming, with the steps pipelined along z: at iteration i,
 * step 0 (the input) loads plane i, step k computes plane i - k*HI_Z from
 * the planes of step k-1, and step TB writes plane i - TB*HI_Z of the
 * output. Each step but the last keeps its planes in a ring of LO_Z+HI_Z+1
 * shared tiles; step k's tile extends TB-k halos beyond the block's tile,
 * so the halo grows with TB and the last step still finds every neighbour.
 * Points on a fixed boundary band keep their previous value, as in the
 * reference; fields no output advances are read from global memory.
 */
#include <stdio.h>
#include <string.h>
#include "gen_cuda_internal.h"
#include "gen_util.h"
#include "spec_print.h"

/* The expression context of one step. */
typedef struct tb_ctx {
    const tess_cuda_plan *p;
    int step;
} tb_ctx;

static bool is_state(const tess_spec *s, int f) {
    for (int g = 0; g < s->nfields; g++)
        if (s->field[g].advances == f) return true;
    return false;
}

static void print_ref(tess_strbuf *b, const tess_expr *e, void *user) {
    const tb_ctx *c = user;
    const tess_spec *s = c->p->s;
    if (tess_gen_print_named_ref(b, s, e)) return;
    int f = e->index;
    if (is_state(s, f)) {   /* the previous step's ring */
        tess_strbuf_printf(b, "%s__s%d[SLOT(", s->field[f].name, c->step - 1);
        tess_gen_coord(b, "z", e->off[0]);
        tess_strbuf_puts(b, ")][");
        tess_gen_coord(b, "r__ + LO_Y", e->off[1]);
        tess_strbuf_puts(b, "][");
        tess_gen_coord(b, "q__ + LO_X", e->off[2]);
        tess_strbuf_puts(b, "]");
        return;
    }
    /* Halo points lie outside the grid along periodic axes: wrap. */
    int first = s->rank - s->field[f].rank;
    tess_strbuf_printf(b, "__ldg(&%s[%s(", s->field[f].name, first ? "IDX2" : "IDX");
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

/* Step k (1..TB) of plane z = i__ - k * HI_Z over its tile. */
static void emit_step(tess_strbuf *b, const tess_cuda_plan *p, int k) {
    const tess_spec *s = p->s;
    int tb = p->time_block;
    bool last = k == tb;
    tess_strbuf_printf(b, "        {   /* step %d: plane i__ - %d * HI_Z */\n", k, k);
    tess_strbuf_printf(b, "            const int z = i__ - %d * HI_Z;\n", k);
    tess_strbuf_printf(b, "            if (z >= Z0 - %d * LO_Z && z < Z1 + %d * HI_Z) {\n", tb - k, tb - k);
    tess_strbuf_printf(b, "                for (int t__ = tid__; t__ < TILE_H(%d) * TILE_W(%d); t__ += BX * BY) {\n", k, k);
    tess_strbuf_printf(b, "                    const int r__ = t__ / TILE_W(%d), q__ = t__ %% TILE_W(%d);\n", k, k);
    tess_strbuf_printf(b, "                    const int y = OY - %d * LO_Y + r__, x = OX - %d * LO_X + q__;\n", tb - k, tb - k);
    if (last) tess_strbuf_puts(b, "                    if (y >= NY || x >= NX) continue;\n");
    for (int f = 0; !last && f < s->nfields; f++)
        if (is_state(s, f)) tess_strbuf_printf(b, "                    real %s__new;\n", s->field[f].name);
    tess_strbuf_puts(b, "                    if (ON_BAND(z, y, x)) {\n");
    for (int f = 0; f < s->nfields; f++) {
        int g = s->field[f].advances;
        if (s->field[f].role != TESS_FIELD_OUT || g < 0) continue;
        if (last) tess_strbuf_printf(b, "                        %s[IDX(z, y, x)] = ", s->field[f].name);
        else tess_strbuf_printf(b, "                        %s__new = ", s->field[g].name);
        tess_strbuf_printf(b, "%s__s%d[SLOT(z)][r__ + LO_Y][q__ + LO_X];\n", s->field[g].name, k - 1);
    }
    tess_strbuf_puts(b, "                    } else {\n");
    tb_ctx ctx = {p, k};
    tess_expr_printer pr = {.c_syntax = true, .ref = print_ref, .num = print_number, .user = &ctx};
    for (int i = 0; i < s->ninst; i++) {
        int out = tess_gen_inst_output(s, i);
        if (out >= 0 && last) {
            tess_strbuf_printf(b, "                        %s[IDX(z, y, x)] = ", s->field[out].name);
        } else if (out >= 0) {
            tess_strbuf_printf(b, "                        %s__new = ", s->field[s->field[out].advances].name);
        } else {
            char name[64];
            tess_gen_inst_name(s, i, name, sizeof name);
            tess_strbuf_printf(b, "                        const real %s = ", name);
        }
        tess_expr_print(b, s->inst[i].expr, &pr);
        tess_strbuf_puts(b, ";\n");
    }
    tess_strbuf_puts(b, "                    }\n");
    for (int f = 0; !last && f < s->nfields; f++)
        if (is_state(s, f))
            tess_strbuf_printf(b, "                    %s__s%d[SLOT(z)][r__][q__] = %s__new;\n", s->field[f].name, k,
                               s->field[f].name);
    tess_strbuf_puts(b, "                }\n            }\n");
    if (!last) tess_strbuf_puts(b, "            __syncthreads();\n");
    tess_strbuf_puts(b, "        }\n");
}

void tess_cuda_emit_tb_sweep(tess_strbuf *b, const tess_cuda_plan *p) {
    const tess_spec *s = p->s;
    int tb = p->time_block;
    tess_strbuf_printf(b, "/* Temporal blocking: TB steps per launch, pipelined along z. */\n"
                          "#define TB %d\n#define TY (BY * PY)\n#define TX (BX * PX)\n"
                          "#define RZ (LO_Z + HI_Z + 1)   /* planes in a step's ring */\n"
                          "/* Step k's tile: the block's tile and TB - k halos. */\n"
                          "#define TILE_H(k) (TY + (TB - (k)) * (LO_Y + HI_Y))\n"
                          "#define TILE_W(k) (TX + (TB - (k)) * (LO_X + HI_X))\n"
                          "#define SLOT(z) ((((z) %% RZ) + RZ) %% RZ)\n\n", tb);
    tess_strbuf_puts(b, "/* TB updates of the grid. */\nstatic __device__ __forceinline__ void tess_sweep(");
    tess_cuda_emit_params(b, p, false);
    tess_strbuf_puts(b, ")\n{\n"
                        "    const int OY = blockIdx.y * TY, OX = blockIdx.x * TX;   /* the block's tile */\n"
                        "    const int Z0 = blockIdx.z * CHUNK, Z1 = min(Z0 + CHUNK, NZ);\n"
                        "    const int tid__ = threadIdx.y * BX + threadIdx.x;\n");
    for (int f = 0; f < s->nfields; f++) {
        if (!is_state(s, f)) continue;
        tess_strbuf_printf(b, "    /* Rings of %s: steps 0 .. TB-1. */\n", s->field[f].name);
        for (int k = 0; k < tb; k++)
            tess_strbuf_printf(b, "    __shared__ %s %s__s%d[RZ][TILE_H(%d)][TILE_W(%d)];\n",
                               tess_gen_ctype(s, f, p->t->dtype), s->field[f].name, k, k, k);
    }
    tess_strbuf_puts(b, "    for (int i__ = Z0 - TB * LO_Z; i__ < Z1 + TB * HI_Z; i__++) {\n"
                        "        /* step 0: the input's plane i__ */\n"
                        "        for (int t__ = tid__; t__ < TILE_H(0) * TILE_W(0); t__ += BX * BY) {\n"
                        "            const int r__ = t__ / TILE_W(0), q__ = t__ % TILE_W(0);\n");
    for (int f = 0; f < s->nfields; f++)
        if (is_state(s, f))
            tess_strbuf_printf(b, "            %s__s0[SLOT(i__)][r__][q__] = __ldg(&%s[IDX(SAFE_Z(i__), "
                                  "SAFE_Y(OY - TB * LO_Y + r__), SAFE_X(OX - TB * LO_X + q__))]);\n",
                               s->field[f].name, s->field[f].name);
    tess_strbuf_puts(b, "        }\n        __syncthreads();\n");
    for (int k = 1; k <= tb; k++) emit_step(b, p, k);
    tess_strbuf_puts(b, "    }\n}\n\n");
}
