/*
 * lbm_cuda.c - CUDA code generation for the lattice Boltzmann step.
 *
 * lbm_pull() and lbm_update() (lbm_gen.c) inside templates/lbm.cu. Tunables:
 *   block_x    threads of a block along x (coalesced loads of each direction)
 *   block_y    rows of a block along y
 *   cpt        cells per thread along y, block_y rows apart, all their loads
 *              issued before the first update
 *   cpz        consecutive z planes per thread (3D), updated one after
 *              another: what plane z + 1 reads again of plane z is in L1
 *   compute    arithmetic in f32 or f64 (f32 and f16 storage; f64 storage: f64)
 *   boundary   the boundary rules behind a branch that only cells next to a
 *              boundary take (their own populations read only there), or
 *              as selects in every cell (no divergence where solid cells
 *              are scattered)
 *   min_blocks blocks per SM that __launch_bounds__ asks registers for (0: no
 *              request): more blocks resident, more loads in flight, fewer
 *              registers per thread
 *   flags      the neighbours' kinds read from global memory (each cell's Q
 *              loads of them go through L2 as often as its populations do)
 *              or from a tile in shared memory that the block fills once
 *              per plane (about one load per cell)
 *   cpx        consecutive cells per thread along x (soa, f32 or f16
 *              storage, x extents it divides, global kinds): one vector
 *              access per direction for all of them (two f16 populations
 *              are one 32-bit access), the cell beyond the segment from the
 *              next lane by a shuffle
 * f16 storage converts through PTX (cvt), so no header is needed.
 */
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "lattice.h"

extern const char tess_src_stencils_lattice_templates_lbm_cu[];

static const char *const compute_f32[] = {"f32", "f64"};
static const char *const compute_f64[] = {"f64"};
static const char *const flags_labels[] = {"global", "shared"};

static bool lbm_cuda_block_fits(const double *v, void *user) {
    (void)user;
    return v[0] * v[1] <= 1024 && v[0] * v[1] >= 64;
}

/* An SM holds at most 2048 threads (v: block_x, block_y, cpt, compute, min_blocks). */
static bool lbm_cuda_blocks_fit(const double *v, void *user) {
    (void)user;
    return v[4] * v[0] * v[1] <= 2048;
}

/* Row segments take their kinds from global memory (v[7]: flags, v[8]: cpx). */
static bool lbm_cuda_rows_global(const double *v, void *user) {
    (void)user;
    return v[8] == 1 || v[7] == 0;
}

tess_status lbm_cuda_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out) {
    (void)dev;
    *out = NULL;
    const double bx[] = {32, 64, 128, 256, 512}, by[] = {1, 2, 4, 8}, cpt[] = {1, 2, 4}, cpz[] = {1, 2, 4, 8};
    const double minb[] = {0, 2, 4, 8, 12, 16};
    /* cells per thread along x: vector accesses need the soa layout and
     * rows that the segments divide (f32 and f16 storage) */
    double cpx[3] = {1};
    int ncpx = 1;
    lbm_params p;
    tess_status pst = lbm_params_get(op, t, &p);
    if (pst) return pst;
    for (int v = 2; v <= 4 && !p.aos && t->dtype != TESS_F64; v *= 2)
        if (p.nx % v == 0) cpx[ncpx++] = v;
    tess_space *s = tess_space_create();
    if (!s) return tess_error(TESS_ERR_NOMEM, "%s cuda space", op->name);
    tess_status st = tess_space_add(s, "block_x", 5, bx, 2);
    if (!st) st = tess_space_add(s, "block_y", 4, by, 0);
    if (!st) st = tess_space_add(s, "cpt", 3, cpt, 0);
    if (!st)
        st = t->dtype == TESS_F64 ? tess_space_add_labels(s, "compute", 1, compute_f64, 0)
                                  : tess_space_add_labels(s, "compute", 2, compute_f32, 0);
    if (!st) st = tess_space_add(s, "min_blocks", 6, minb, 0);
    if (!st) st = tess_space_add(s, "cpz", t->ndim == 3 ? 4 : 1, cpz, 0);
    /* select by default: the test inputs scatter solid cells, where a warp
     * that branches runs both paths (1.4x slower on an H200) */
    if (!st) st = tess_space_add_labels(s, "boundary", 2, lbm_boundary_labels, 1);
    /* added later: configs without them ask for no occupancy, a plane per thread and branch */
    if (!st) st = tess_space_add_labels(s, "flags", 2, flags_labels, 0);
    if (!st) st = tess_space_add(s, "cpx", ncpx, cpx, 0);
    if (!st) st = tess_space_set_optional(s, "min_blocks", 0);
    if (!st) st = tess_space_set_optional(s, "cpz", 1);
    if (!st) st = tess_space_set_optional(s, "boundary", 0);
    if (!st) st = tess_space_set_optional(s, "flags", 0);
    if (!st) st = tess_space_set_optional(s, "cpx", 1);
    if (!st) st = tess_space_add_constraint(s, lbm_cuda_block_fits, NULL, "64 <= block_x*block_y <= 1024");
    if (!st) st = tess_space_add_constraint(s, lbm_cuda_blocks_fit, NULL, "min_blocks*block_x*block_y <= 2048");
    if (!st) st = tess_space_add_constraint(s, lbm_cuda_rows_global, NULL, "cpx > 1 needs flags=global");
    if (st) {
        tess_space_destroy(s);
        return st;
    }
    *out = s;
    return TESS_OK;
}

/* Storage types and their conversions to the compute type. */
static const char *lbm_cuda_storage(tess_dtype dt) {
    switch (dt) {
    case TESS_F64: return "typedef double STORE;\n#define LD(v) ((REAL)(v))\n#define ST(v) ((STORE)(v))\n";
    case TESS_F16:
        return "typedef unsigned short STORE;   /* f16 bits */\n"
               "__device__ __forceinline__ float lbm_h2f(unsigned short h)\n"
               "{ float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f; }\n"
               "__device__ __forceinline__ unsigned short lbm_f2h(float f)\n"
               "{ unsigned short h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h; }\n"
               "#define LD(v) ((REAL)lbm_h2f(v))\n#define ST(v) lbm_f2h((float)(v))\n";
    default: return "typedef float STORE;\n#define LD(v) ((REAL)(v))\n#define ST(v) ((STORE)(v))\n";
    }
}

/* The shuffles of a row segment's edge values by one lane (PTX shfl.sync:
 * --minimal compiles without the headers that declare __shfl_up_sync), of
 * f32 or f16 storage and of kinds; for f16 the conversion of two results
 * into one word (PTX cvt.rn.f16x2.f32, its first source the high half). */
static const char *lbm_cuda_shuffles(tess_dtype dt) {
    if (dt == TESS_F16)
        return "__device__ __forceinline__ unsigned lbm_pack2(float lo, float hi)\n"
               "{ unsigned r; asm(\"cvt.rn.f16x2.f32 %0, %1, %2;\" : \"=r\"(r) : \"f\"(hi), \"f\"(lo)); return r; }\n"
               "__device__ __forceinline__ STORE lbm_shfl_up(STORE v)\n"
               "{ unsigned r; asm(\"shfl.sync.up.b32 %0, %1, 1, 0, -1;\" : \"=r\"(r) : \"r\"((unsigned)v)); return (STORE)r; }\n"
               "__device__ __forceinline__ STORE lbm_shfl_down(STORE v)\n"
               "{ unsigned r; asm(\"shfl.sync.down.b32 %0, %1, 1, 31, -1;\" : \"=r\"(r) : \"r\"((unsigned)v)); return (STORE)r; }\n";
    return "__device__ __forceinline__ STORE lbm_shfl_up(STORE v)\n"
           "{ float r; asm(\"shfl.sync.up.b32 %0, %1, 1, 0, -1;\" : \"=f\"(r) : \"f\"(v)); return r; }\n"
           "__device__ __forceinline__ STORE lbm_shfl_down(STORE v)\n"
           "{ float r; asm(\"shfl.sync.down.b32 %0, %1, 1, 31, -1;\" : \"=f\"(r) : \"f\"(v)); return r; }\n";
}

static const char lbm_cuda_kind_shuffles[] =
    "__device__ __forceinline__ int lbm_shfl_up_kind(int v)\n"
    "{ int r; asm(\"shfl.sync.up.b32 %0, %1, 1, 0, -1;\" : \"=r\"(r) : \"r\"(v)); return r; }\n"
    "__device__ __forceinline__ int lbm_shfl_down_kind(int v)\n"
    "{ int r; asm(\"shfl.sync.down.b32 %0, %1, 1, 31, -1;\" : \"=r\"(r) : \"r\"(v)); return r; }\n"
    "#define LBM_ALIGN(bytes) alignas(bytes)\n";

tess_status lbm_cuda_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                          const tess_config *c, tess_kernel_source *out) {
    lbm_params p;
    tess_status st = lbm_params_get(op, t, &p);
    if (st) return st;
    const int bx = (int)tess_config_get(s, c, "block_x"), by = (int)tess_config_get(s, c, "block_y");
    const int cpt = (int)tess_config_get(s, c, "cpt"), minb = (int)tess_config_get(s, c, "min_blocks");
    const int cpz = (int)tess_config_get(s, c, "cpz"), cpx = (int)tess_config_get(s, c, "cpx");
    const bool select = tess_config_get(s, c, "boundary") > 0;
    const bool tile = tess_config_get(s, c, "flags") > 0;
    const bool f64 = t->dtype == TESS_F64 || tess_config_get(s, c, "compute") > 0;
    if (tile && cpx > 1)
        return tess_error(TESS_ERR_ARG, "%s cuda: cpx=%d reads the kinds from global memory, not with flags=shared",
                          op->name, cpx);
    char config[512];
    st = tess_config_format(s, c, config, sizeof config);
    if (st) return st;
    const unsigned grid[3] = {(unsigned)((p.nx / cpx + bx - 1) / bx), (unsigned)((p.ny + by * cpt - 1) / (by * cpt)),
                              (unsigned)((p.nz + cpz - 1) / cpz)};
    if (grid[2] > 65535 || grid[1] > 65535)
        return tess_error(TESS_ERR_ARG, "%s cuda: a grid of %ux%ux%u blocks exceeds the y and z limits (65535)",
                          op->name, grid[0], grid[1], grid[2]);
    tess_strbuf b = {0};
    tess_strbuf_printf(&b,
        "// %s stream-collide step on %lld x %lld x %lld (z, y, x) cells, %s storage, for %s, generated by tessera.\n"
        "// config: %s\n"
        "typedef %s REAL;\n%s"
        "#define QUAL __device__ __forceinline__\n#define RESTRICT __restrict__\n"
        "#define BX %d\n#define BY %d\n#define CPT %d\n#define CPZ %d\n#define CPX %d\n#define MIN_BLOCKS %d\n",
        op->name, (long long)p.nz, (long long)p.ny, (long long)p.nx, tess_dtype_name(t->dtype),
        dev->arch[0] ? dev->arch : "cuda", config, f64 ? "double" : "float", lbm_cuda_storage(t->dtype), bx, by,
        cpt, cpz, cpx, minb);
    if (tile) {
        /* the kinds of the block's cells and one neighbour on each side, per
         * plane; in 3D a ring of the planes z - 1, z, z + 1 */
        const int halo_z = p.lat->dim == 3 ? 1 : 0;
        tess_strbuf_printf(&b,
            "#define LBM_TILE 1\n#define LBM_HALO_Z %d\n#define LBM_PLANES %d\n#define LBM_TW %d\n#define LBM_TH %d\n"
            "#define LBM_SLOT(p) (((p) + LBM_PLANES) %% LBM_PLANES)\n"
            "__shared__ unsigned char lbm_sk[LBM_PLANES][LBM_TH][LBM_TW];\n"
            "#define LBM_FLAG(n, dx, dy, dz) ((int)lbm_sk[LBM_SLOT(z + (dz))]"
            "[y - (int)blockIdx.y * (BY * CPT) + 1 + (dy)][x - (int)blockIdx.x * BX + 1 + (dx)])\n",
            halo_z, 2 * halo_z + 1, bx + 2, by * cpt + 2);
    } else {
        tess_strbuf_puts(&b, "#define LBM_TILE 0\n");
    }
    st = lbm_emit_cell(&p, select, &b);
    if (!st && cpx > 1) {
        tess_strbuf_puts(&b, lbm_cuda_shuffles(t->dtype));
        tess_strbuf_puts(&b, lbm_cuda_kind_shuffles);
        st = lbm_emit_row(&p, select, cpx, (int)tess_dtype_size(t->dtype), t->dtype == TESS_F16 ? "lbm_pack2" : NULL,
                          &b);
    }
    tess_strbuf_puts(&b, tess_src_stencils_lattice_templates_lbm_cu);
    memset(out, 0, sizeof *out);
    if (!st) st = tess_strbuf_finish(&b, &out->code);
    else tess_strbuf_free(&b);
    if (st) return st;
    snprintf(out->options, sizeof out->options, "--minimal");
    out->nlaunches = 1;
    tess_launch *l = &out->launch[0];
    strcpy(l->entry, "tess_lbm");
    for (int a = 0; a < 3; a++) l->grid[a] = grid[a];
    l->block[0] = (unsigned)bx;
    l->block[1] = (unsigned)by;
    l->block[2] = 1;
    return TESS_OK;
}
