/*
 * split.c - slab decomposition along the slowest axis and the space of the
 * overlap parameters (split.h).
 */
#include "split.h"
#include "error.h"

tess_status tess_split_plan_make(int64_t planes, int ranks, int depth, const char *axis, tess_split_plan *out) {
    if (ranks < 1 || ranks > TESS_SPLIT_MAX_RANKS)
        return tess_error(TESS_ERR_ARG, "a split takes 1 to %d ranks, not %d", TESS_SPLIT_MAX_RANKS, ranks);
    if (ranks > planes)
        return tess_error(TESS_ERR_ARG, "cannot split %lld planes along %s into %d slabs: at most one slab per plane",
                          (long long)planes, axis, ranks);
    if (depth < 0) return tess_error(TESS_ERR_ARG, "halo depth %d is negative", depth);
    int64_t thin = planes / ranks;
    if (ranks > 1 && thin < depth)
        return tess_error(TESS_ERR_ARG,
                          "cannot split %lld planes along %s into %d slabs: the thinnest slab has %lld planes and the "
                          "halo needs %d (at most %lld slabs)", (long long)planes, axis, ranks, (long long)thin, depth,
                          depth > 0 ? (long long)(planes / depth) : (long long)planes);
    out->ranks = ranks;
    out->planes = planes;
    out->depth = depth;
    int64_t lo = 0;
    for (int r = 0; r < ranks; r++) {
        tess_slab *s = &out->slab[r];
        s->lo = lo;
        s->hi = lo + thin + (r < planes % ranks ? 1 : 0);
        s->mem_lo = r > 0 ? s->lo - depth : 0;
        s->mem_hi = r < ranks - 1 ? s->hi + depth : planes;
        lo = s->hi;
    }
    return TESS_OK;
}

void tess_split_window(const tess_split_plan *p, int reach, int64_t lo, int64_t hi, int64_t *a, int64_t *b) {
    *a = lo - reach > 0 ? lo - reach : 0;
    *b = hi + reach < p->planes ? hi + reach : p->planes;
}

/* exchange_every * step depth fits the thinnest slab; data: {thinnest planes, step depth}. */
static bool split_deep_halo_fits(const double *v, void *user) {
    const int64_t *d = user;
    return (int64_t)v[2] * d[1] <= d[0];
}

tess_status tess_split_space_create(int64_t planes, int ranks, int step_depth, tess_space **out) {
    *out = NULL;
    if (ranks < 1 || planes < ranks) return tess_error(TESS_ERR_ARG, "%d ranks for %lld planes", ranks, (long long)planes);
    tess_space *s = tess_space_create();
    if (!s) return tess_error(TESS_ERR_NOMEM, "split space");
    static const char *const overlap[] = {"none", "split"};
    static const double pow2[] = {1, 2, 4, 8};
    int64_t fit[2] = {ranks > 1 ? planes / ranks : planes, step_depth};
    tess_status st = tess_space_add_labels(s, "overlap", 2, overlap, 1);
    if (!st) st = tess_space_add(s, "halo_chunks", 4, pow2, 0);
    if (!st) st = tess_space_add(s, "exchange_every", 4, pow2, 0);
    if (!st) st = tess_space_add_constraint_copy(s, split_deep_halo_fits, fit, sizeof fit,
                                                 "exchange_every * halo of one application <= thinnest slab");
    /* a config text may leave any of them out: the default */
    if (!st) st = tess_space_set_optional(s, "overlap", 1);
    if (!st) st = tess_space_set_optional(s, "halo_chunks", 1);
    if (!st) st = tess_space_set_optional(s, "exchange_every", 1);
    if (st) {
        tess_space_destroy(s);
        return st;
    }
    *out = s;
    return TESS_OK;
}
