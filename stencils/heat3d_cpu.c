/*
 * heat3d_cpu.c - C/OpenMP code generation for heat3d.
 *
 * The grid is cut into tiles of tile_z planes by tile_y rows; OpenMP threads
 * share the tiles (in z-y or y-z order), and each row's interior runs as one
 * unit-stride loop, optionally vectorized with `omp simd`; with unroll > 1,
 * that many rows are computed in one sweep so that loaded rows are reused.
 * Tiles small enough to keep three planes' rows in cache reuse each loaded
 * row for its neighbours above and below.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "core/strbuf.h"
#include "heat3d.h"

static const char *const loop_orders[] = {"zy", "yz"};

typedef struct heat3d_cpu_params {
    int tile_z, tile_y, order, simd, unroll, threads;
} heat3d_cpu_params;

/* Each thread must get at least one tile. Values are in parameter order:
 * tile_z, tile_y, order, simd, unroll, threads; the task is the user pointer. */
static bool enough_tiles(const double *v, void *user) {
    const tess_task *t = user;
    double tiles = ceil((double)t->shape[0] / v[0]) * ceil((double)t->shape[1] / v[1]);
    return tiles >= v[5];
}

tess_status tess_heat3d_cpu_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out) {
    (void)op;
    tess_space *s = tess_space_create();
    if (!s) return tess_error(TESS_ERR_NOMEM, "heat3d space");
    double tz[8], ty[10], threads[16];
    int ntz = 0, nty = 0, nth = 0;
    for (long v = 1; v <= 64 && v <= t->shape[0]; v *= 2) tz[ntz++] = (double)v;
    for (long v = 1; v <= 256 && v <= t->shape[1]; v *= 2) ty[nty++] = (double)v;
    int cores = dev->units > 0 ? dev->units : 1;
    for (int v = 1; v < cores && nth < 15; v *= 2) threads[nth++] = v;
    threads[nth++] = cores;
    const double simd[] = {0, 1}, unroll[] = {1, 2, 4, 8};
    tess_status st = tess_space_add(s, "tile_z", ntz, tz, 0);
    if (!st) st = tess_space_add(s, "tile_y", nty, ty, nty - 1);
    if (!st) st = tess_space_add_labels(s, "order", 2, loop_orders, 0);
    if (!st) st = tess_space_add(s, "simd", 2, simd, 0);
    if (!st) st = tess_space_add(s, "unroll", 4, unroll, 0);
    if (!st) st = tess_space_add(s, "threads", nth, threads, nth - 1);
    /* The task outlives the space: both belong to the evaluator. */
    if (!st) st = tess_space_add_constraint(s, enough_tiles, (void *)t, "tiles >= threads");
    if (st) {
        tess_space_destroy(s);
        return st;
    }
    *out = s;
    return TESS_OK;
}

tess_status tess_heat3d_cpu_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                                 const tess_config *c, tess_kernel_source *out) {
    (void)op;
    (void)dev;
    heat3d_cpu_params p = {
        .tile_z = (int)tess_config_get(s, c, "tile_z"),
        .tile_y = (int)tess_config_get(s, c, "tile_y"),
        .order = (int)tess_config_get(s, c, "order"),
        .simd = (int)tess_config_get(s, c, "simd"),
        .unroll = (int)tess_config_get(s, c, "unroll"),
        .threads = (int)tess_config_get(s, c, "threads"),
    };
    char config[512];
    tess_status st = tess_config_format(s, c, config, sizeof config);
    if (st) return st;
    const char *real = t->dtype == TESS_F64 ? "double" : "float";
    tess_strbuf b = {0};
    tess_strbuf_printf(&b,
        "/* heat3d: 7-point heat stencil, one time step, %s, %lldx%lldx%lld (z, y, x).\n"
        " * config: %s\n"
        " * out = in + ALPHA * (6 neighbours - 6 in) inside; out = in on the boundary. */\n"
        "#include <stdbool.h>\n#include <stddef.h>\n\n"
        "#define NZ %lld\n#define NY %lld\n#define NX %lld\n"
        "#define TILE_Z %d\n#define TILE_Y %d\n#define THREADS %d\n"
        "#define ALPHA ((real)%.17g)\n"
        "typedef %s real;\n\n",
        tess_dtype_name(t->dtype), (long long)t->shape[0], (long long)t->shape[1],
        (long long)t->shape[2], config, (long long)t->shape[0], (long long)t->shape[1],
        (long long)t->shape[2], p.tile_z, p.tile_y, p.threads, TESS_HEAT3D_ALPHA, real);
    const char *simd_pragma = p.simd ? "    #pragma omp simd\n" : "";
    tess_strbuf_printf(&b,
        "/* One row of the output: x runs over the whole row. */\n"
        "static inline void heat_row(const real *restrict in, real *restrict out, size_t z, size_t y) {\n"
        "    const size_t plane = (size_t)NY * NX;\n"
        "    const real *restrict c = in + (z * NY + y) * NX;\n"
        "    real *restrict o = out + (z * NY + y) * NX;\n"
        "    if (z == 0 || y == 0 || z == NZ - 1 || y == NY - 1) {\n"
        "        for (size_t x = 0; x < NX; x++) o[x] = c[x];   /* boundary row: copy */\n"
        "        return;\n"
        "    }\n"
        "    const real *restrict n = c - NX, *restrict s = c + NX;\n"
        "    const real *restrict u = c - plane, *restrict d = c + plane;\n"
        "    o[0] = c[0];\n"
        "%s"
        "    for (size_t x = 1; x < NX - 1; x++)\n"
        "        o[x] = c[x] + ALPHA * (c[x - 1] + c[x + 1] + n[x] + s[x] + u[x] + d[x] - 6 * c[x]);\n"
        "    o[NX - 1] = c[NX - 1];\n"
        "}\n\n",
        simd_pragma);
    if (p.unroll > 1) {
        /* UNROLL interior rows in one sweep over x: each loaded row serves as
         * the centre of one output row and the north/south of its neighbours. */
        tess_strbuf_printf(&b,
            "/* Rows y .. y+%d (all interior) in one sweep over x: row k's input serves\n"
            " * as the centre of output row k and as north/south of rows k-1 and k+1. */\n"
            "static inline void heat_rows(const real *restrict in, real *restrict out, size_t z, size_t y) {\n"
            "    const size_t plane = (size_t)NY * NX;\n"
            "    const real *restrict row_n = in + (z * NY + y - 1) * NX;   /* the row above */\n",
            p.unroll - 1);
        for (int r = 0; r <= p.unroll; r++)
            tess_strbuf_printf(&b, "    const real *restrict row%d = row_n + %d * NX;\n", r, r + 1);
        for (int r = 0; r < p.unroll; r++)
            tess_strbuf_printf(&b, "    real *restrict out%d = out + (z * NY + y + %d) * NX;\n", r, r);
        for (int r = 0; r < p.unroll; r++)
            tess_strbuf_printf(&b, "    out%d[0] = row%d[0];\n    out%d[NX - 1] = row%d[NX - 1];\n", r, r, r, r);
        tess_strbuf_puts(&b, simd_pragma);
        tess_strbuf_puts(&b, "    for (size_t x = 1; x < NX - 1; x++) {\n");
        for (int r = 0; r < p.unroll; r++) {
            char north[16];
            snprintf(north, sizeof north, r == 0 ? "row_n" : "row%d", r - 1);
            tess_strbuf_printf(&b,
                "        out%d[x] = row%d[x] + ALPHA * (row%d[x - 1] + row%d[x + 1] + %s[x] + row%d[x]\n"
                "                                  + row%d[x - plane] + row%d[x + plane] - 6 * row%d[x]);\n",
                r, r, r, r, north, r + 1, r, r, r);
        }
        tess_strbuf_puts(&b, "    }\n");
        tess_strbuf_puts(&b, "}\n\n");
    }
    const char *outer = p.order == 0 ? "tz" : "ty", *inner = p.order == 0 ? "ty" : "tz";
    const char *outer_n = p.order == 0 ? "NZ" : "NY", *inner_n = p.order == 0 ? "NY" : "NZ";
    const char *outer_step = p.order == 0 ? "TILE_Z" : "TILE_Y", *inner_step = p.order == 0 ? "TILE_Y" : "TILE_Z";
    tess_strbuf_printf(&b,
        "/* Tiles of TILE_Z planes x TILE_Y rows, shared among the threads (%s order). */\n"
        "void tess_heat3d(void *const *buffers) {\n"
        "    const real *restrict in = buffers[0];\n"
        "    real *restrict out = buffers[1];\n"
        "    #pragma omp parallel for collapse(2) schedule(static) num_threads(THREADS)\n"
        "    for (size_t %s = 0; %s < %s; %s += %s)\n"
        "        for (size_t %s = 0; %s < %s; %s += %s) {\n"
        "            size_t z_end = tz + TILE_Z < NZ ? tz + TILE_Z : NZ;\n"
        "            size_t y_end = ty + TILE_Y < NY ? ty + TILE_Y : NY;\n"
        "            for (size_t z = tz; z < z_end; z++)\n",
        loop_orders[p.order], outer, outer, outer_n, outer, outer_step, inner, inner, inner_n, inner,
        inner_step);
    if (p.unroll > 1)
        tess_strbuf_printf(&b,
            "                for (size_t y = ty; y < y_end;) {\n"
            "                    bool inside = z > 0 && z < NZ - 1 && y > 0 && y + %d <= NY - 1;\n"
            "                    if (inside && y + %d <= y_end) {\n"
            "                        heat_rows(in, out, z, y);\n"
            "                        y += %d;\n"
            "                    } else {\n"
            "                        heat_row(in, out, z, y++);\n"
            "                    }\n"
            "                }\n",
            p.unroll, p.unroll, p.unroll);
    else
        tess_strbuf_puts(&b, "                for (size_t y = ty; y < y_end; y++) heat_row(in, out, z, y);\n");
    tess_strbuf_puts(&b, "        }\n}\n");
    memset(out, 0, sizeof *out);
    st = tess_strbuf_finish(&b, &out->code);
    if (st) return st;
    out->nlaunches = 1;
    strcpy(out->launch[0].entry, "tess_heat3d");
    return TESS_OK;
}
