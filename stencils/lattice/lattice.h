/*
 * lattice.h - lattice Boltzmann stream-collide operators (lbm_d2q9, lbm_d3q19).
 *
 * One application is one time step of the fused pull scheme on two grids:
 * each fluid cell gathers the post-collision populations of its upstream
 * neighbours (bounce-back from walls, Ladd's momentum term from moving walls
 * and velocity inlets, the equilibrium at density 1 from pressure outlets),
 * collides them (BGK or TRT) and writes its own post-collision populations.
 * Cells that are not fluid keep their populations. Grids are periodic where
 * no solid cell closes them.
 *
 * Buffers: g (populations minus their rest weights, g_i = f_i - w_i, which
 * keeps low precision storage accurate), flags (u8 cell kinds, below) and
 * g_out, the next time level of g. Layout attribute: soa (direction-major,
 * g[i * cells + cell]) or aos (cell-major, g[cell * Q + i]).
 */
#ifndef TESS_LATTICE_H
#define TESS_LATTICE_H

#include "core/op.h"
#include "core/strbuf.h"

#define LBM_MAX_Q 19

/* The cell kinds of the flags buffer. */
enum {
    LBM_FLUID = 0,
    LBM_WALL = 1,      /* no-slip wall: half-way bounce-back */
    LBM_MOVING = 2,    /* moving wall or velocity inlet at the wall velocity (ux, uy, uz) */
    LBM_OUTLET = 3,    /* pressure outlet: equilibrium at density 1 and the fluid cell's velocity */
    LBM_KINDS = 4
};

typedef struct lbm_lattice {
    const char *name;   /* "d2q9" */
    int dim, q;
    int c[LBM_MAX_Q][3];   /* velocities (x, y, z) */
    double w[LBM_MAX_Q];   /* weights */
    int opp[LBM_MAX_Q];    /* the opposite direction */
} lbm_lattice;

extern const lbm_lattice lbm_d2q9, lbm_d3q19;

/* What a task of a lattice operator asks for (its attributes). */
typedef struct lbm_params {
    const lbm_lattice *lat;
    int64_t nz, ny, nx, cells;
    double omega;        /* relaxation rate of the shear modes, 1/tau */
    double omega_minus;  /* TRT: rate of the odd modes (magic parameter 3/16); BGK: omega */
    double u_wall[3];
    int trt, aos;
} lbm_params;

/* Reads the task's extents and attributes. */
tess_status lbm_params_get(const tess_op *op, const tess_task *t, lbm_params *p);

/* The float64 reference step (lattice.c): buffers g, flags, g_out. */
tess_status lbm_reference(const tess_op *op, const tess_task *t, void *const *bufs);

/* Appends to b the C or CUDA C definitions of the lattice and the
 * functions that update one cell: lbm_pull(g, flags, x, y, z, &pulled) (its
 * loads), lbm_update(g, &pulled, &result) (boundary rules and collision),
 * lbm_store(g_out, cell, &result) and lbm_cell(g, flags, g_out, x, y, z)
 * (all three), for the storage and compute types declared above it (STORE,
 * REAL, LD, ST, QUAL, RESTRICT). `select`: the boundary rules without a
 * branch (lbm_gen.c). */
tess_status lbm_emit_cell(const lbm_params *p, bool select, tess_strbuf *b);

/* Appends, after lbm_emit_cell's code, lbm_pull_row(g, flags, x0, y, z,
 * lane, pulled[cpx]) and lbm_store_row(g_out, cell, results[cpx]): cpx
 * cells of a row per thread, one vector access per direction, the cells
 * beyond a segment from the next lanes of the warp (CUDA: the backend
 * defines LBM_ALIGN(bytes) and the shuffles of a STORE and of a kind by one
 * lane, lbm_shfl_up(s), lbm_shfl_down(s), lbm_shfl_up_kind(k) and
 * lbm_shfl_down_kind(k)). Needs
 * the soa layout and nx a multiple of cpx; store_bytes: of one STORE;
 * pack2: NULL, or the backend's function that converts two results (low,
 * high) into one 32-bit word of two STOREs at once (f16). */
tess_status lbm_emit_row(const lbm_params *p, bool select, int cpx, int store_bytes, const char *pack2,
                         tess_strbuf *b);

/* The labels of the `boundary` parameter: the rules behind a branch taken
 * next to boundaries only, or as selects in every cell. */
extern const char *const lbm_boundary_labels[2];

tess_status lbm_cpu_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out);
tess_status lbm_cpu_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                         const tess_config *c, tess_kernel_source *out);
tess_status lbm_cuda_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out);
tess_status lbm_cuda_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                          const tess_config *c, tess_kernel_source *out);

extern const tess_op tess_op_lbm_d2q9, tess_op_lbm_d3q19;

#endif
