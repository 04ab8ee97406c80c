/*
 * test_stencil_cpu.c - every stencil of the library, generated as C/OpenMP,
 * compiled by the cpu backend, run on random data and compared with the
 * float64 interpreter within the operator's tolerance: f32 and f64, the
 * default config and random legal configs, on odd shapes so that tiles and
 * vector loops have remainders. hdiff and advect2d cover periodic axes; a
 * stencil periodic along z and a multi-step stencil are checked too. A
 * kernel with a perturbed coefficient must fail the comparison.
 */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "extra_specs.h"
#include "core/backend.h"
#include "core/backend_cpu.h"
#include "core/error.h"
#include "core/evaluator.h"
#include "stencils/family.h"

#define RANDOM_CONFIGS 3

static const tess_backend_ops *cpu;
static tess_device dev;

typedef struct bufset {
    tess_buffer_list list;
    tess_buffer_spec *spec;   /* list.spec */
    void **b;
    int n;
} bufset;

static void free_buffers(bufset *bs) {
    for (int i = 0; bs->b && i < bs->n; i++) free(bs->b[i]);
    free(bs->b);
    tess_buffer_list_free(&bs->list);
    bs->n = 0;
}

/* Allocates the operator's buffers, fills the inputs and poisons the rest. */
static bool make_buffers(const tess_op *op, const tess_task *t, bufset *bs, uint64_t seed) {
    memset(bs, 0, sizeof *bs);
    CHECK_OK(tess_op_buffers(op, t, &bs->list));
    bs->n = bs->list.n;
    bs->spec = bs->list.spec;
    if (!(bs->b = calloc((size_t)bs->n, sizeof *bs->b))) return false;
    for (int i = 0; i < bs->n; i++) {
        size_t size = tess_dtype_size(bs->spec[i].dtype), n = (size_t)bs->spec[i].count;
        bs->b[i] = malloc(n * size);
        if (!bs->b[i]) return false;
        if (bs->spec[i].role == TESS_BUF_IN) {
            CHECK_OK(op->fill_input(op, t, i, bs->b[i], seed));
        } else {
            for (size_t k = 0; k < n; k++) {
                if (size == 4) ((float *)bs->b[i])[k] = NAN;
                else ((double *)bs->b[i])[k] = NAN;
            }
        }
    }
    return true;
}

static double value(const bufset *bs, int i, int64_t k) {
    return bs->spec[i].dtype == TESS_F32 ? ((const float *)bs->b[i])[k] : ((const double *)bs->b[i])[k];
}

/* Largest error of the outputs relative to what the operator accepts
 * (<= 1 passes); NAN where an output was not written. */
static double worst_error(const tess_op *op, const tess_task *t, const bufset *got, const bufset *ref) {
    double tol = op->tolerance(op, t), scale = op->verify_scale(op, t, ref->b), worst = 0;
    for (int i = 0; i < got->n; i++) {
        if (got->spec[i].role != TESS_BUF_OUT) continue;
        for (int64_t k = 0; k < got->spec[i].count; k++) {
            double g = value(got, i, k), r = value(ref, i, k);
            if (isnan(g)) return NAN;
            double e = fabs(g - r) / (tol * (scale + fabs(r)));
            if (e > worst) worst = e;
        }
    }
    return worst;
}

/* Compiles src with the cpu backend and runs it once on bs. */
static tess_status run_source(const tess_kernel_source *src, bufset *bs) {
    tess_blob bin = {0};
    char *log = NULL;
    void *ctx = NULL, *module = NULL;
    tess_status st = cpu->compile(&dev, src, &bin, &log);
    if (st) fprintf(stderr, "%s\n%s\n", tess_errmsg(), log ? log : "");
    if (!st) st = cpu->open(&dev, &ctx);
    if (!st) st = cpu->load(ctx, &bin, src, &module, NULL);
    if (!st) st = cpu->run(ctx, module, bs->b, bs->n);
    if (module) cpu->unload(ctx, module);
    if (ctx) cpu->close(ctx);
    free(log);
    tess_blob_free(&bin);
    return st;
}

/* Emits, runs and verifies one config; returns the worst relative error. */
static double check_config(const tess_op *op, const tess_task *t, const tess_space *sp, const tess_config *c) {
    char text[512];
    tess_config_format(sp, c, text, sizeof text);
    bufset got, ref;
    if (!make_buffers(op, t, &got, 7) || !make_buffers(op, t, &ref, 7)) return NAN;
    tess_kernel_source src;
    double worst = NAN;
    tess_status st = tess_op_emit(op, t, &dev, sp, c, &src);
    CHECK_MSG(st == TESS_OK, "%s %s: %s", t->op, text, tess_errmsg());
    if (!st) {
        CHECK_OK(run_source(&src, &got));
        CHECK_OK(op->reference(op, t, ref.b));
        worst = worst_error(op, t, &got, &ref);
        tess_kernel_source_free(&src);
    }
    char key[TESS_KEY_MAX];
    tess_task_key(t, key, sizeof key);
    CHECK_MSG(worst <= 1, "%s %s: worst error %.3g of the tolerance", key, text, worst);
    free_buffers(&got);
    free_buffers(&ref);
    return worst;
}

static void check_stencil(const char *name, tess_dtype dtype, const int64_t *shape, int ndim, int nrandom,
                          gsl_rng *rng) {
    const tess_op *op = tess_stencils_op(name);
    CHECK_MSG(op != NULL, "no stencil %s", name);
    if (!op) return;
    tess_task t;
    CHECK_OK(tess_op_make_task(op, dtype, dtype, dtype, shape, ndim, NULL, &t));
    tess_space *sp = NULL;
    CHECK_OK(tess_op_space(op, &t, &dev, &sp));
    if (!sp) return;
    tess_config c;
    tess_space_default(sp, &c);
    double worst = check_config(op, &t, sp, &c);
    for (int i = 0; i < nrandom; i++) {
        CHECK_OK(tess_space_sample(sp, rng, &c));
        double w = check_config(op, &t, sp, &c);
        if (!(w <= worst)) worst = w;
    }
    printf("%-10s %s: worst error %.3f of the tolerance (%.2g)\n", name, tess_dtype_name(dtype), worst,
           op->tolerance(op, &t));
    tess_space_destroy(sp);
}

/* Every time_tile of a multi-step stencil, on tiles of one row (and plane),
 * of a few, and of the whole grid (the largest values), with one thread and
 * with all: tiles cut the grid unevenly, and their halos reach past edges. */
static void check_time_tiles(const char *name, tess_dtype dtype, const int64_t *shape, int ndim) {
    const tess_op *op = tess_stencils_op(name);
    tess_task t;
    CHECK_OK(tess_op_make_task(op, dtype, dtype, dtype, shape, ndim, NULL, &t));
    tess_space *sp = NULL;
    CHECK_OK(tess_op_space(op, &t, &dev, &sp));
    if (!sp) return;
    int ptt = tess_space_param_index(sp, "time_tile"), pty = tess_space_param_index(sp, "tile_y"),
        ptz = tess_space_param_index(sp, "tile_z"), pth = tess_space_param_index(sp, "threads");
    CHECK_MSG(ptt >= 0, "%s has no time_tile", name);
    double worst = 0;
    int n = 0;
    for (int i = 0; ptt >= 0 && i < tess_space_param_size(sp, ptt); i++) {
        static const int tiles[3] = {1, 2, -1};   /* -1: the largest */
        for (int k = 0; k < 3; k++) {
            tess_config c;
            tess_space_default(sp, &c);
            c.v[ptt] = i;
            c.v[pty] = tiles[k] > 0 ? tess_space_value_index(sp, pty, tiles[k]) : tess_space_param_size(sp, pty) - 1;
            if (ptz >= 0)
                c.v[ptz] = tiles[k] > 0 ? tess_space_value_index(sp, ptz, tiles[k]) : tess_space_param_size(sp, ptz) - 1;
            c.v[pth] = k == 1 ? 0 : tess_space_param_size(sp, pth) - 1;
            CHECK(tess_space_valid(sp, &c));
            double w = check_config(op, &t, sp, &c);
            if (!(w <= worst)) worst = w;
            n++;
        }
    }
    printf("%-10s %s: %d time-tiled configs, worst error %.3f of the tolerance\n", name, tess_dtype_name(dtype),
           n, worst);
    tess_space_destroy(sp);
}

/* A coefficient changed by 1e-3 must fail verification. */
static void check_detects_error(void) {
    const tess_op *op = tess_stencils_op("heat3d");
    tess_task t;
    int64_t shape[] = {9, 10, 11};
    CHECK_OK(tess_op_make_task(op, TESS_F32, TESS_F32, TESS_F32, shape, 3, NULL, &t));
    tess_space *sp = NULL;
    CHECK_OK(tess_op_space(op, &t, &dev, &sp));
    tess_config c;
    tess_space_default(sp, &c);
    tess_kernel_source src;
    CHECK_OK(tess_op_emit(op, &t, &dev, sp, &c, &src));
    const char *old = "#define alpha 0.1f\n", *new = "#define alpha 0.1001f\n";
    char *def = strstr(src.code, old);
    CHECK(def != NULL);
    if (def) {
        char *code = malloc(strlen(src.code) + strlen(new));
        sprintf(code, "%.*s%s%s", (int)(def - src.code), src.code, new, def + strlen(old));
        free(src.code);
        src.code = code;
    }
    bufset got, ref;
    if (make_buffers(op, &t, &got, 3) && make_buffers(op, &t, &ref, 3)) {
        CHECK_OK(run_source(&src, &got));
        CHECK_OK(op->reference(op, &t, ref.b));
        double worst = worst_error(op, &t, &got, &ref);
        CHECK_MSG(worst > 1, "a perturbed kernel passed (worst %.3g)", worst);
    }
    free_buffers(&got);
    free_buffers(&ref);
    tess_kernel_source_free(&src);
    tess_space_destroy(sp);
}

static void collect(const tess_result *r, void *user) {
    int *bad = user;
    if (r->status != TESS_RESULT_OK) {
        fprintf(stderr, "evaluator: %s: %s\n", tess_outcome_name(r->status), r->message);
        ++*bad;
    }
}

/* The tuner's path: the hardware evaluator compiles in its pool, runs in
 * its forked runner and verifies against the reference computed before. */
static void check_evaluator(const char *name, tess_dtype dtype, const int64_t *shape, int ndim, gsl_rng *rng) {
    tess_task t;
    CHECK_OK(tess_op_make_task(tess_stencils_op(name), dtype, dtype, dtype, shape, ndim, NULL, &t));
    tess_hw_options o = tess_hw_options_default();
    o.timeout_s = 30;
    o.min_time_s = 0.001;
    const tess_op *op = tess_stencils_op(name);
    tess_space *space = NULL;
    CHECK_OK(tess_op_space(op, &t, &dev, &space));
    tess_evaluator *ev = NULL;
    if (space) CHECK_OK(tess_evaluator_create_hw(op, &t, space, cpu, &dev, &o, &ev));
    if (!ev) {
        tess_space_destroy(space);
        return;
    }
    tess_config c[3];
    tess_space_default(ev->space, &c[0]);
    CHECK_OK(tess_space_sample(ev->space, rng, &c[1]));
    CHECK_OK(tess_space_sample(ev->space, rng, &c[2]));
    int bad = 0;
    CHECK_OK(ev->ops->evaluate(ev, c, 3, collect, &bad));
    CHECK_MSG(bad == 0, "%s: %d candidates failed in the evaluator", name, bad);
    tess_evaluator_destroy(ev);
    tess_space_destroy(space);
}

/* Stencils beyond the library: periodic along z and y with a 2D
 * coefficient field; several time steps in one kernel: fixed, periodic
 * along z and x, periodic along y and x with two state fields, and
 * without reach along z. */
static const char *const extra_specs[] = {
    "stencil zwrap\n"
    "grid 6x7x8\n"
    "boundary periodic z y\n"
    "field u in\nfield s 2d coef\nfield v out advances u\n"
    "v = u[2,0,0] - u[-1,1,0] + s[1,-1] * u[0,0,1]\n",
    "stencil eight\ngrid 9x10x11\nboundary periodic z x\nsteps 8\nfield u in\nfield c coef range 0 1\n"
    "field v out advances u\n"
    "lap = u[1,0,0] + u[-1,0,0] + u[0,1,0] + u[0,-1,0] + u[0,0,1] + u[0,0,-1] - 6 * u\n"
    "v = u + 0.1 * c * lap + 0.01 * lap[0,0,1]\n",
    "stencil multistep\n"
    "grid 9x10x11\nsteps 3\n"
    "field u in\nfield k coef range 0 1\nfield u_new out advances u\n"
    "param alpha = 0.1\n"
    "u_new = u + alpha * k * (u[1,0,0] + u[-1,0,0] + u[0,1,0] + u[0,-1,0] + u[0,0,1] + u[0,0,-1] - 6 * u)\n",
    "stencil ywrap\ngrid 7x6x9\nboundary periodic y x\nsteps 4\n"
    "field u in\nfield w in\nfield s 2d coef range 0 1\nfield u_out out advances u\nfield w_out out advances w\n"
    "lap = u[0,1,0] + u[0,-1,0] + u[0,0,1] + u[0,0,-1] - 4 * u\n"
    "u_out = u + 0.1 * s * lap + 0.05 * (w[1,0,0] - w[-1,0,0])\n"
    "w_out = w + 0.1 * (lap[0,1,0] - lap)\n",
    "stencil flat\ngrid 5x8x7\nboundary periodic z\nsteps 3\nfield u in\nfield v out advances u\n"
    "v = u + 0.2 * (u[0,2,0] + u[0,-1,0] + u[0,0,2] - 3 * u)\n",
    /* 2D, several steps: fixed with a coefficient field; periodic with two
     * state fields, an uneven reach along y and an intermediate read off its point. */
    "stencil fixed2d\ngrid 12x13\nsteps 4\nfield u in\nfield k coef range 0 1\nfield u_new out advances u\n"
    "u_new = u + 0.2 * k * (u[1,0] + u[-1,0] + u[0,1] + u[0,-1] - 4 * u)\n",
    "stencil wrap2d\ngrid 11x9\nboundary periodic y x\nsteps 5\n"
    "field u in\nfield w in\nfield u_out out advances u\nfield w_out out advances w\n"
    "lap = u[0,1] + u[0,-1] + u[2,0] + u[-1,0] - 4 * u\n"
    "u_out = u + 0.1 * lap + 0.05 * (w[1,0] - w[-1,0])\n"
    "w_out = w + 0.1 * (lap[1,0] - lap)\n",
};

int main(void) {
    CHECK_OK(tess_cpu_register());
    cpu = tess_backend_find("cpu");
    CHECK_OK(cpu->probe(&dev));
    CHECK_OK(tess_stencils_register_builtin());
    register_extra_specs(extra_specs, sizeof extra_specs / sizeof extra_specs[0]);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 42);
    const int64_t s3[] = {10, 11, 13}, s2[] = {21, 19}, small3[] = {5, 4, 6};
    /* First, while this process has not run OpenMP: the evaluator's runner
     * forks, and libgomp does not survive a fork once its threads exist. */
    check_evaluator("hdiff", TESS_F32, (const int64_t[]){8, 40, 36}, 3, rng);
    check_evaluator("advect2d", TESS_F64, s2, 2, rng);
    const char *const three_d[] = {"heat3d", "box3d27", "star3d25", "varcoef3d", "hdiff"};
    for (size_t i = 0; i < sizeof three_d / sizeof three_d[0]; i++) {
        check_stencil(three_d[i], TESS_F32, s3, 3, RANDOM_CONFIGS, rng);
        check_stencil(three_d[i], TESS_F64, s3, 3, 1, rng);
    }
    const char *const two_d[] = {"heat2d", "advect2d"};
    for (size_t i = 0; i < sizeof two_d / sizeof two_d[0]; i++) {
        check_stencil(two_d[i], TESS_F32, s2, 2, RANDOM_CONFIGS, rng);
        check_stencil(two_d[i], TESS_F64, s2, 2, 1, rng);
    }
    check_stencil("zwrap", TESS_F32, small3, 3, RANDOM_CONFIGS, rng);
    check_stencil("multistep", TESS_F64, s3, 3, 1, rng);
    check_stencil("multistep", TESS_F32, s3, 3, 1, rng);
    check_stencil("eight", TESS_F64, s3, 3, 1, rng);
    check_time_tiles("heat3d4", TESS_F32, s3, 3);
    check_time_tiles("multistep", TESS_F64, s3, 3);
    check_time_tiles("eight", TESS_F32, s3, 3);
    check_time_tiles("ywrap", TESS_F64, (const int64_t[]){7, 6, 9}, 3);
    check_time_tiles("flat", TESS_F32, (const int64_t[]){5, 8, 7}, 3);
    check_stencil("fixed2d", TESS_F32, s2, 2, RANDOM_CONFIGS, rng);
    check_stencil("wrap2d", TESS_F64, s2, 2, RANDOM_CONFIGS, rng);
    check_time_tiles("fixed2d", TESS_F32, s2, 2);
    check_time_tiles("fixed2d", TESS_F64, (const int64_t[]){3, 5}, 2);
    check_time_tiles("wrap2d", TESS_F64, s2, 2);
    check_time_tiles("wrap2d", TESS_F32, (const int64_t[]){4, 3}, 2);
    /* A grid smaller than the halo along a fixed axis: every point is boundary. */
    check_stencil("star3d25", TESS_F32, (const int64_t[]){3, 12, 12}, 3, 1, rng);
    check_detects_error();
    gsl_rng_free(rng);
    return check_finish("test_stencil_cpu");
}
