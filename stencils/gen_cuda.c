/* gen_cuda.c - CUDA code generation for stencil specs: the space of
 * configs, the generated file's macros and entry points. The sweep itself is
 * emitted by gen_cuda_sweep.c (one step) or gen_cuda_tb.c (temporal
 * blocking). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "gen_cuda.h"
#include "gen_cuda_internal.h"
#include "gen_util.h"
#include "spec_print.h"

/* Parameter positions in the space, by rank (constraints read values by position). */
enum { P3_BX, P3_BY, P3_BZ, P3_PX, P3_PY, P3_VEC, P3_STREAM, P3_CHUNK, P3_STAGING, P3_UNROLL, P3_MINB, P3_TB };
enum { P2_BX, P2_BY, P2_PX, P2_PY, P2_VEC, P2_STAGING, P2_MINB };

static const char *const staging_labels[] = {"ldg", "shared", "async"};

#define MAX_READS 64

/* Adds the field reads of e not yet in seen (field, then offsets). */
static void collect_reads(const tess_expr *e, int seen[MAX_READS][1 + TESS_SPEC_MAX_RANK], int *n) {
    for (int i = 0; i < e->nargs; i++) collect_reads(e->arg[i], seen, n);
    if (e->kind != TESS_EXPR_REF || e->ref != TESS_REF_FIELD || *n == MAX_READS) return;
    int key[1 + TESS_SPEC_MAX_RANK] = {e->index};
    memcpy(key + 1, e->off, sizeof e->off);
    for (int i = 0; i < *n; i++)
        if (memcmp(seen[i], key, sizeof key) == 0) return;
    memcpy(seen[(*n)++], key, sizeof key);
}

void tess_stencil_cuda_limits_init(const tess_spec *s, tess_dtype real, tess_stencil_cuda_limits *lim) {
    tess_cuda_use use[TESS_SPEC_MAX_FIELDS];
    tess_cuda_uses(s, use);
    memset(lim, 0, sizeof *lim);
    lim->rank = s->rank;
    for (int f = 0; f < s->nfields; f++)
        if (use[f].plane && s->field[f].rank == s->rank)
            lim->staged_bytes += (int)tess_dtype_size(tess_spec_field_dtype(s, f, real));
    lim->halo_y = s->lo[s->rank - 2] + s->hi[s->rank - 2];
    lim->halo_x = s->lo[s->rank - 1] + s->hi[s->rank - 1];
    lim->lo_x = s->lo[s->rank - 1];
    lim->hi_x = s->hi[s->rank - 1];
    lim->steps = s->steps;
    for (int f = 0; f < s->nfields; f++) {
        int size = (int)tess_dtype_size(tess_spec_field_dtype(s, f, real));
        if (size > lim->max_field_bytes) lim->max_field_bytes = size;
    }
    for (int f = 0; f < s->nfields; f++) {
        int g = s->field[f].advances;
        if (g < 0) continue;
        int size = (int)tess_dtype_size(tess_spec_field_dtype(s, g, real));
        if (s->rank != 3) continue;
        int planes[2 * TESS_CUDA_MAX_DZ + 1];
        int n = tess_cuda_tb_planes(s, g, planes);
        lim->tb_tile_bytes += n * size;
        lim->tb_fields += n > 0;
        lim->tb_queue += tess_cuda_tb_queue_len(s);
    }
    for (int f = 0; f < s->nfields; f++) {
        if (!tess_cuda_in_ring(s, use, f)) continue;
        lim->ring_bytes += (int)tess_dtype_size(tess_spec_field_dtype(s, f, real));
        lim->ring_fields++;
    }
    tess_cuda_ring_reach(s, use, &lim->ring_lo, &lim->ring_hi);
    for (int f = 0; f < s->nfields; f++) {
        if (s->rank != 3 || s->field[f].rank != 2 || !(use[f].centre || use[f].plane)) continue;
        lim->coef_bytes += (int)tess_dtype_size(tess_spec_field_dtype(s, f, real));
        lim->coef_fields++;
    }
    int seen[MAX_READS][1 + TESS_SPEC_MAX_RANK];
    for (int i = 0; i < s->ninst; i++) collect_reads(s->inst[i].expr, seen, &lim->reads);
}

/* ---- the space ------------------------------------------------------------------ */

/* A block of 32..1024 threads, of which min_blocks fit an SM of 2048 threads
 * (sm_80, sm_90; min_blocks=8 asks blocks of 256 for 32 registers). On an SM
 * of fewer threads a larger min_blocks only lowers the register cap. */
static bool legal_threads(double threads, double min_blocks) {
    return threads >= 32 && threads <= 1024 && threads * min_blocks <= 2048;
}

static double round_up_d(double v, double m) { return ((int)v + (int)m - 1) / (int)m * m; }

/* Points of a block's shared tile: the block's points and the halo (whole
 * vectors along x). */
static double tile_points(const tess_stencil_cuda_limits *lim, double bx, double by, double px, double py, double vec) {
    return (by * py + lim->halo_y) * (bx * px * vec + round_up_d(lim->lo_x, vec) + round_up_d(lim->hi_x, vec));
}

/* The staged tiles, two buffers when streaming. */
static bool fits_shared(const tess_stencil_cuda_limits *lim, double bx, double by, double px, double py, double vec,
                        int buffers) {
    return tile_points(lim, bx, by, px, py, vec) * lim->staged_bytes * buffers <= TESS_STENCIL_CUDA_SMEM_MAX;
}

/* Temporal blocking: the bytes of a block's shared tiles (bx * px columns,
 * ty rows, with a halo, whole vectors of px along x; per parity of the
 * iteration, one per level but the last). */
static double time_block_smem(const tess_stencil_cuda_limits *lim, int tb, double bx, double px, double ty) {
    double tile = (ty + lim->halo_y) * (round_up_d(lim->lo_x, px) + bx * px + round_up_d(lim->hi_x, px));
    return tile * 2 * tb * lim->tb_tile_bytes + 16 * lim->tb_fields;   /* each field's tiles 16-byte aligned */
}

/* The block's tile keeps inner points after TB halos, its shared tiles fit
 * `smem`, and so do the register queues (one per fused step but the last and
 * point of a thread). */
static bool fits_time_blocks(const tess_stencil_cuda_limits *lim, double smem, int tb, double bx, double px,
                             double ty, double py) {
    double tx = bx * px;
    if (tx <= tb * lim->halo_x || ty <= tb * lim->halo_y) return false;
    return time_block_smem(lim, tb, bx, px, ty) <= smem && tb * px * py * lim->tb_queue <= TESS_STENCIL_CUDA_TB_QUEUE_MAX;
}

/* The constraints' copy of the limits, with what depends on the device. */
typedef struct cuda_rules {
    tess_stencil_cuda_limits lim;
    double block_smem;   /* dynamic shared memory a block may have (async rings, time blocks) */
    int prefetch_at;    /* the position of prefetch; -1 without staging=async */
    int coefs_at;       /* the position of coefs; -1 without 2D fields in a 3D grid */
} cuda_rules;

/* staging=async: the ring of tiles, its planes read and those in flight. */
static bool fits_ring(const cuda_rules *rules, double bx, double by, double px, double py, double vec,
                      double prefetch) {
    const tess_stencil_cuda_limits *lim = &rules->lim;
    double w = bx * px * vec + round_up_d(lim->lo_x, vec) + round_up_d(lim->hi_x, vec);
    double slots = lim->ring_lo + lim->ring_hi + prefetch + 1;
    return (by * py + lim->halo_y) * w * slots * lim->ring_bytes + 16 * lim->ring_fields <= rules->block_smem;
}

/* Every offset of the update within one point of the centre along each axis. */
static bool reaches_one(const tess_spec *s) {
    for (int a = 0; a < s->rank; a++)
        if (s->lo[a] > 1 || s->hi[a] > 1) return false;
    return true;
}

/* The update reads no field but those the outputs advance. */
static bool reads_only_state(const tess_spec *s) {
    for (int f = 0; f < s->nfields; f++)
        if (s->field[f].role != TESS_FIELD_OUT && tess_gen_advancer(s, f) < 0) return false;
    return true;
}

/* Chunk lengths along z: the powers of two from 4 to zmax, and the lengths
 * that split nz planes into k equal chunks (k <= 16), which change how
 * the count of blocks fills the device's waves (heat3d4 at 512^3 on the
 * H200: 57, 64, 74 and 86 planes within 1.5% of each other, 128 and 103
 * 2-4% slower). Sorted. */
static int chunk_values(long zmax, long nz, double *values) {
    int n = 0;
    for (long v = 4; v <= zmax; v *= 2) values[n++] = (double)v;
    for (long k = 1; k <= 16; k++) {
        long v = (nz + k - 1) / k;
        bool listed = false;
        for (int i = 0; i < n; i++) listed |= values[i] == (double)v;
        if (v >= 4 && v <= zmax && !listed) values[n++] = (double)v;
    }
    for (int i = 1; i < n; i++)   /* insertion sort: a few dozen values */
        for (int j = i; j > 0 && values[j - 1] > values[j]; j--) {
            double t = values[j];
            values[j] = values[j - 1];
            values[j - 1] = t;
        }
    return n;
}

static int index_of(const double *values, int n, double v) {
    for (int i = 0; i < n; i++)
        if (values[i] == v) return i;
    return 0;
}

static bool legal3(const double *v, void *user) {
    const cuda_rules *rules = user;
    const tess_stencil_cuda_limits *lim = &rules->lim;
    if (!legal_threads(v[P3_BX] * v[P3_BY] * v[P3_BZ], v[P3_MINB])) return false;
    int tb = lim->steps > 1 ? (int)v[P3_TB] : 1;
    if (lim->steps % tb != 0 || lim->steps / tb > TESS_MAX_LAUNCHES) return false;
    double prefetch = rules->prefetch_at >= 0 ? v[rules->prefetch_at] : 1;
    bool async = v[P3_STAGING] == 2;
    if (!async && prefetch != 1) return false;
    /* coefs=shared: streaming, one launch a step, its tiles (static shared
     * memory) beside the staged ones or the ring */
    if (rules->coefs_at >= 0 && v[rules->coefs_at] == 1) {
        double tile = tile_points(lim, v[P3_BX], v[P3_BY], v[P3_PX], v[P3_PY], v[P3_VEC]);
        double coefs = tile * lim->coef_bytes + 16 * lim->coef_fields;
        double staged = v[P3_STAGING] == 1 ? 2 * tile * lim->staged_bytes : 0;
        if (v[P3_STREAM] != 1 || tb > 1 || coefs + staged > TESS_STENCIL_CUDA_SMEM_MAX) return false;
        if (async && coefs + tile * (lim->ring_lo + lim->ring_hi + prefetch + 1) * lim->ring_bytes +
                         16 * lim->ring_fields > rules->block_smem)
            return false;
    }
    if (tb > 1)   /* streams through shared tiles of its own: the other settings take fixed values */
        return v[P3_STREAM] == 1 && v[P3_BZ] == 1 && v[P3_STAGING] == 1 && v[P3_UNROLL] <= 2 && v[P3_VEC] == 1 &&
               fits_time_blocks(lim, rules->block_smem, tb, v[P3_BX], v[P3_PX], v[P3_BY] * v[P3_PY], v[P3_PY]);
    if (v[P3_STREAM] == 0)   /* settings of streaming take their first value */
        return v[P3_CHUNK] == 4 && v[P3_STAGING] == 0 && v[P3_UNROLL] == 1;
    if (v[P3_BZ] != 1 || v[P3_UNROLL] > v[P3_CHUNK]) return false;
    if (v[P3_UNROLL] > 4 && v[P3_PX] * v[P3_PY] * v[P3_VEC] * v[P3_UNROLL] > TESS_STENCIL_CUDA_TURN_MAX) return false;
    if (async) return fits_ring(rules, v[P3_BX], v[P3_BY], v[P3_PX], v[P3_PY], v[P3_VEC], prefetch);
    return v[P3_STAGING] == 0 ||
           (lim->staged_bytes > 0 && fits_shared(lim, v[P3_BX], v[P3_BY], v[P3_PX], v[P3_PY], v[P3_VEC], 2));
}

static bool legal2(const double *v, void *user) {
    const tess_stencil_cuda_limits *lim = &((const cuda_rules *)user)->lim;
    if (!legal_threads(v[P2_BX] * v[P2_BY], v[P2_MINB])) return false;
    return v[P2_STAGING] == 0 ||
           (lim->staged_bytes > 0 && fits_shared(lim, v[P2_BX], v[P2_BY], v[P2_PX], v[P2_PY], v[P2_VEC], 1));
}

tess_status tess_stencil_cuda_space(const tess_spec *s, const tess_task *t, const tess_device *dev,
                                    const tess_stencil_cuda_limits *lim, tess_space **out) {
    *out = NULL;
    tess_status st = tess_gen_check_task(s, t);
    if (st) return st;
    /* More steps than launches need temporal blocking (3D only), which the
     * default config then uses: the fewest steps per launch that fit. */
    bool blocked = s->steps > TESS_MAX_LAUNCHES;
    int tb_default = 0;
    for (int tb = 1; tb <= 8 && !tb_default; tb *= 2)
        if (s->steps % tb == 0 && s->steps / tb <= TESS_MAX_LAUNCHES) tb_default = tb;
    if (blocked && (s->rank != 3 || !tb_default))
        return tess_error(TESS_ERR_ARG, "stencil '%s': cuda runs at most %d launches of up to 8 fused steps (3D "
                          "only); %d steps do not fit", s->name, TESS_MAX_LAUNCHES, s->steps);
    /* Vectors along x: as wide as 16 bytes and the x extent allow. */
    double vec[3];
    int nvec = 0;
    for (int w = 1; w * lim->max_field_bytes <= TESS_STENCIL_CUDA_VEC_BYTES; w *= 2)
        if (t->shape[s->rank - 1] % w == 0) vec[nvec++] = w;
    /* Defaults: streaming (3D), the widest vectors; a reach of 2 or more in
     * the plane (lo + hi >= 4) stages it in shared memory; chunks are long
     * enough to amortize the planes a queue reloads at each chunk's ends. */
    int reach = lim->halo_x > lim->halo_y ? lim->halo_x : lim->halo_y;
    bool wide = reach >= 4 && lim->staged_bytes > 0;
    long zmax = 4, zreach = s->rank == 3 ? s->lo[0] + s->hi[0] : 0;
    while (s->rank == 3 && zmax < t->shape[0] && zmax < 512) zmax *= 2;
    long chunk = 8;
    while (chunk < 8 * zreach && chunk < zmax) chunk *= 2;
    if (blocked && chunk < 32) chunk = zmax < 32 ? zmax : 32;
    if (chunk > zmax) chunk = zmax;
    /* A ring of tiles filled by asynchronous copies needs sm_80 (cp.async).
     * Stencils reading 20 neighbours or more, along z too (box3d27, star3d25),
     * default to it: block 32x4, 4 rows per thread, the most planes in
     * flight (up to 3) that fit; on the H200 such configs came within 1.08x
     * of their best (tuned: 72% and 82% of the copy bandwidth) where the
     * other defaults ran 1.35x and 1.5x slower. */
    bool async = s->rank == 3 && lim->ring_bytes > 0 && dev->cc_major >= 8 && dev->smem_per_block_optin > 0;
    double block_smem = dev->smem_per_block_optin > TESS_STENCIL_CUDA_SMEM_MAX ? (double)dev->smem_per_block_optin
                                                                                : TESS_STENCIL_CUDA_SMEM_MAX;
    cuda_rules rules = {.lim = *lim, .block_smem = block_smem, .prefetch_at = -1, .coefs_at = -1};
    /* Stencils of several steps that reach one point along every axis and
     * read only the fields they advance (heat3d in four steps) fuse up to 4
     * steps by default: block 32x16, 4 rows per thread, 2 blocks per SM (as
     * many steps as let two blocks' tiles share an SM), chunks of 64 planes;
     * on the H200 that config ran at 1.53x the copy bandwidth per step, where
     * one step per launch runs below 1x. */
    int fused = 0;
    if (s->rank == 3 && s->steps > 1 && reaches_one(s) && reads_only_state(s) && zmax >= 64)
        for (int tb = 4; tb >= 2 && !fused; tb /= 2)
            if (s->steps % tb == 0 && s->steps / tb <= TESS_MAX_LAUNCHES &&
                fits_time_blocks(lim, rules.block_smem, tb, 32, 1, 64, 4) &&
                (dev->smem_per_sm <= 0 ||   /* the driver keeps 1 KiB per block */
                 2 * (time_block_smem(lim, tb, 32, 1, 64) + 1024) <= dev->smem_per_sm))
                fused = tb;
    if (fused) {
        tb_default = fused;
        chunk = 64;
    }
    int async_prefetch = 0;   /* the default's prefetch; 0: the default stages otherwise */
    for (int pf = 3; async && !blocked && !fused && zreach >= 2 && lim->reads >= 20 && pf >= 1 && !async_prefetch; pf--)
        if (fits_ring(&rules, 32, 4, 1, 4, vec[nvec - 1], pf)) async_prefetch = pf;
    /* Stencils that read nothing along z (hdiff) gain nothing from the
     * queues of streaming: their default is a 3D block of 32x4x2 threads of 2
     * rows each, reading through the read-only cache (hdiff's best configs on
     * the H200 at 80x256x256, where the streaming default ran 1.28x slower). */
    /* Those that read 2D fields too (coefficients constant along z: the
     * weather app's metric terms) stream all the same, so that the 2D
     * fields' windows are loaded once per chunk, not per plane: blocks of
     * 32x4 threads of 2 rows each walk a quarter of the levels, reading
     * through the read-only cache, the 2D fields from tiles in shared memory
     * (coefs=shared) where they outnumber the 3D fields read, whose register
     * windows they would otherwise crowd out. */
    bool planes = s->rank == 3 && zreach == 0 && !blocked && !fused && lim->coef_fields > 0;
    bool flat = s->rank == 3 && zreach == 0 && !blocked && !fused && !planes;
    if (flat) chunk = 4;   /* without streaming, chunk keeps its first value */
    if (planes) chunk = (t->shape[0] + 3) / 4;
    int read3 = 0;
    if (planes) {
        tess_cuda_use use[TESS_SPEC_MAX_FIELDS];
        tess_cuda_uses(s, use);
        for (int f = 0; f < s->nfields; f++)
            read3 += s->field[f].rank == 3 && (use[f].centre || use[f].plane || use[f].offcol);
    }
    tess_space *sp = tess_space_create();
    if (!sp) return tess_error(TESS_ERR_NOMEM, "out of memory creating a space");
    static const double bx[] = {32, 64, 128, 256}, by[] = {1, 2, 4, 8, 16}, bz[] = {1, 2, 4, 8};
    static const double ppt[] = {1, 2, 4}, minb[] = {1, 2, 4, 8};
    /* Planes per turn of the streaming loop; a whole turn of the register
     * queue (its planes and the one loaded ahead) renames the queue's
     * registers instead of moving them: offered when longer than 4. */
    double unroll[4] = {1, 2, 4, 0};
    int nunroll = 3, ring = s->rank == 3 ? (int)zreach + 2 : 0;
    if (ring > 4) unroll[nunroll++] = ring;
    st = tess_space_add(sp, "block_x", 4, bx, 0);
    if (!st) st = tess_space_add(sp, "block_y", 5, by, fused ? 4 : async_prefetch || flat || planes ? 2 : 3);
    if (!st && s->rank == 3) st = tess_space_add(sp, "block_z", 4, bz, flat);
    if (!st) st = tess_space_add(sp, "ppt_x", 3, ppt, 0);
    if (!st) st = tess_space_add(sp, "ppt_y", 3, ppt, async_prefetch || fused ? 2 : flat || planes || blocked);
    if (!st) st = tess_space_add(sp, "vec", nvec, vec, blocked || fused ? 0 : nvec - 1);
    if (!st && s->rank == 3) {
        st = tess_space_add(sp, "stream", 2, (const double[]){0, 1}, !flat);
        double chunks[32];
        int nchunks = chunk_values(zmax, t->shape[0], chunks);
        if (!st) st = tess_space_add(sp, "chunk", nchunks, chunks, index_of(chunks, nchunks, (double)chunk));
    }
    if (!st)
        st = tess_space_add_labels(sp, "staging", async ? 3 : 2, staging_labels,
                                   async_prefetch ? 2 : !flat && !planes && (blocked || wide || fused));
    if (!st && s->rank == 3) st = tess_space_add(sp, "unroll", nunroll, unroll, 0);
    if (!st) st = tess_space_add(sp, "min_blocks", 4, minb, fused ? 1 : 0);
    if (!st && s->rank == 3 && s->steps > 1)
        st = tess_space_add(sp, "time_block", 4, (const double[]){1, 2, 4, 8}, tb_default == 8 ? 3 : tb_default / 2);
    if (!st && async) {
        rules.prefetch_at = tess_space_nparams(sp);
        st = tess_space_add(sp, "prefetch", 4, (const double[]){1, 2, 3, 4}, async_prefetch ? async_prefetch - 1 : 0);
        if (!st) st = tess_space_set_optional(sp, "prefetch", 1);   /* configs recorded before it stay readable */
    }
    static const char *const coefs_labels[] = {"regs", "shared"};
    if (!st && s->rank == 3 && lim->coef_fields > 0) {
        rules.coefs_at = tess_space_nparams(sp);
        st = tess_space_add_labels(sp, "coefs", 2, coefs_labels, planes && lim->coef_fields >= read3);
        if (!st) st = tess_space_set_optional(sp, "coefs", 0);   /* configs recorded before it stay readable */
    }
    static const char rules3[] =
        "32 <= threads <= 1024, threads x min_blocks <= 2048; stream=0 keeps chunk=4, staging=ldg, unroll=1; "
        "stream=1 needs block_z=1, unroll <= chunk, and unroll > 4 at most 40 points x planes per turn; staged "
        "tiles (two buffers) fit 48 KiB; time_block divides steps into at most 4 launches and needs stream=1, "
        "staging=shared, unroll <= 2, vec=1, a tile wider and taller than time_block halos, its tiles "
        "(two per level but the last) fitting the device's shared memory per block and its register queues 128 "
        "values; staging=async needs stream=1 and its ring (the "
        "planes a step reads and prefetch more) fitting the device's shared memory per block; prefetch > 1 only "
        "with staging=async; coefs=shared needs stream=1, one step a launch and its tiles fitting 48 KiB with the staged "
        "ones (and the device's shared memory per block with a ring)";
    static const char rules2[] = "32 <= threads <= 1024, threads x min_blocks <= 2048; staged tiles fit 48 KiB";
    if (!st)
        st = tess_space_add_constraint_copy(sp, s->rank == 3 ? legal3 : legal2, &rules, sizeof rules,
                                            s->rank == 3 ? rules3 : rules2);
    tess_config dflt;
    tess_space_default(sp, &dflt);
    if (!st && !tess_space_valid(sp, &dflt))
        st = tess_error(TESS_ERR_ARG, "stencil '%s': no default cuda config (%s)", s->name,
                        tess_space_violation(sp, &dflt));
    if (st) {
        tess_space_destroy(sp);
        return st;
    }
    *out = sp;
    return TESS_OK;
}

/* ---- expressions ----------------------------------------------------------------- */

void tess_cuda_print_number(tess_strbuf *b, double v, void *user) {
    tess_gen_number(b, v, ((const tess_cuda_plan *)user)->t->dtype);
}

/* ---- the generated file ---------------------------------------------------------- */

void tess_cuda_emit_params(tess_strbuf *b, const tess_cuda_plan *p, bool with_scratch) {
    const tess_spec *s = p->s;
    tess_dtype real = p->t->dtype;
    for (int f = 0; f < s->nfields; f++)
        tess_strbuf_printf(b, "%s%s%s *__restrict__ %s", f ? ", " : "", s->field[f].role == TESS_FIELD_OUT ? "" : "const ",
                         tess_gen_ctype(s, f, real), s->field[f].name);
    if (!with_scratch || s->steps == 1) return;
    for (int f = 0; f < s->nfields; f++)
        if (s->field[f].role == TESS_FIELD_OUT)
            tess_strbuf_printf(b, ", %s *__restrict__ %s__tmp", tess_gen_ctype(s, f, real), s->field[f].name);
}

/* Vector loads and stores of VEC values of one type, aligned to VEC. */
static void emit_vector_helpers(tess_strbuf *b, const char *type, int vec) {
    static const char lane[] = "xyzw";
    char vtype[16], get[96] = "", make[96] = "";
    snprintf(vtype, sizeof vtype, vec == 1 ? "%s" : "%s%d", type, vec);
    for (int v = 0; v < vec; v++) {
        size_t n = strlen(get), m = strlen(make);
        if (vec == 1) snprintf(get, sizeof get, " d[0] = t;");
        else snprintf(get + n, sizeof get - n, " d[%d] = t.%c;", v, lane[v]);
        snprintf(make + m, sizeof make - m, "%sd[%d]", v ? ", " : "", v);
    }
    char put[160];   /* holds the longest vtype and make, as the compiler bounds them */
    if (vec == 1) snprintf(put, sizeof put, "*p = d[0];");
    else snprintf(put, sizeof put, "*(%s *)p = make_%s(%s);", vtype, vtype, make);
    tess_strbuf_printf(b,
                       "static __device__ __forceinline__ void tess_ldg(%s *d, const %s *p) { const %s t = __ldg((const %s *)p);%s }\n"
                       "static __device__ __forceinline__ void tess_lds(%s *d, const %s *p) { const %s t = *(const %s *)p;%s }\n"
                       "static __device__ __forceinline__ void tess_sts(%s *p, const %s *d) { %s }\n"
                       "static __device__ __forceinline__ void tess_st(%s *p, const %s *d) { %s }\n",
                       type, type, vtype, vtype, get, type, type, vtype, vtype, get, type, type, put, type, type, put);
}

static int round_up(int v, int m) { return (v + m - 1) / m * m; }

long tess_cuda_ring_field_bytes(const tess_cuda_plan *p, int f) {
    const tess_spec *s = p->s;
    long tile_h = (long)p->by * p->py + s->lo[s->rank - 2] + s->hi[s->rank - 2];
    long tile_w = p->padx + (long)p->bx * p->px * p->vec + p->padr;
    long slots = p->ring_lo + p->ring_hi + p->prefetch + 1;
    long bytes = slots * tile_h * tile_w * (long)tess_dtype_size(tess_spec_field_dtype(s, f, p->t->dtype));
    return (bytes + 15) / 16 * 16;
}

/* Asynchronous copies (sm_80 and later) of 4, 8 or 16 bytes, aligned to
 * their size, from global into shared memory, in groups. */
static void emit_async_helpers(tess_strbuf *b) {
    tess_strbuf_puts(b, "/* Asynchronous copies into shared memory, in groups: commit closes a group, a\n"
                        " * wait leaves at most n of the last groups in flight. */\n");
    for (int bytes = 4; bytes <= 16; bytes *= 2)
        tess_strbuf_printf(b, "static __device__ __forceinline__ void tess_cp%d(void *s, const void *g) {\n"
                              "    asm volatile(\"cp.async.%s.shared.global [%%0], [%%1], %d;\\n\" ::\n"
                              "                 \"r\"((unsigned)__cvta_generic_to_shared(s)), \"l\"(g));\n}\n",
                           bytes, bytes == 16 ? "cg" : "ca", bytes);
    tess_strbuf_puts(b, "static __device__ __forceinline__ void tess_cp_commit(void) { asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\"); }\n"
                        "#define tess_cp_wait(n) asm volatile(\"cp.async.wait_group %0;\\n\" ::\"n\"(n) : \"memory\")\n\n");
}

static void emit_macros(tess_strbuf *b, const tess_cuda_plan *p) {
    const tess_spec *s = p->s;
    int r = s->rank;
    int64_t total = tess_shape_elements(p->t->shape, r);
    tess_strbuf_printf(b, "/* Tuning. */\n#define BX %d\n#define BY %d\n", p->bx, p->by);
    if (r == 3) tess_strbuf_printf(b, "#define BZ %d\n", p->bz);
    tess_strbuf_printf(b, "#define PX %d\n#define PY %d\n#define VEC %d\n", p->px, p->py, p->vec);
    if (p->stream) tess_strbuf_printf(b, "#define CHUNK %d\n", p->chunk);
    tess_strbuf_printf(b, "#define MIN_BLOCKS %d\n", p->min_blocks);
    if (p->time_block == 1)
        tess_strbuf_printf(b, "/* Register windows around a vector: the rows and columns its points read\n"
                              " * (LO_X, HI_X rounded up to whole vectors). */\n"
                              "#define PADX %d\n#define PADR %d\n#define WIN_H (PY + LO_Y + HI_Y)\n"
                              "#define WIN_W (PADX + VEC + PADR)\n", p->padx, p->padr);
    bool coef_tiles = false;
    for (int f = 0; f < s->nfields; f++) coef_tiles |= p->coef_tile[f];
    if (p->shared || coef_tiles)
        tess_strbuf_puts(b, "/* Shared tiles: the block's TY x TXV points and their halo. */\n"
                            "#define TY (BY * PY)\n#define TXV (BX * PX * VEC)\n"
                            "#define TILE_H (TY + LO_Y + HI_Y)\n#define TILE_W (PADX + TXV + PADR)\n"
                            "#define HALO (TILE_H * TILE_W - TY * TXV)\n"
                            "#define HALO_PER_THREAD ((HALO + BX * BY - 1) / (BX * BY))\n");
    if (p->async)
        tess_strbuf_printf(b, "/* The ring of tiles: planes z - RING_LO .. z + RING_HI, which step z reads, and\n"
                              " * PREFETCH planes in flight; plane z + AHEAD is fetched during step z. */\n"
                              "#define RING_LO %d\n#define RING_HI %d\n#define PREFETCH %d\n"
                              "#define RING (RING_LO + RING_HI + PREFETCH + 1)\n#define AHEAD (RING_HI + PREFETCH)\n"
                              "#define RING_SLOT(k) (s0__ + (k) < RING ? s0__ + (k) : s0__ + (k) - RING)\n"
                              "#define COPIES (TILE_H * (TILE_W / VEC))   /* vectors per tile */\n"
                              "#define COPIES_PER_THREAD ((COPIES + BX * BY - 1) / (BX * BY))\n",
                           p->ring_lo, p->ring_hi, p->prefetch);
    tess_strbuf_printf(b, "\ntypedef %s idx_t;\n", total < (1LL << 31) ? "int" : "long long");
    if (r == 3)
        tess_strbuf_puts(b, "#define IDX(z, y, x) (((idx_t)(z) * NY + (y)) * NX + (x))\n"
                            "#define IDX2(y, x) ((idx_t)(y) * NX + (x))   /* 2D fields */\n"
                            "#define AT(z, o) ((idx_t)(z) * (NY * NX) + (o))   /* plane z, in-plane offset o */\n");
    else
        tess_strbuf_puts(b, "#define IDX(y, x) ((idx_t)(y) * NX + (x))\n");
    tess_strbuf_puts(b, "/* SAFE_*: an index that may be anywhere, made loadable (wrapped if periodic,\n"
                        " * clamped if fixed); SAFEV_X: the same for the first point of a vector. */\n");
    for (int a = 0; a < r; a++) {
        char A = (char)(tess_spec_axis_name(r, a) - 'a' + 'A');
        if (tess_spec_periodic(s, a)) tess_strbuf_printf(b, "#define SAFE_%c(i) ((((i) %% N%c) + N%c) %% N%c)\n", A, A, A, A);
        else tess_strbuf_printf(b, "#define SAFE_%c(i) min(max((i), 0), N%c - 1)\n", A, A);
    }
    if (tess_spec_periodic(s, r - 1)) tess_strbuf_puts(b, "#define SAFEV_X(i) SAFE_X(i)\n");
    else tess_strbuf_puts(b, "#define SAFEV_X(i) min(max((i), 0), NX - VEC)\n");
    tess_strbuf_puts(b, "/* Points on a fixed boundary band copy their input. */\n#define ON_BAND(");
    tess_strbuf_puts(b, r == 3 ? "z, y, x) (" : "y, x) (");
    int n = 0;
    for (int a = 0; a < r; a++) {
        if (tess_spec_periodic(s, a) || (s->lo[a] == 0 && s->hi[a] == 0)) continue;
        char v = tess_spec_axis_name(r, a), V = (char)(v - 'a' + 'A');
        tess_strbuf_printf(b, "%s(%c) < LO_%c || (%c) >= N%c - HI_%c", n++ ? " || " : "", v, V, v, V, V);
    }
    tess_strbuf_puts(b, n ? ")\n\n" : "0)\n\n");
    if (p->time_block > 1) return;
    bool types[2] = {false, false};
    for (int f = 0; f < s->nfields; f++) types[tess_spec_field_dtype(s, f, p->t->dtype) == TESS_F64] = true;
    tess_strbuf_puts(b, "/* VEC consecutive values at p: loads (read-only cache, shared), stores. */\n");
    if (types[0]) emit_vector_helpers(b, "float", p->vec);
    if (types[1]) emit_vector_helpers(b, "double", p->vec);
    tess_strbuf_puts(b, "\n");
    if (p->async) emit_async_helpers(b);
}

/* One __global__ entry per launch, each running time_block steps; launch k
 * reads what launch k-1 wrote, and launches alternate between each output
 * and its scratch buffer so that the last one writes the output. */
static void emit_entries(tess_strbuf *b, const tess_cuda_plan *p, tess_kernel_source *out) {
    const tess_spec *s = p->s;
    int n = s->steps / p->time_block;
    for (int k = 0; k < n; k++) {
        tess_launch *l = &out->launch[k];
        if (n == 1) snprintf(l->entry, sizeof l->entry, "%s_cuda", s->name);
        else snprintf(l->entry, sizeof l->entry, "%s_cuda_launch%d", s->name, k);
        tess_strbuf_printf(b, "extern \"C\" __global__ void __launch_bounds__(BX * BY%s, MIN_BLOCKS)\n%s(",
                           s->rank == 3 ? " * BZ" : "", l->entry);
        tess_cuda_emit_params(b, p, true);
        tess_strbuf_puts(b, ")\n{\n    tess_sweep(");
        for (int f = 0; f < s->nfields; f++) {
            int adv_by = tess_gen_advancer(s, f);
            const char *name = s->field[f].name;
            bool to_out = (n - 1 - k) % 2 == 0, prev_out = (n - k) % 2 == 0;
            if (f) tess_strbuf_puts(b, ", ");
            if (s->field[f].role == TESS_FIELD_OUT) tess_strbuf_printf(b, to_out ? "%s" : "%s__tmp", name);
            else if (adv_by >= 0 && k > 0) tess_strbuf_printf(b, prev_out ? "%s" : "%s__tmp", s->field[adv_by].name);
            else tess_strbuf_puts(b, name);
        }
        tess_strbuf_puts(b, ");\n}\n\n");
    }
    out->nlaunches = n;
}

static void geometry(const tess_cuda_plan *p, tess_launch *l) {
    const int64_t *n = p->t->shape;
    int r = p->s->rank;
    l->block[0] = (unsigned)p->bx;
    l->block[1] = (unsigned)p->by;
    l->block[2] = r == 3 && !p->stream ? (unsigned)p->bz : 1;
    int64_t tx = (int64_t)p->bx * p->px * p->vec, ty = (int64_t)p->by * p->py;
    if (p->time_block > 1) {   /* blocks overlap by their halos */
        const tess_spec *s = p->s;
        tx -= p->time_block * (s->lo[r - 1] + s->hi[r - 1]);
        ty -= p->time_block * (s->lo[r - 2] + s->hi[r - 2]);
    }
    l->grid[0] = (unsigned)((n[r - 1] + tx - 1) / tx);
    l->grid[1] = (unsigned)((n[r - 2] + ty - 1) / ty);
    l->grid[2] = r == 2 ? 1 : (unsigned)((n[0] + (p->stream ? p->chunk : p->bz) - 1) / (p->stream ? p->chunk : p->bz));
    l->shared_bytes = 0;
    for (int f = 0; f < p->s->nfields; f++)
        if (p->time_block > 1) l->shared_bytes += (unsigned)tess_cuda_tb_field_bytes(p, f);
        else if (p->async && p->staged[f]) l->shared_bytes += (unsigned)tess_cuda_ring_field_bytes(p, f);
}

tess_status tess_stencil_cuda_emit(const tess_spec *s, const tess_task *t, const tess_space *sp,
                                   const tess_config *c, tess_kernel_source *out) {
    memset(out, 0, sizeof *out);
    tess_status st = tess_gen_check_task(s, t);
    if (st) return st;
    /* Configs built through the API reach here unchecked; the space's
     * constraints are what the generator relies on. */
    const char *why = tess_space_violation(sp, c);
    if (why) return tess_error(TESS_ERR_ARG, "stencil '%s': the config violates %s", s->name, why);
    tess_cuda_plan p = {.s = s, .t = t};
    p.time_block = s->rank == 3 && s->steps > 1 ? tess_gen_param(sp, c, "time_block") : 1;
    p.bx = tess_gen_param(sp, c, "block_x");
    p.by = tess_gen_param(sp, c, "block_y");
    p.bz = s->rank == 3 ? tess_gen_param(sp, c, "block_z") : 1;
    p.px = tess_gen_param(sp, c, "ppt_x");
    p.py = tess_gen_param(sp, c, "ppt_y");
    p.vec = tess_gen_param(sp, c, "vec");
    p.stream = s->rank == 3 && tess_gen_param(sp, c, "stream") != 0;
    p.chunk = p.stream ? tess_gen_param(sp, c, "chunk") : 1;
    p.unroll = p.stream ? tess_gen_param(sp, c, "unroll") : 1;
    p.min_blocks = tess_gen_param(sp, c, "min_blocks");
    const char *staging = tess_gen_label(sp, c, "staging");
    p.async = strcmp(staging, "async") == 0 && p.stream;
    p.shared = (strcmp(staging, "shared") == 0 && (s->rank == 2 || p.stream)) || p.async;
    p.prefetch = p.async ? tess_gen_param(sp, c, "prefetch") : 1;
    bool coef_tiles = p.stream && tess_space_param_index(sp, "coefs") >= 0 && strcmp(tess_gen_label(sp, c, "coefs"), "shared") == 0;
    if (p.bx < 1 || p.by < 1 || p.bz < 1 || p.px < 1 || p.py < 1 || p.vec < 1 || p.chunk < 1 || p.unroll < 1 ||
        p.min_blocks < 1 || p.prefetch < 1)
        return tess_error(TESS_ERR_ARG, "stencil '%s': the config lacks a cuda tunable", s->name);
    p.padx = round_up(s->lo[s->rank - 1], p.vec);
    p.padr = round_up(s->hi[s->rank - 1], p.vec);
    tess_cuda_use use[TESS_SPEC_MAX_FIELDS];
    tess_cuda_uses(s, use);
    if (p.async) tess_cuda_ring_reach(s, use, &p.ring_lo, &p.ring_hi);
    bool any_staged = false;
    for (int f = 0; f < s->nfields; f++) {
        p.staged[f] = p.async ? tess_cuda_in_ring(s, use, f) : p.shared && use[f].plane && s->field[f].rank == s->rank;
        p.queue[f] = p.stream && use[f].centre && s->field[f].rank == 3;
        p.coef_tile[f] = coef_tiles && s->rank == 3 && s->field[f].rank == 2 && (use[f].centre || use[f].plane);
        p.qlo[f] = use[f].zlo;
        p.qhi[f] = use[f].zhi;
        any_staged |= p.staged[f];
    }
    p.shared = any_staged && p.time_block == 1;
    p.async &= p.shared;
    tess_cuda_plan_sources(&p);
    geometry(&p, &out->launch[0]);
    if (out->launch[0].grid[1] > 65535 || out->launch[0].grid[2] > 65535)
        return tess_error(TESS_ERR_ARG, "stencil '%s': the grid of blocks exceeds 65535 along y or z", s->name);
    char config[512] = "";
    tess_config_format(sp, c, config, sizeof config);

    tess_strbuf b = {0};
    tess_gen_header(&b, s, t, "cuda", config);
    tess_strbuf_puts(&b, "\n");
    tess_gen_prelude(&b, s, t, "static __device__ __forceinline__", true);
    emit_macros(&b, &p);
    if (p.time_block > 1) tess_cuda_emit_tb_sweep(&b, &p);
    else tess_cuda_emit_sweep(&b, &p);
    emit_entries(&b, &p, out);
    for (int i = 1; i < out->nlaunches; i++) {
        char entry[sizeof out->launch[i].entry];
        memcpy(entry, out->launch[i].entry, sizeof entry);
        out->launch[i] = out->launch[0];
        memcpy(out->launch[i].entry, entry, sizeof entry);
    }
    return tess_strbuf_finish(&b, &out->code);
}
