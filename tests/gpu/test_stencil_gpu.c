/*
 * test_stencil_gpu.c - every stencil of the library run on the GPU through
 * the hardware evaluator (compile, isolated run, verification against the
 * float64 interpreter, timing): the default config, each kernel variant and
 * random legal configs, f32 and f64, on odd shapes; plus a periodic stencil
 * with a 2D field and stencils of two, four and eight steps, with temporal
 * blocking. Every candidate must verify.
 * Also prints the bandwidth reached on larger grids, for information.
 * Skipped without a CUDA device.
 */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "extra_specs.h"
#include "core/backend.h"
#include "core/error.h"
#include "core/evaluator.h"
#include "stencils/family.h"

extern tess_status tess_cuda_register(void) __attribute__((weak));

#define MAX_CONFIGS 24

static const tess_backend_ops *cuda;
static tess_device dev;

static const char *const variants3[] = {
    "block_x=64,block_y=4,block_z=2,ppt_x=2,ppt_y=1,vec=1,stream=0,chunk=4,staging=ldg,unroll=1,min_blocks=1",
    "block_x=32,block_y=8,block_z=1,ppt_x=1,ppt_y=2,vec=1,stream=1,chunk=16,staging=ldg,unroll=2,min_blocks=2",
    "block_x=32,block_y=4,block_z=1,ppt_x=2,ppt_y=2,vec=1,stream=1,chunk=8,staging=shared,unroll=1,min_blocks=1",
    "block_x=64,block_y=4,block_z=1,ppt_x=1,ppt_y=4,vec=1,stream=1,chunk=64,staging=shared,unroll=2,min_blocks=2",
    "block_x=32,block_y=8,block_z=1,ppt_x=1,ppt_y=1,vec=4,stream=1,chunk=16,staging=shared,unroll=1,min_blocks=1",
    "block_x=32,block_y=4,block_z=1,ppt_x=2,ppt_y=2,vec=2,stream=1,chunk=8,staging=ldg,unroll=2,min_blocks=2",
    /* A ring of planes filled by asynchronous copies: chunks shorter and longer than the ring. */
    "block_x=32,block_y=4,block_z=1,ppt_x=1,ppt_y=2,vec=1,stream=1,chunk=8,staging=async,unroll=1,min_blocks=1,prefetch=2",
    "block_x=32,block_y=8,block_z=1,ppt_x=1,ppt_y=1,vec=4,stream=1,chunk=16,staging=async,unroll=2,min_blocks=1,prefetch=3",
    "block_x=64,block_y=4,block_z=1,ppt_x=2,ppt_y=2,vec=2,stream=1,chunk=64,staging=async,unroll=1,min_blocks=2,prefetch=1",
    "block_x=32,block_y=4,block_z=1,ppt_x=1,ppt_y=1,vec=1,stream=1,chunk=32,staging=async,unroll=4,min_blocks=1,prefetch=4",
};
#define NVARIANTS3 (int)(sizeof variants3 / sizeof *variants3)
/* Temporal blocking, for stencils of several steps. */
static const char *const time_blocked[] = {
    "block_x=32,block_y=4,block_z=1,ppt_x=1,ppt_y=4,vec=1,stream=1,chunk=16,staging=shared,unroll=1,min_blocks=1,time_block=2",
    "block_x=32,block_y=16,block_z=1,ppt_x=1,ppt_y=1,vec=1,stream=1,chunk=8,staging=shared,unroll=1,min_blocks=2,time_block=4",
    "block_x=64,block_y=4,block_z=1,ppt_x=1,ppt_y=4,vec=1,stream=1,chunk=64,staging=shared,unroll=2,min_blocks=1,time_block=2",
    "block_x=64,block_y=16,block_z=1,ppt_x=1,ppt_y=2,vec=1,stream=1,chunk=32,staging=shared,unroll=2,min_blocks=1,time_block=4",
    "block_x=32,block_y=8,block_z=1,ppt_x=2,ppt_y=2,vec=1,stream=1,chunk=16,staging=shared,unroll=1,min_blocks=2,time_block=4",
    "block_x=32,block_y=4,block_z=1,ppt_x=4,ppt_y=4,vec=1,stream=1,chunk=8,staging=shared,unroll=2,min_blocks=1,time_block=2",
};
#define NTIME_BLOCKED (int)(sizeof time_blocked / sizeof *time_blocked)
static const char *const variants2[] = {
    "block_x=32,block_y=8,ppt_x=2,ppt_y=2,vec=1,staging=ldg,min_blocks=2",
    "block_x=64,block_y=4,ppt_x=1,ppt_y=2,vec=1,staging=shared,min_blocks=1",
    "block_x=32,block_y=8,ppt_x=1,ppt_y=2,vec=4,staging=shared,min_blocks=1",
};

typedef struct results {
    tess_result r[MAX_CONFIGS];
    int n;
} results;

static void collect(const tess_result *r, void *user) {
    results *rs = user;
    if (rs->n < MAX_CONFIGS) rs->r[rs->n++] = *r;
}

/* Evaluates the default, the variants and `nrandom` random configs; every
 * one must verify. Prints the best bandwidth. */
static void run_stencil(const char *name, tess_dtype dtype, const int64_t *shape, int ndim, int nrandom,
                        gsl_rng *rng) {
    const tess_op *op = tess_stencils_op(name);
    tess_task t;
    CHECK_OK(tess_task_init(&t, name, dtype, shape, ndim));
    tess_hw_options o = tess_hw_options_default();
    o.timeout_s = 20;
    o.min_time_s = 0.01;
    tess_space *space = NULL;
    CHECK_OK(tess_op_space(op, &t, &dev, &space));
    tess_evaluator *ev = NULL;
    if (space) CHECK_OK(tess_evaluator_create_hw(op, &t, space, cuda, &dev, &o, &ev));
    if (!ev) {
        tess_space_destroy(space);
        return;
    }
    tess_config configs[MAX_CONFIGS];
    int n = 0;
    tess_space_default(ev->space, &configs[n++]);
    const char *const *variants = ndim == 3 ? variants3 : variants2;
    int nvariants = ndim == 3 ? NVARIANTS3 : 3;
    bool blocked = tess_space_param_index(ev->space, "time_block") >= 0;
    for (int i = 0; i < nvariants + NTIME_BLOCKED * blocked; i++) {
        char text[512];
        if (i < nvariants) snprintf(text, sizeof text, "%s%s", variants[i], blocked ? ",time_block=1" : "");
        else snprintf(text, sizeof text, "%s", time_blocked[i - nvariants]);
        /* A variant may be illegal here (chunk list, launches, shared memory). */
        if (tess_config_parse(ev->space, text, &configs[n]) == TESS_OK) n++;
    }
    CHECK_MSG(n > 1, "%s: none of the variant configs parses in this space: %s", name, tess_errmsg());
    for (int i = 0; i < nrandom && n < MAX_CONFIGS; i++) CHECK_OK(tess_space_sample(ev->space, rng, &configs[n++]));
    results rs = {.n = 0};
    CHECK_OK(ev->ops->evaluate(ev, configs, n, collect, &rs));
    CHECK(rs.n == n);
    char key[TESS_KEY_MAX], text[512];
    tess_task_key(&t, key, sizeof key);
    const tess_result *best = NULL;
    for (int i = 0; i < rs.n; i++) {
        const tess_result *r = &rs.r[i];
        tess_config_format(ev->space, &r->config, text, sizeof text);
        CHECK_MSG(r->status == TESS_RESULT_OK, "%s %s: %s: %s", key, text, tess_outcome_name(r->status), r->message);
        if (r->status == TESS_RESULT_OK && (!best || r->time_ms < best->time_ms)) best = r;
    }
    if (best) {
        tess_config_format(ev->space, &best->config, text, sizeof text);
        printf("%-28s %d configs verified; best %8.1f GB/s %.4f ms  %s\n", key, rs.n, best->gbps, best->time_ms, text);
    }
    /* With several steps: the best of each time_block, as bandwidth per step. */
    int steps = tess_stencils_spec(name)->steps;
    for (int tb = 1; blocked && tb <= 8; tb *= 2) {
        const tess_result *b = NULL;
        for (int i = 0; i < rs.n; i++)
            if (rs.r[i].status == TESS_RESULT_OK && tess_config_get(ev->space, &rs.r[i].config, "time_block") == tb &&
                (!b || rs.r[i].time_ms < b->time_ms))
                b = &rs.r[i];
        if (b) printf("    time_block=%d: %8.1f GB/s per step\n", tb, b->gbps * steps);
    }
    tess_evaluator_destroy(ev);
    tess_space_destroy(space);
}

static const char *const extra_specs[] = {
    "stencil zwrap\ngrid 6x7x8\nboundary periodic z y\n"
    "field u in\nfield s 2d coef\nfield v out advances u\n"
    "v = u[2,0,0] - u[-1,1,0] + s[1,-1] * u[0,0,1]\n",
    "stencil eight\ngrid 9x10x11\nboundary periodic z x\nsteps 8\nfield u in\nfield c coef range 0 1\n"
    "field v out advances u\n"
    "lap = u[1,0,0] + u[-1,0,0] + u[0,1,0] + u[0,-1,0] + u[0,0,1] + u[0,0,-1] - 6 * u\n"
    "v = u + 0.1 * c * lap + 0.01 * lap[0,0,1]\n",
    "stencil heat3d_x4 \"heat3d, four steps\"\ngrid 256x256x256\nsteps 4\nfield u in\nfield u_new out advances u\n"
    "u_new = u + 0.1 * (u[-1,0,0] + u[1,0,0] + u[0,-1,0] + u[0,1,0] + u[0,0,-1] + u[0,0,1] - 6 * u)\n",
    /* Fixed along z, read only in its plane, with a coefficient field: its
     * fused steps run planes past the grid's ends, where k must not be read. */
    "stencil flatk\ngrid 9x10x11\nsteps 2\nfield u in\nfield k coef range 0 1\nfield v out advances u\n"
    "v = u + 0.1 * k * (u[0,0,1] + u[0,0,-1] + u[0,1,0] + u[0,-1,0] - 4 * u)\n",
    "stencil four\ngrid 9x10x11\nsteps 4\n"
    "field u in\nfield k coef range 0 1\nfield u_new out advances u\nparam alpha = 0.1\n"
    "u_new = u + alpha * k * (u[1,0,0] + u[-1,0,0] + u[0,1,0] + u[0,-1,0] + u[0,0,1] + u[0,0,-1] - 6 * u)\n",
};

int main(void) {
    if (!tess_cuda_register || tess_cuda_register() != TESS_OK || !(cuda = tess_backend_find("cuda")) ||
        cuda->probe(&dev) != TESS_OK) {
        printf("skipped: no CUDA device (%s)\n", tess_errmsg());
        return 77;
    }
    CHECK_OK(tess_stencils_register_builtin());
    register_extra_specs(extra_specs, sizeof extra_specs / sizeof extra_specs[0]);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 5);
    const int64_t s3[] = {35, 33, 70}, s2[] = {100, 67};
    const char *const three_d[] = {"heat3d", "box3d27", "star3d25", "varcoef3d", "hdiff", "zwrap", "four", "eight",
                                   "flatk"};
    for (size_t i = 0; i < sizeof three_d / sizeof three_d[0]; i++) {
        run_stencil(three_d[i], TESS_F32, s3, 3, 6, rng);
        run_stencil(three_d[i], TESS_F64, s3, 3, 2, rng);
    }
    const char *const two_d[] = {"heat2d", "advect2d"};
    for (size_t i = 0; i < sizeof two_d / sizeof two_d[0]; i++) {
        run_stencil(two_d[i], TESS_F32, s2, 2, 6, rng);
        run_stencil(two_d[i], TESS_F64, s2, 2, 2, rng);
    }
    /* Larger grids, for the bandwidth printed. */
    const int64_t big3[] = {256, 256, 256}, hdiff3[] = {80, 256, 256}, big2[] = {4096, 4096};
    run_stencil("heat3d", TESS_F32, big3, 3, 10, rng);
    run_stencil("star3d25", TESS_F32, big3, 3, 10, rng);
    run_stencil("hdiff", TESS_F32, hdiff3, 3, 10, rng);
    run_stencil("heat2d", TESS_F32, big2, 2, 10, rng);
    const int64_t big512[] = {512, 512, 512};
    run_stencil("heat3d", TESS_F32, big512, 3, 10, rng);
    run_stencil("heat3d_x4", TESS_F32, big512, 3, 12, rng);
    gsl_rng_free(rng);
    return check_finish("test_stencil_gpu");
}
