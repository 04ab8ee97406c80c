/*
 * heat3d_cuda.c - CUDA code generation for heat3d.
 *
 * The kernel is templates/heat3d.cu; a config becomes the #defines at its
 * top (shape, dtype and tunables are compile-time constants). Tunables:
 *   block_x, block_y, block_z   threads per block
 *   zstream, chunk_z            2.5D streaming along z with a register queue
 *                               of chunk_z planes per thread (off: chunk_z 1)
 *   items_x, vec                vectors per thread in x, and their width
 *   unroll                      unroll factor of the z loop
 *   min_blocks                  __launch_bounds__ minimum blocks per SM
 *   store                       plain or streaming (evict-first) stores
 * Constraints that depend on the shape or the device carry their limit in
 * the constraint's user pointer (by value), so the space owns no memory.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "core/strbuf.h"
#include "heat3d.h"

extern const char tess_src_stencils_templates_heat3d_cu[];

/* Parameters in the order they are added (the order of constraint values). */
enum { P_BLOCK_X, P_BLOCK_Y, P_BLOCK_Z, P_ZSTREAM, P_CHUNK_Z, P_ITEMS_X, P_VEC, P_UNROLL,
       P_MIN_BLOCKS, P_STORE };

static const char *const on_off[] = {"off", "on"};
static const char *const store_kinds[] = {"plain", "streaming"};

/* A limit carried in a constraint's user pointer. */
static void *limit_ptr(int64_t v) { return (void *)(uintptr_t)v; }
static double limit_of(void *user) { return (double)(uintptr_t)user; }

static double threads_of(const double *v) { return v[P_BLOCK_X] * v[P_BLOCK_Y] * v[P_BLOCK_Z]; }

/* At least a warp, at most the device's threads per block. */
static bool threads_fit(const double *v, void *user) {
    return threads_of(v) >= 32 && threads_of(v) <= limit_of(user);
}

/* Streaming walks chunk_z > 1 planes with one thread per column; without it
 * each thread does one point. */
static bool stream_consistent(const double *v, void *user) {
    (void)user;
    if (v[P_ZSTREAM] > 0) return v[P_CHUNK_Z] > 1 && v[P_BLOCK_Z] == 1;
    return v[P_CHUNK_Z] == 1;
}

static bool unroll_fits(const double *v, void *user) {
    (void)user;
    return v[P_UNROLL] <= v[P_CHUNK_Z];
}

/* At most 8 stencil bodies unrolled per thread: beyond that compile times
 * reach a second and register pressure only slows the kernel (measured on an
 * H200: no config with items_x*unroll >= 16 came within 10% of the best). */
static bool body_count_fits(const double *v, void *user) {
    (void)user;
    return v[P_ITEMS_X] * v[P_UNROLL] <= 8;
}

/* A block's x extent no wider than the row, rounded up to a power of two. */
static bool x_extent_fits(const double *v, void *user) {
    return v[P_BLOCK_X] * v[P_ITEMS_X] * v[P_VEC] <= limit_of(user);
}

/* Likewise in y and z. */
static bool y_extent_fits(const double *v, void *user) { return v[P_BLOCK_Y] <= limit_of(user); }
static bool z_extent_fits(const double *v, void *user) { return v[P_BLOCK_Z] <= limit_of(user); }

/* The promised blocks fit in an SM's threads. */
static bool min_blocks_fit(const double *v, void *user) {
    return v[P_MIN_BLOCKS] * threads_of(v) <= limit_of(user);
}

static int64_t pow2_at_least(int64_t n, int64_t floor) {
    int64_t p = floor;
    while (p < n) p *= 2;
    return p;
}

static int index_of(const double *values, int n, double v, int fallback) {
    for (int i = 0; i < n; i++)
        if (values[i] == v) return i;
    return fallback;
}

tess_status tess_heat3d_cuda_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out) {
    (void)op;
    *out = NULL;
    const int64_t nz = t->shape[0], ny = t->shape[1], nx = t->shape[2];
    const double block_x[] = {16, 32, 64, 128, 256}, block_y[] = {1, 2, 4, 8, 16, 32},
                 block_z[] = {1, 2, 4, 8}, items_x[] = {1, 2, 4}, unroll[] = {1, 2, 4, 8},
                 min_blocks[] = {0, 1, 2, 4};
    /* chunk_z: 1 (no streaming), then powers of two up to the grid's depth. */
    double chunk_z[8];
    int nchunk = 0;
    chunk_z[nchunk++] = 1;
    for (int64_t c = 4; c <= 128 && c <= nz; c *= 2) chunk_z[nchunk++] = (double)c;
    /* Vector widths that keep every row aligned (16 bytes at most). */
    double vec[3];
    int nvec = 0;
    int max_vec = t->dtype == TESS_F64 ? 2 : 4;
    for (int w = 1; w <= max_vec; w *= 2)
        if (nx % w == 0) vec[nvec++] = w;

    /* Defaults: a 32x8 block streaming 8 planes (or the deepest chunk the
     * grid allows) with the widest vector. Short chunks make many blocks, so
     * the last wave of blocks leaves little of the GPU idle. */
    const bool can_stream = nchunk > 1;
    const int d_chunk = can_stream ? index_of(chunk_z, nchunk, 8, nchunk - 1) : 0;
    const int d_unroll = can_stream ? 1 : 0;   /* 2 when streaming, else 1 */

    int threads_max = dev->max_threads_per_block > 0 ? dev->max_threads_per_block : 1024;
    int threads_sm = dev->max_threads_per_sm > 0 ? dev->max_threads_per_sm : 2048;
    tess_space *s = tess_space_create();
    if (!s) return tess_error(TESS_ERR_NOMEM, "heat3d cuda space");
    tess_status st = tess_space_add(s, "block_x", 5, block_x, 1);
    if (!st) st = tess_space_add(s, "block_y", 6, block_y, 3);
    if (!st) st = tess_space_add(s, "block_z", 4, block_z, 0);
    if (!st) st = tess_space_add_labels(s, "zstream", 2, on_off, can_stream ? 1 : 0);
    if (!st) st = tess_space_add(s, "chunk_z", nchunk, chunk_z, d_chunk);
    if (!st) st = tess_space_add(s, "items_x", 3, items_x, 0);
    if (!st) st = tess_space_add(s, "vec", nvec, vec, nvec - 1);
    if (!st) st = tess_space_add(s, "unroll", 4, unroll, d_unroll);
    if (!st) st = tess_space_add(s, "min_blocks", 4, min_blocks, 0);
    if (!st) st = tess_space_add_labels(s, "store", 2, store_kinds, 0);
    char what[96];
    snprintf(what, sizeof what, "32 <= block_x*block_y*block_z <= %d", threads_max);
    if (!st) st = tess_space_add_constraint(s, threads_fit, limit_ptr(threads_max), what);
    if (!st)
        st = tess_space_add_constraint(s, stream_consistent, NULL,
                                       "zstream=on needs chunk_z > 1 and block_z = 1; off needs chunk_z = 1");
    if (!st) st = tess_space_add_constraint(s, unroll_fits, NULL, "unroll <= chunk_z");
    if (!st) st = tess_space_add_constraint(s, body_count_fits, NULL, "items_x*unroll <= 8");
    /* Floors keep the default (a warp of the widest vectors, 8 rows) legal on small grids. */
    int64_t xcap = pow2_at_least(nx, 32 * (int64_t)vec[nvec - 1]);
    snprintf(what, sizeof what, "block_x*items_x*vec <= %lld", (long long)xcap);
    if (!st) st = tess_space_add_constraint(s, x_extent_fits, limit_ptr(xcap), what);
    int64_t ycap = pow2_at_least(ny, 8);
    snprintf(what, sizeof what, "block_y <= %lld", (long long)ycap);
    if (!st) st = tess_space_add_constraint(s, y_extent_fits, limit_ptr(ycap), what);
    int64_t zcap = pow2_at_least(nz, 1);
    snprintf(what, sizeof what, "block_z <= %lld", (long long)zcap);
    if (!st) st = tess_space_add_constraint(s, z_extent_fits, limit_ptr(zcap), what);
    snprintf(what, sizeof what, "min_blocks*threads <= %d", threads_sm);
    if (!st) st = tess_space_add_constraint(s, min_blocks_fit, limit_ptr(threads_sm), what);
    if (st) {
        tess_space_destroy(s);
        return st;
    }
    *out = s;
    return TESS_OK;
}

static unsigned ceil_div(int64_t a, int64_t b) { return (unsigned)((a + b - 1) / b); }

tess_status tess_heat3d_cuda_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                                  const tess_config *c, tess_kernel_source *out) {
    (void)op;
    double v[TESS_MAX_PARAMS];
    if (tess_space_nparams(s) != P_STORE + 1)
        return tess_error(TESS_ERR_ARG, "heat3d cuda: the space is not a heat3d cuda space");
    tess_space_values(s, c, v);
    const int bx = (int)v[P_BLOCK_X], by = (int)v[P_BLOCK_Y], bz = (int)v[P_BLOCK_Z];
    const int chunk = (int)v[P_CHUNK_Z], items = (int)v[P_ITEMS_X], vec = (int)v[P_VEC];
    const int64_t nz = t->shape[0], ny = t->shape[1], nx = t->shape[2];
    if (nx % vec != 0)
        return tess_error(TESS_ERR_ARG, "heat3d cuda: vec=%d does not divide nx=%lld", vec, (long long)nx);
    const unsigned grid[3] = {ceil_div(nx, (int64_t)bx * items * vec), ceil_div(ny, by),
                              ceil_div(ceil_div(nz, chunk), bz)};
    if (grid[1] > 65535 || grid[2] > 65535)
        return tess_error(TESS_ERR_ARG, "heat3d cuda: grid %ux%ux%u exceeds 65535 blocks in y or z",
                          grid[0], grid[1], grid[2]);

    char config[512];
    tess_status st = tess_config_format(s, c, config, sizeof config);
    if (st) return st;
    const bool f64 = t->dtype == TESS_F64;
    const char *real = f64 ? "double" : "float";
    char real_v[16];
    if (vec == 1)
        snprintf(real_v, sizeof real_v, "%s", real);
    else
        snprintf(real_v, sizeof real_v, "%s%d", real, vec);

    tess_strbuf b = {0};
    tess_strbuf_printf(&b,
        "// heat3d %lldx%lldx%lld (z, y, x) %s for %s, generated by tessera.\n"
        "// config: %s\n"
        "// launch: grid %ux%ux%u, block %dx%dx%d\n"
        "#define REAL %s\n"
        "#define VEC %d\n"
        "#define REAL_V %s\n"
        "#define NZ %lld\n#define NY %lld\n#define NX %lld\n"
        "#define ALPHA %.17g\n"
        "#define BLOCK_X %d\n#define BLOCK_Y %d\n#define BLOCK_Z %d\n"
        "#define ITEMS_X %d\n"
        "#define CHUNK_Z %d\n"
        "#define UNROLL %d\n"
        "#define MIN_BLOCKS %d\n"
        "#define STREAMING_STORE %d\n\n",
        (long long)nz, (long long)ny, (long long)nx, tess_dtype_name(t->dtype),
        dev->arch[0] ? dev->arch : "cuda", config, grid[0], grid[1], grid[2], bx, by, bz, real, vec,
        real_v, (long long)nz, (long long)ny, (long long)nx, TESS_HEAT3D_ALPHA, bx, by, bz, items,
        chunk, (int)v[P_UNROLL], (int)v[P_MIN_BLOCKS], (int)v[P_STORE]);
    tess_strbuf_puts(&b, tess_src_stencils_templates_heat3d_cu);
    memset(out, 0, sizeof *out);
    st = tess_strbuf_finish(&b, &out->code);
    if (st) return st;
    /* The kernel uses no runtime API types, textures or device launches. */
    snprintf(out->options, sizeof out->options, "--minimal");
    out->nlaunches = 1;
    tess_launch *l = &out->launch[0];
    snprintf(l->entry, sizeof l->entry, "heat3d");
    memcpy(l->grid, grid, sizeof grid);
    l->block[0] = (unsigned)bx;
    l->block[1] = (unsigned)by;
    l->block[2] = (unsigned)bz;
    return TESS_OK;
}
