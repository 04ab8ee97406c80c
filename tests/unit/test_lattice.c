/*
 * test_lattice.c - the lattice Boltzmann operators (stencils/lattice):
 *   - generated CPU kernels pass verification against the float64
 *     reference on random cell kinds for TRT and BGK, both layouts, moving
 *     walls with every velocity component, f32 and f64, D2Q9 and D3Q19;
 *   - the reference conserves the mass of a closed box with a moving lid to
 *     round-off;
 *   - a uniform flow at equilibrium on a periodic grid stays as it is;
 *   - plane Couette flow between a wall and a moving wall settles on the
 *     exact linear profile, walls half-way between nodes (BGK and TRT, D2Q9
 *     and D3Q19);
 *   - CUDA sources of f16 storage, both layouts, TRT, f64 arithmetic and
 *     row segments of 2 and 4 cells per thread compile with NVRTC for an
 *     H200 (skipped where NVRTC cannot be loaded);
 *   - bad tasks are refused with a message naming the reason.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "core/backend.h"
#include "h200.h"
#include "core/error.h"
#include "core/op.h"
#include "core/space.h"
#include "stencils/lattice/lattice.h"
#include "transfer/builtin.h"

static tess_task make_task(const tess_op *op, tess_dtype dt, const int64_t *shape, int ndim, const char *attrs) {
    tess_task t;
    CHECK_OK(tess_op_make_task(op, dt, TESS_DTYPE_COUNT, TESS_DTYPE_COUNT, shape, ndim, attrs, &t));
    return t;
}

/* Runs `steps` reference steps of populations g (f64, soa) in place. */
static void reference_steps(const tess_op *op, const tess_task *t, double **g, uint8_t *flags, int64_t count,
                            long steps) {
    double *next = calloc((size_t)count, sizeof *next);
    for (long s = 0; s < steps && next; s++) {
        void *bufs[3] = {*g, flags, next};
        CHECK_OK(op->reference(op, t, bufs));
        double *tmp = *g;
        *g = next;
        next = tmp;
    }
    free(next);
}

static void test_kernels_verify(const char *dir) {
    static const struct {
        const char *op, *shape, *dtype, *attrs, *fix;   /* fix: both forms of the boundary rules */
    } cases[] = {
        {"lbm_d2q9", "10x13", "f32", "collision=trt,layout=aos,ux=0.05,uy=-0.03", "boundary=branch"},
        {"lbm_d2q9", "9x8", "f64", "ux=0.1", "boundary=select"},
        {"lbm_d3q19", "5x6x7", "f32", "collision=trt,uy=0.02,uz=0.04", "boundary=select"},
        {"lbm_d3q19", "4x5x6", "f64", "layout=aos,ux=0.03,omega=0.9", "boundary=branch"},
    };
    char db[512];
    snprintf(db, sizeof db, "%s/records.db", dir);
    tess_context *ctx = NULL;
    CHECK_OK(tess_open(&ctx, db));
    if (!ctx) return;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char spec[160];
        snprintf(spec, sizeof spec, "%s:%s", cases[i].op, cases[i].attrs);
        int64_t shape[3];
        int ndim;
        CHECK_OK(tess_shape_from_text(cases[i].shape, shape, &ndim));
        tess_tune_options opt = tess_tune_options_default();
        opt.budget = 2;
        opt.strategy = "random";
        opt.transfer = "off";
        opt.fix = cases[i].fix;
        tess_tune_report rep;
        CHECK_OK(tess_tune(ctx, spec, shape, ndim, cases[i].dtype, "cpu", &opt, &rep));
        CHECK_MSG(rep.evaluations == 2 && rep.status_counts[0] == 2, "%s %s: %d of %d configs verified", spec,
                  cases[i].dtype, rep.status_counts[0], rep.evaluations);
    }
    tess_close(ctx);
}

/* A closed box: walls all round, the top layer a lid moving along x. */
static void test_mass(const tess_op *op) {
    const int64_t shape[2] = {10, 12}, cells = 120;
    tess_task t = make_task(op, TESS_F64, shape, 2, "collision=trt,ux=0.1,omega=1.2");
    double *g = calloc((size_t)(9 * cells), sizeof *g);
    uint8_t flags[120];
    double mass0 = 0;
    for (int64_t y = 0; y < 10; y++)
        for (int64_t x = 0; x < 12; x++)
            flags[y * 12 + x] = y == 9 ? LBM_MOVING : (x == 0 || x == 11 || y == 0) ? LBM_WALL : LBM_FLUID;
    for (int64_t k = 0; k < 9 * cells; k++) g[k] = 0.01 * sin(0.37 * (double)k);
    for (int64_t k = 0; k < 9 * cells; k++) mass0 += g[k];
    reference_steps(op, &t, &g, flags, 9 * cells, 500);
    double mass = 0, speed = 0;
    for (int64_t k = 0; k < 9 * cells; k++) mass += g[k];
    /* the lid has set the fluid moving */
    for (int i = 0; i < 9; i++) speed += lbm_d2q9.c[i][0] * g[i * cells + 5 * 12 + 6];
    CHECK_MSG(fabs(mass - mass0) < 1e-13, "mass %.17g after 500 steps, %.17g before", mass, mass0);
    CHECK_MSG(fabs(speed) > 1e-4, "x momentum %g in the middle of the box", speed);
    free(g);
}

/* Equilibrium of a uniform flow is a fixed point of streaming and collision. */
static void test_uniform(const tess_op *op) {
    const lbm_lattice *L = op->data;
    const int64_t shape[3] = {4, 5, 6}, cells = 120;
    tess_task t = make_task(op, TESS_F64, shape, 3, "omega=1.7");
    const double u[3] = {0.05, -0.02, 0.03}, drho = 0.01;
    double *g = calloc((size_t)(L->q * cells), sizeof *g), geq[LBM_MAX_Q];
    uint8_t flags[120] = {0};
    for (int i = 0; i < L->q; i++) {
        double cu = 3 * (L->c[i][0] * u[0] + L->c[i][1] * u[1] + L->c[i][2] * u[2]);
        geq[i] = L->w[i] * (drho + (1 + drho) * (cu + 0.5 * cu * cu - 1.5 * (u[0] * u[0] + u[1] * u[1] + u[2] * u[2])));
        for (int64_t k = 0; k < cells; k++) g[i * cells + k] = geq[i];
    }
    reference_steps(op, &t, &g, flags, L->q * cells, 20);
    double worst = 0;
    for (int i = 0; i < L->q; i++)
        for (int64_t k = 0; k < cells; k++) worst = fmax(worst, fabs(g[i * cells + k] - geq[i]));
    CHECK_MSG(worst < 1e-15, "%s: uniform flow changed by %g", op->name, worst);
    free(g);
}

/* Couette flow: a wall at the bottom, a wall moving at U along x at the top,
 * periodic along x (and z): u(y) = U (y - 1/2) / H on the H fluid rows. */
static void test_couette(const tess_op *op, const char *collision) {
    const lbm_lattice *L = op->data;
    const int d = L->dim;
    const int64_t h = 8, ny = h + 2, nx = 3, nz = d == 3 ? 3 : 1, cells = nz * ny * nx;
    const int64_t shape[3] = {nz, ny, nx};
    char attrs[64];
    snprintf(attrs, sizeof attrs, "collision=%s,ux=0.05,omega=1.6", collision);
    tess_task t = make_task(op, TESS_F64, d == 3 ? shape : shape + 1, d, attrs);
    double *g = calloc((size_t)(L->q * cells), sizeof *g);
    uint8_t *flags = calloc((size_t)cells, sizeof *flags);
    for (int64_t k = 0; k < cells; k++) {
        int64_t y = k / nx % ny;
        flags[k] = y == 0 ? LBM_WALL : y == ny - 1 ? LBM_MOVING : LBM_FLUID;
    }
    /* nu = (1/1.6 - 1/2) / 3: 8000 steps are 50 decay times of the slowest mode */
    reference_steps(op, &t, &g, flags, L->q * cells, 8000);
    double worst = 0;
    for (int64_t y = 1; y <= h; y++) {
        int64_t k = y * nx + 1;
        double rho = 1, jx = 0;
        for (int i = 0; i < L->q; i++) {
            rho += g[i * cells + k];
            jx += L->c[i][0] * g[i * cells + k];
        }
        worst = fmax(worst, fabs(jx / rho - 0.05 * ((double)y - 0.5) / (double)h));
    }
    CHECK_MSG(worst < 1e-9, "%s %s: Couette profile off by %g", op->name, collision, worst);
    free(g);
    free(flags);
}

/* Emits the config of space s named by `fix` (NULL: the default) and compiles it for dev. */
static void compile_cuda(const tess_op *op, const char *attrs, tess_dtype dt, const char *fix) {
    const tess_backend_ops *cuda = tess_backend_find("cuda");
    if (!cuda) {
        printf("built without the CUDA toolkit: CUDA sources not compiled\n");
        return;
    }
    const tess_device dev = tess_test_h200("NVIDIA H200");
    const int64_t shape[3] = {6, 7, 40};
    tess_task t = make_task(op, dt, ((const lbm_lattice *)op->data)->dim == 3 ? shape : shape + 1,
                            ((const lbm_lattice *)op->data)->dim, attrs);
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(op, &t, &dev, &s));
    if (!s) return;
    tess_config c;
    if (fix) CHECK_OK(tess_config_parse(s, fix, &c));
    else tess_space_default(s, &c);
    tess_kernel_source src = {0};
    CHECK_OK(tess_op_emit(op, &t, &dev, s, &c, &src));
    tess_blob bin = {0};
    char *log = NULL;
    tess_status st = src.code ? cuda->compile(&dev, &src, &bin, &log) : TESS_ERR_ARG;
    if (st == TESS_ERR_UNAVAILABLE) printf("CUDA sources not compiled: %s\n", tess_errmsg());
    else CHECK_MSG(st == TESS_OK, "%s %s %s: %s\n%s", op->name, attrs, tess_dtype_name(dt), tess_errmsg(), log ? log : "");
    free(log);
    tess_blob_free(&bin);
    tess_kernel_source_free(&src);
    tess_space_destroy(s);
}

static void test_refusals(const tess_op *d2q9) {
    tess_task t;
    const int64_t shape2[2] = {8, 8}, shape3[3] = {4, 8, 8}, thin[2] = {1, 8};
    CHECK(tess_op_make_task(d2q9, TESS_F32, TESS_DTYPE_COUNT, TESS_DTYPE_COUNT, shape3, 3, NULL, &t) == TESS_ERR_ARG);
    CHECK(strstr(tess_errmsg(), "extents") != NULL);
    CHECK(tess_op_make_task(d2q9, TESS_F32, TESS_DTYPE_COUNT, TESS_DTYPE_COUNT, shape2, 2, "omega=2.5", &t) ==
          TESS_ERR_ARG);
    CHECK(strstr(tess_errmsg(), "omega") != NULL);
    CHECK(tess_op_make_task(d2q9, TESS_F32, TESS_DTYPE_COUNT, TESS_DTYPE_COUNT, shape2, 2, "ux=0.5", &t) ==
          TESS_ERR_ARG);
    CHECK(strstr(tess_errmsg(), "0.4") != NULL);
    CHECK(tess_op_make_task(d2q9, TESS_F32, TESS_DTYPE_COUNT, TESS_DTYPE_COUNT, thin, 2, NULL, &t) == TESS_ERR_ARG);
    CHECK(tess_op_make_task(d2q9, TESS_I32, TESS_DTYPE_COUNT, TESS_DTYPE_COUNT, shape2, 2, NULL, &t) != TESS_OK);
    /* an unknown cell kind in the flags */
    t = make_task(d2q9, TESS_F64, shape2, 2, NULL);
    double g[9 * 64] = {0}, go[9 * 64];
    uint8_t flags[64] = {0};
    flags[17] = 7;
    void *bufs[3] = {g, flags, go};
    CHECK(d2q9->reference(d2q9, &t, bufs) == TESS_ERR_ARG);
    CHECK(strstr(tess_errmsg(), "cell 17") != NULL);
}

int main(void) {
    char dir[] = "/tmp/tessera-lattice-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    CHECK_OK(tess_register_builtin());
    const tess_op *d2q9 = tess_op_find("lbm_d2q9"), *d3q19 = tess_op_find("lbm_d3q19");
    CHECK(d2q9 && d3q19);
    if (!d2q9 || !d3q19) return check_finish("test_lattice");
    test_kernels_verify(dir);   /* tuning forks: before anything else runs here */
    test_mass(d2q9);
    test_uniform(d3q19);
    test_couette(d2q9, "bgk");
    test_couette(d2q9, "trt");
    test_couette(d3q19, "trt");
    compile_cuda(d3q19, "collision=trt,ux=0.05", TESS_F16, NULL);
    compile_cuda(d3q19, "layout=aos,uz=0.02", TESS_F32, "block_x=64,block_y=2,cpt=4,compute=f64");
    compile_cuda(d2q9, "layout=aos,collision=trt,uy=0.1", TESS_F16, "block_x=32,block_y=8,cpt=2,compute=f32");
    /* both forms of the boundary rules in every storage type, occupancy requests */
    compile_cuda(d3q19, "ux=0.05", TESS_F16, "block_x=128,block_y=1,cpt=2,compute=f32,min_blocks=8,boundary=branch");
    compile_cuda(d3q19, "ux=0.05", TESS_F32, "block_x=256,block_y=1,cpt=1,compute=f32,min_blocks=4,cpz=4,boundary=branch");
    compile_cuda(d2q9, "ux=0.05", TESS_F64, "block_x=128,block_y=2,cpt=1,compute=f64,boundary=select");
    compile_cuda(d3q19, "collision=trt,ux=0.05", TESS_F16, "block_x=64,block_y=2,cpt=1,compute=f32,boundary=select");
    /* row segments of 2 and 4 cells per thread: vector accesses and shuffles */
    compile_cuda(d3q19, "ux=0.05", TESS_F16, "block_x=128,block_y=1,cpt=1,compute=f32,cpz=2,boundary=select,cpx=2");
    compile_cuda(d3q19, "collision=trt,uy=0.05", TESS_F16, "block_x=64,block_y=2,cpt=2,compute=f32,boundary=branch,cpx=4");
    compile_cuda(d3q19, "ux=0.05", TESS_F32, "block_x=128,block_y=1,cpt=1,compute=f32,boundary=select,cpx=4");
    compile_cuda(d2q9, "ux=0.05", TESS_F32, "block_x=32,block_y=4,cpt=2,compute=f64,boundary=select,cpx=2");
    test_refusals(d2q9);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    return check_finish("test_lattice");
}
