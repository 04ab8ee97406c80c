/*
 * test_stencil_cuda.c - the CUDA generator: for every stencil of the
 * library, f32 and f64, the default config, each kernel variant
 * (3D blocks; streaming through the read-only cache or shared tiles, with
 * several points per thread; temporal blocking for stencils of several
 * steps) and random legal configs compile with NVRTC
 * for sm_90 through the cuda backend (on x extents allowing vectors of 1, 2
 * and 4 points), and the cubin holds every launch's
 * entry. Also: multi-step stencils get one launch per time block, launch
 * geometry covers the grid, illegal configs are rejected by the space.
 * NVRTC needs no GPU; without it the test is skipped.
 */
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "extra_specs.h"
#include "h200.h"
#include "core/backend.h"
#include "core/error.h"
#include "stencils/family.h"

/* Present only in builds with the CUDA toolkit. */
extern tess_status tess_cuda_register(void) __attribute__((weak));

#define SAMPLES 2

static const tess_backend_ops *cuda;
static tess_device dev;

static const char *const variants3[] = {
    "block_x=64,block_y=4,block_z=2,ppt_x=2,ppt_y=1,vec=1,stream=0,chunk=4,staging=ldg,unroll=1,min_blocks=1",
    "block_x=32,block_y=8,block_z=1,ppt_x=1,ppt_y=2,vec=2,stream=1,chunk=16,staging=ldg,unroll=2,min_blocks=2",
    "block_x=32,block_y=4,block_z=1,ppt_x=2,ppt_y=2,vec=1,stream=1,chunk=8,staging=shared,unroll=1,min_blocks=1",
    "block_x=32,block_y=4,block_z=1,ppt_x=1,ppt_y=2,vec=2,stream=1,chunk=8,staging=shared,unroll=2,min_blocks=1",
    /* last: compiled in f64 too; legal where the device has asynchronous copies */
    "block_x=32,block_y=4,block_z=1,ppt_x=1,ppt_y=2,vec=1,stream=1,chunk=8,staging=async,unroll=2,min_blocks=1,prefetch=3",
};
/* Temporal blocking, for stencils of several steps. */
static const char *const time_blocked[] = {
    "block_x=32,block_y=4,block_z=1,ppt_x=1,ppt_y=4,vec=1,stream=1,chunk=16,staging=shared,unroll=2,min_blocks=1,time_block=2",
    "block_x=32,block_y=16,block_z=1,ppt_x=1,ppt_y=1,vec=1,stream=1,chunk=8,staging=shared,unroll=1,min_blocks=2,time_block=2",
    "block_x=32,block_y=4,block_z=1,ppt_x=2,ppt_y=2,vec=1,stream=1,chunk=8,staging=shared,unroll=2,min_blocks=2,time_block=2",
};
static const char *const variants2[] = {
    "block_x=32,block_y=8,ppt_x=2,ppt_y=2,vec=1,staging=ldg,min_blocks=2",
    "block_x=64,block_y=4,ppt_x=1,ppt_y=2,vec=1,staging=shared,min_blocks=1",
};

/* Compiles one config; false when NVRTC is missing (skip). */
static bool compile_config(const tess_op *op, const tess_task *t, const tess_space *sp, const tess_config *c) {
    char text[512];
    tess_config_format(sp, c, text, sizeof text);
    CHECK_MSG(tess_space_valid(sp, c), "%s %s violates %s", t->op, text, tess_space_violation(sp, c));
    tess_kernel_source src;
    tess_status st = tess_op_emit(op, t, &dev, sp, c, &src);
    CHECK_MSG(st == TESS_OK, "%s %s: %s", t->op, text, tess_errmsg());
    if (st) return true;
    /* The blocks cover the grid, one launch per step. */
    const tess_launch *l = &src.launch[0];
    int r = t->ndim;
    double px = tess_config_get(sp, c, "ppt_x") * tess_config_get(sp, c, "vec"), py = tess_config_get(sp, c, "ppt_y");
    CHECK(l->grid[0] * l->block[0] * px >= t->shape[r - 1] && l->grid[1] * l->block[1] * py >= t->shape[r - 2]);
    double tb = tess_space_param_index(sp, "time_block") >= 0 ? tess_config_get(sp, c, "time_block") : 1;
    CHECK(src.nlaunches * tb == tess_stencils_spec(t->op)->steps);
    tess_blob bin = {0};
    char *log = NULL;
    st = cuda->compile(&dev, &src, &bin, &log);
    bool ran = st != TESS_ERR_UNAVAILABLE;
    if (!ran) printf("skipped: %s\n", tess_errmsg());
    else CHECK_MSG(st == TESS_OK, "%s %s: %s\n%s", t->op, text, tess_errmsg(), log ? log : "");
    for (int i = 0; st == TESS_OK && i < src.nlaunches; i++)
        CHECK_MSG(memmem(bin.data, bin.size, src.launch[i].entry, strlen(src.launch[i].entry)),
                  "entry %s missing from the cubin of %s %s", src.launch[i].entry, t->op, text);
    free(log);
    tess_blob_free(&bin);
    tess_kernel_source_free(&src);
    return ran;
}

/* The default, every variant and SAMPLES random configs (f64: the default
 * and the last variant); false if skipped. */
static bool compile_stencil(const char *name, tess_dtype dtype, const int64_t *shape, int ndim, gsl_rng *rng) {
    const tess_op *op = tess_stencils_op(name);
    tess_task t;
    CHECK_OK(tess_task_init(&t, name, dtype, shape, ndim));
    tess_space *sp = NULL;
    CHECK_OK(tess_op_space(op, &t, &dev, &sp));
    if (!sp) return true;
    tess_config c;
    tess_space_default(sp, &c);
    bool ran = compile_config(op, &t, sp, &c);
    const char *const *variants = ndim == 3 ? variants3 : variants2;
    int nvariants = ndim == 3 ? 5 : 2;
    bool blocked = tess_space_param_index(sp, "time_block") >= 0;
    bool async = tess_space_param_index(sp, "prefetch") >= 0;
    int ntime_blocked = (int)(sizeof time_blocked / sizeof *time_blocked);
    for (int i = dtype == TESS_F64 ? nvariants - 1 : 0; ran && i < nvariants + ntime_blocked * blocked; i++) {
        char text[512];
        if (i < nvariants) snprintf(text, sizeof text, "%s%s", variants[i], blocked ? ",time_block=1" : "");
        else snprintf(text, sizeof text, "%s", time_blocked[i - nvariants]);
        /* One step per launch is illegal beyond TESS_MAX_LAUNCHES steps. */
        bool legal = i >= nvariants || tess_stencils_spec(name)->steps <= TESS_MAX_LAUNCHES;
        if (i < nvariants && strstr(text, "staging=async")) legal &= async;
        tess_status st = tess_config_parse(sp, text, &c);
        CHECK_MSG((st == TESS_OK) == legal, "%s: %s", text, st ? tess_errmsg() : "accepted");
        if (!st) ran = compile_config(op, &t, sp, &c);
    }
    for (int i = 0; ran && dtype == TESS_F32 && i < SAMPLES; i++) {
        CHECK_OK(tess_space_sample(sp, rng, &c));
        ran = compile_config(op, &t, sp, &c);
    }
    if (ran) printf("%-10s %s: compiled\n", name, tess_dtype_name(dtype));
    tess_space_destroy(sp);
    return ran;
}

/* Every config of the list is refused by the space. */
static void check_illegal(const tess_space *sp, const char *const *configs, size_t n) {
    tess_config c;
    for (size_t i = 0; i < n; i++)
        CHECK_MSG(tess_config_parse(sp, configs[i], &c) == TESS_ERR_ARG, "legal: %s", configs[i]);
}

/* Constraints: streaming settings only with streaming; block sizes; shared memory. */
static void check_space(void) {
    const tess_op *op = tess_stencils_op("star3d25");
    tess_task t;
    CHECK_OK(tess_task_init(&t, "star3d25", TESS_F64, (const int64_t[]){64, 64, 64}, 3));
    tess_space *sp = NULL;
    CHECK_OK(tess_op_space(op, &t, &dev, &sp));
    if (!sp) return;
    tess_config c;
    const char *illegal[] = {
        "block_x=256,block_y=16,block_z=1,ppt_x=1,ppt_y=1,vec=1,stream=0,chunk=4,staging=ldg,unroll=1,min_blocks=1",
        "block_x=32,block_y=1,block_z=1,ppt_x=1,ppt_y=1,vec=1,stream=0,chunk=8,staging=ldg,unroll=1,min_blocks=1",
        "block_x=32,block_y=4,block_z=2,ppt_x=1,ppt_y=1,vec=1,stream=1,chunk=8,staging=ldg,unroll=1,min_blocks=1",
        "block_x=256,block_y=4,block_z=1,ppt_x=4,ppt_y=4,vec=1,stream=1,chunk=8,staging=shared,unroll=1,min_blocks=1",
        "block_x=128,block_y=8,block_z=1,ppt_x=1,ppt_y=1,vec=2,stream=1,chunk=8,staging=shared,unroll=1,min_blocks=1",
        /* 1,024 threads of which 4 blocks would not fit an SM */
        "block_x=64,block_y=16,block_z=1,ppt_x=1,ppt_y=1,vec=1,stream=1,chunk=16,staging=ldg,unroll=1,min_blocks=4",
        /* a whole turn of the queue (10 planes) at 8 points per thread */
        "block_x=32,block_y=8,block_z=1,ppt_x=1,ppt_y=4,vec=2,stream=1,chunk=64,staging=ldg,unroll=10,min_blocks=1",
    };
    check_illegal(sp, illegal, sizeof illegal / sizeof illegal[0]);
    CHECK_OK(tess_config_parse(sp, "block_x=32,block_y=8,block_z=1,ppt_x=1,ppt_y=2,vec=2,stream=1,chunk=64,"
                                   "staging=ldg,unroll=10,min_blocks=8", &c));
    /* A config built through the API, past the constraints: emit refuses it. */
    int ppt_y = tess_space_param_index(sp, "ppt_y");
    CHECK(ppt_y >= 0);
    if (ppt_y >= 0) {
        c.v[ppt_y] = 2;   /* ppt_y=4: 8 points per thread, 80 values a turn */
        tess_kernel_source src;
        CHECK(tess_op_emit(op, &t, &dev, sp, &c, &src) == TESS_ERR_ARG);
        CHECK_MSG(strstr(tess_errmsg(), "violates") != NULL, "%s", tess_errmsg());
    }
    size_t n = 0;
    CHECK_OK(tess_space_count(sp, 1000000, &n));
    CHECK_MSG(n > 100, "only %zu legal configs", n);
    tess_space_destroy(sp);
}

/* The text of the default config of op at `shape` in dtype on device d. */
static void default_text_at(const char *name, tess_dtype dtype, const tess_device *d, const int64_t shape[3],
                            char *text, size_t len) {
    tess_task t;
    CHECK_OK(tess_task_init(&t, name, dtype, shape, 3));
    tess_space *sp = NULL;
    text[0] = '\0';
    CHECK_OK(tess_op_space(tess_stencils_op(name), &t, d, &sp));
    if (!sp) return;
    tess_config c;
    tess_space_default(sp, &c);
    CHECK_OK(tess_config_format(sp, &c, text, len));
    tess_space_destroy(sp);
}

/* The same at 64^3. */
static void default_text(const char *name, tess_dtype dtype, const tess_device *d, char *text, size_t len) {
    default_text_at(name, dtype, d, (const int64_t[]){64, 64, 64}, text, len);
}

/* Defaults per stencil and device. staging=async: offered from sm_80, the
 * default of stencils reading 20 neighbours or more with the most planes in
 * flight that fit the device's shared memory per block; its ring must fit. */
static void check_async(void) {
    char text[512];
    default_text("star3d25", TESS_F32, &dev, text, sizeof text);
    CHECK_MSG(strstr(text, "block_y=4,") && strstr(text, "ppt_y=4,") && strstr(text, "staging=async") &&
                  strstr(text, "prefetch=3"), "star3d25 on the H200: %s", text);
    default_text("box3d27", TESS_F32, &dev, text, sizeof text);
    CHECK_MSG(strstr(text, "staging=async") && strstr(text, "prefetch=3"), "box3d27 on the H200: %s", text);
    default_text("varcoef3d", TESS_F32, &dev, text, sizeof text);
    CHECK_MSG(!strstr(text, "async") && strstr(text, "prefetch=1"), "varcoef3d on the H200: %s", text);
    /* Nothing read along z: no streaming. */
    default_text("hdiff", TESS_F32, &dev, text, sizeof text);
    CHECK_MSG(strstr(text, "block_z=2,") && strstr(text, "stream=0,") && strstr(text, "staging=ldg"),
              "hdiff on the H200: %s", text);
    /* 99 KiB per block (sm_86): star3d25's ring of 24x136 floats holds 7 planes, 2 in flight. */
    tess_device small = dev;
    small.cc_major = 8;
    small.cc_minor = 6;
    small.smem_per_block_optin = 101376;
    default_text("star3d25", TESS_F32, &small, text, sizeof text);
    CHECK_MSG(strstr(text, "staging=async") && strstr(text, "prefetch=2"), "star3d25 on sm_86: %s", text);
    /* sm_75: no asynchronous copies, no prefetch parameter; the old default. */
    tess_device old = dev;
    old.cc_major = 7;
    old.cc_minor = 5;
    default_text("star3d25", TESS_F32, &old, text, sizeof text);
    CHECK_MSG(strstr(text, "staging=shared") && !strstr(text, "prefetch"), "star3d25 on sm_75: %s", text);
    tess_task t;
    CHECK_OK(tess_task_init(&t, "star3d25", TESS_F32, (const int64_t[]){64, 64, 64}, 3));
    tess_space *sp = NULL;
    CHECK_OK(tess_op_space(tess_stencils_op("star3d25"), &t, &dev, &sp));
    if (!sp) return;
    tess_config c;
    /* prefetch > 1 without async; a ring of 40x520 floats x 6 planes (499 KB); async without streaming */
    const char *illegal[] = {
        "block_x=32,block_y=8,block_z=1,ppt_x=1,ppt_y=1,vec=4,stream=1,chunk=64,staging=shared,unroll=1,min_blocks=1,prefetch=2",
        "block_x=128,block_y=8,block_z=1,ppt_x=1,ppt_y=4,vec=4,stream=1,chunk=64,staging=async,unroll=1,min_blocks=1,prefetch=1",
        "block_x=32,block_y=8,block_z=1,ppt_x=1,ppt_y=1,vec=4,stream=0,chunk=4,staging=async,unroll=1,min_blocks=1",
    };
    check_illegal(sp, illegal, sizeof illegal / sizeof illegal[0]);
    /* Its launch asks for the ring: (16 + 8) rows x (4 + 128 + 4) floats x (0 + 4 + 3 + 1) planes. */
    CHECK_OK(tess_config_parse(sp, "block_x=32,block_y=4,block_z=1,ppt_x=1,ppt_y=4,vec=4,stream=1,chunk=64,"
                                   "staging=async,unroll=1,min_blocks=1,prefetch=3", &c));
    tess_kernel_source src;
    CHECK_OK(tess_op_emit(tess_stencils_op("star3d25"), &t, &dev, sp, &c, &src));
    CHECK_MSG(src.launch[0].shared_bytes == 24 * 136 * 4 * 8, "ring of %u bytes", src.launch[0].shared_bytes);
    tess_kernel_source_free(&src);
    tess_space_destroy(sp);
}

/* The bytes of the shared tiles config `text` of spec `name` (64^3 f32)
 * launches with on device d; 0 when the space refuses it. */
static unsigned time_block_bytes(const char *name, const tess_device *d, const char *text) {
    tess_task t;
    CHECK_OK(tess_task_init(&t, name, TESS_F32, (const int64_t[]){64, 64, 64}, 3));
    tess_space *sp = NULL;
    CHECK_OK(tess_op_space(tess_stencils_op(name), &t, d, &sp));
    if (!sp) return 0;
    tess_config c;
    unsigned bytes = 0;
    if (tess_config_parse(sp, text, &c) == TESS_OK) {
        tess_kernel_source src;
        CHECK_OK(tess_op_emit(tess_stencils_op(name), &t, d, sp, &c, &src));
        bytes = src.launch[0].shared_bytes;
        tess_kernel_source_free(&src);
    }
    tess_space_destroy(sp);
    return bytes;
}

/* Chunk lengths: powers of two from 4 up to the z extent (rounded up, at
 * most 512) and the lengths that split it into 1 to 16 equal chunks. */
static void check_chunks(const tess_device *d) {
    static const double at512[] = {4, 8, 16, 32, 35, 37, 40, 43, 47, 52, 57, 64, 74, 86, 103, 128, 171, 256, 512};
    static const double at80[] = {4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 20, 27, 32, 40, 64, 80, 128};
    const double *want[] = {at512, at80};
    int nwant[] = {sizeof at512 / sizeof at512[0], sizeof at80 / sizeof at80[0]};
    int64_t nz[] = {512, 80};
    for (int k = 0; k < 2; k++) {
        tess_task t;
        CHECK_OK(tess_task_init(&t, "heat3d", TESS_F32, (const int64_t[]){nz[k], 64, 64}, 3));
        tess_space *sp = NULL;
        CHECK_OK(tess_op_space(tess_stencils_op("heat3d"), &t, d, &sp));
        if (!sp) continue;
        int p = tess_space_param_index(sp, "chunk");
        CHECK_MSG(p >= 0 && tess_space_param_size(sp, p) == nwant[k], "nz %lld: %d chunk lengths", (long long)nz[k],
                  p >= 0 ? tess_space_param_size(sp, p) : -1);
        for (int i = 0; p >= 0 && i < nwant[k] && i < tess_space_param_size(sp, p); i++)
            CHECK_MSG(tess_space_param_value(sp, p, i) == want[k][i], "nz %lld: chunk %d is %g, not %g",
                      (long long)nz[k], i, tess_space_param_value(sp, p, i), want[k][i]);
        tess_space_destroy(sp);
    }
}

/* Temporal blocking's shared tiles: per parity of the iteration and level
 * but the last, one tile per plane offset read off the column, in dynamic
 * shared memory up to the device's limit per block; the fused defaults. */
static void check_time_blocks(void) {
    /* four: reads off the column in plane 0 only; (32 + 2) x (1 + 64 + 1) floats x 2 x 4 levels. */
    const char *four = "block_x=64,block_y=8,block_z=1,ppt_x=1,ppt_y=4,vec=1,stream=1,chunk=64,staging=shared,"
                       "unroll=1,min_blocks=2,time_block=4";
    unsigned bytes = time_block_bytes("four", &dev, four);
    CHECK_MSG(bytes == 34 * 66 * 4 * 2 * 4, "four: %u bytes", bytes);
    /* Past 48 KiB: refused where a block may not have more. */
    tess_device small = dev;
    small.smem_per_block_optin = 49152;
    bytes = time_block_bytes("four", &small, four);
    CHECK_MSG(bytes == 0, "four within 48 KiB: %u bytes", bytes);
    /* eight: lap[0,0,1] reads u[-1,0,1] .. u[1,0,2], planes -1, 0 and 1 off the column and up to 2
     * columns right; (16 + 2) x (1 + 32 + 2) floats x 3 planes x 2 x 2 levels. */
    bytes = time_block_bytes("eight", &dev, "block_x=32,block_y=4,block_z=1,ppt_x=1,ppt_y=4,vec=1,stream=1,"
                                            "chunk=16,staging=shared,unroll=1,min_blocks=1,time_block=2");
    CHECK_MSG(bytes == 18 * 35 * 4 * 3 * 2 * 2, "eight: %u bytes", bytes);
    /* heat3d in four steps fuses them by default, two where 48 KiB allow only that; four
     * reads a coefficient field and keeps one step per launch. */
    char text[512];
    default_text("heat3d4", TESS_F32, &dev, text, sizeof text);
    CHECK_MSG(strstr(text, "block_x=32,block_y=16,") && strstr(text, "ppt_y=4,") && strstr(text, "min_blocks=2,") &&
                  strstr(text, "time_block=4"), "heat3d4 on the H200: %s", text);
    default_text("heat3d4", TESS_F32, &small, text, sizeof text);
    CHECK_MSG(strstr(text, "time_block=2"), "heat3d4 within 48 KiB: %s", text);
    /* Chunks that split z evenly are offered besides the powers of two; the default stays at 64. */
    default_text_at("heat3d4", TESS_F32, &dev, (const int64_t[]){512, 512, 512}, text, sizeof text);
    CHECK_MSG(strstr(text, "chunk=64,"), "heat3d4 at 512^3: %s", text);
    check_chunks(&dev);
    default_text("four", TESS_F32, &dev, text, sizeof text);
    CHECK_MSG(strstr(text, "time_block=1"), "four on the H200: %s", text);
    /* In f64 four steps' tiles (140 KB) leave room for one block per SM: two steps. */
    default_text("heat3d4", TESS_F64, &dev, text, sizeof text);
    CHECK_MSG(strstr(text, "min_blocks=2,") && strstr(text, "time_block=2"), "heat3d4 f64: %s", text);
    /* Fusing wins over the defaults of stencils reading nothing along z and of those of 27 reads. */
    default_text("flat4", TESS_F32, &dev, text, sizeof text);
    CHECK_MSG(strstr(text, "stream=1,") && strstr(text, "time_block=4"), "flat4: %s", text);
    /* The box reads three planes off the column: two blocks per SM fit two steps' tiles. */
    default_text("box4", TESS_F32, &dev, text, sizeof text);
    CHECK_MSG(strstr(text, "staging=shared") && strstr(text, "time_block=2"), "box4: %s", text);
}

static const char *const extra_specs[] = {
    "stencil zwrap\ngrid 6x7x8\nboundary periodic z y\n"
    "field u in\nfield s 2d coef\nfield v out advances u\n"
    "v = u[2,0,0] - u[-1,1,0] + s[1,-1] * u[0,0,1]\n",
    "stencil four\ngrid 9x10x11\nsteps 4\n"
    "field u in\nfield k coef\nfield u_new out advances u\nparam alpha = 0.1\n"
    "u_new = u + alpha * k * (u[1,0,0] + u[-1,0,0] + u[0,1,0] + u[0,-1,0] + u[0,0,1] + u[0,0,-1] - 6 * u)\n",
    TESS_TEST_SPEC_EIGHT,
    /* Staged tiles with a halo only along y, or only along x. */
    "stencil yonly\ngrid 8x9x16\nfield u in\nfield v out advances u\nv = u[0,1,0] + u[0,-1,0] - u[1,0,0]\n",
    "stencil xonly\ngrid 8x9x16\nboundary periodic x\nfield u in\nfield v out advances u\nv = u[0,0,1] + u[0,0,-3]\n",
    "stencil five\ngrid 9x10\nsteps 5\nfield u in\nfield v out advances u\nv = u[0,1]\n",
    /* Several steps: nothing read along z; the 27-point box. */
    "stencil flat4\ngrid 8x9x40\nsteps 4\nfield u in\nfield v out advances u\n"
    "v = u + 0.1 * (u[0,1,0] + u[0,-1,0] + u[0,0,1] + u[0,0,-1] - 4 * u)\n",
    TESS_TEST_SPEC_BOX4,
};

int main(void) {
    if (!tess_cuda_register) {
        printf("skipped: built without the CUDA toolkit\n");
        return 77;
    }
    CHECK_OK(tess_cuda_register());
    cuda = tess_backend_find("cuda");
    CHECK(cuda != NULL);
    if (!cuda) return check_finish("test_stencil_cuda");
    dev = tess_test_h200("NVIDIA H200");
    CHECK_OK(tess_stencils_register_builtin());
    register_extra_specs(extra_specs, sizeof extra_specs / sizeof extra_specs[0]);
    check_space();
    check_async();
    check_time_blocks();
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 11);
    /* x extents: 70 and 67 allow vectors of 2 and 1, 36 (f32) vectors of 4. */
    const int64_t s3[] = {35, 33, 70}, s2[] = {100, 67}, s3v[] = {21, 18, 36};
    const char *const three_d[] = {"heat3d", "box3d27", "star3d25", "varcoef3d", "hdiff", "zwrap", "four", "eight",
                                   "yonly", "xonly"};
    bool ran = true;
    for (size_t i = 0; ran && i < sizeof three_d / sizeof three_d[0]; i++) {
        ran = compile_stencil(three_d[i], TESS_F32, s3, 3, rng);
        if (ran) ran = compile_stencil(three_d[i], TESS_F64, s3, 3, rng);
        if (ran) ran = compile_stencil(three_d[i], TESS_F32, s3v, 3, rng);
    }
    const char *const two_d[] = {"heat2d", "advect2d"};
    for (size_t i = 0; ran && i < sizeof two_d / sizeof two_d[0]; i++) {
        ran = compile_stencil(two_d[i], TESS_F32, s2, 2, rng);
        if (ran) ran = compile_stencil(two_d[i], TESS_F64, s2, 2, rng);
    }
    /* More steps than launches: refused with a message. */
    tess_task t;
    CHECK_OK(tess_task_init(&t, "five", TESS_F32, (const int64_t[]){9, 10}, 2));
    tess_space *sp = NULL;
    CHECK(tess_op_space(tess_stencils_op("five"), &t, &dev, &sp) == TESS_ERR_ARG && !sp);
    CHECK_MSG(strstr(tess_errmsg(), "5 steps do not fit") != NULL, "%s", tess_errmsg());
    gsl_rng_free(rng);
    if (!ran) return 77;
    return check_finish("test_stencil_cuda");
}
