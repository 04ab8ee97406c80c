/*
 * api_split.c - a stencil run split into slabs along the slowest axis
 * (tessera.h: tess_split_check, tess_split_run).
 *
 * Each rank holds the planes it owns and halos of `depth` planes, in arrays
 * of its own. An application launches the task's kernel on windows of
 * consecutive planes (a window is a contiguous part of every array, since
 * the split axis is the slowest): one window per slab, or, while halos are
 * in flight, the interior first and then the boundary planes. A launch that
 * computes planes [lo, hi) reads `reach` planes more on each side and
 * writes its whole window, edges included (the stencil's fixed boundary
 * band): the interior's edges are the boundary planes, recomputed after
 * the wait; a boundary launch writes into staging arrays, from which only
 * its planes are copied, so it cannot clobber the interior. With a halo
 * deepened for exchange_every applications, each application between two
 * exchanges computes `reach` fewer planes into the halos than the last.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/error.h"
#include "core/halo.h"
#include "core/split.h"
#include "request.h"
#include "stencils/family.h"

#define SPLIT_MAX_BUFFERS 8

typedef struct split_run {
    tess_context *ctx;
    const char *op, *dtype, *backend;
    const tess_split_options *o;
    int ndim;
    int64_t shape[3];
    tess_split_plan plan;
    int reach;                              /* planes one application reaches: spec reach x fused steps */
    tess_buffer_info buf[SPLIT_MAX_BUFFERS];
    int nbuf;
    size_t plane_bytes[SPLIT_MAX_BUFFERS];  /* 0: a buffer over fewer axes, shared whole */
    void *const *fields;
    void *local[TESS_SPLIT_MAX_RANKS][SPLIT_MAX_BUFFERS];
    void *stage[SPLIT_MAX_BUFFERS];
    int64_t stage_planes;
    int64_t kernel_planes[4 * TESS_SPLIT_MAX_RANKS];   /* the window extents dispatched */
    int kernels;
    tess_halo_transport *halo;
    tess_halo_msg *msg;
    int nmsg, cap_msg;
    tess_split_report *rep;
} split_run;

static double split_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

tess_split_options tess_split_options_default(void) {
    return (tess_split_options){.ranks = 2, .transport = "local", .overlap = 1, .halo_chunks = 1, .exchange_every = 1};
}

static bool split_writes(const tess_buffer_info *b) {
    return b->role == TESS_BUFFER_OUTPUT || b->role == TESS_BUFFER_SCRATCH;
}

/* The stencil op names and the planes one application reaches along its
 * slowest axis (its reach times its fused steps). */
static tess_status split_stencil(const char *op, const tess_spec **spec, int *reach) {
    tess_status st = tess_op_check(op);
    char name[TESS_OP_NAME_MAX];
    if (!st) st = tess_op_spec_name(op, name, NULL);
    if (st) return st;
    if (!(*spec = tess_stencils_spec(name)))
        return tess_error(TESS_ERR_ARG, "'%s' is not a stencil: only stencil runs split into slabs", name);
    *reach = ((*spec)->lo[0] > (*spec)->hi[0] ? (*spec)->lo[0] : (*spec)->hi[0]) * (*spec)->steps;
    return TESS_OK;
}

tess_status tess_split_options_parse(const char *op, const int64_t *shape, int ndim, const char *text,
                                     tess_split_options *o) {
    const tess_spec *spec;
    int reach;
    tess_status st = split_stencil(op, &spec, &reach);
    if (st) return st;
    if (ndim < 1 || o->ranks < 1 || o->ranks > shape[0])
        return tess_error(TESS_ERR_ARG, "cannot split %lld planes into %d slabs", ndim < 1 ? 0LL : (long long)shape[0],
                          o->ranks);
    tess_space *space;
    if ((st = tess_split_space_create(shape[0], o->ranks, reach, &space))) return st;
    tess_config c;
    st = tess_config_parse(space, text ? text : "", &c);
    if (st) tess_error_context(st, "a split into %d slabs of %lld planes, halos %d deep per application", o->ranks,
                               (long long)(shape[0] / o->ranks), reach);
    if (!st) {
        o->overlap = (int)tess_config_get(space, &c, "overlap");
        o->halo_chunks = (int)tess_config_get(space, &c, "halo_chunks");
        o->exchange_every = (int)tess_config_get(space, &c, "exchange_every");
    }
    tess_space_destroy(space);
    return st;
}

/* Everything tess_split_check checks; fills r's plan, reach and buffers. */
static tess_status split_prepare(const char *op, const int64_t *shape, int ndim, const char *dtype,
                                 const char *backend, const tess_split_options *o, split_run *r) {
    const tess_spec *spec;
    tess_status st = split_stencil(op, &spec, &r->reach);
    if (st) return st;
    const char *name = spec->name;
    if (ndim != spec->rank)
        return tess_error(TESS_ERR_ARG, "%s is a %dD stencil; the shape has %d extents", name, spec->rank, ndim);
    if (o->ranks < 1 || o->ranks > TESS_SPLIT_MAX_RANKS)
        return tess_error(TESS_ERR_ARG, "a split takes 1 to %d ranks, not %d", TESS_SPLIT_MAX_RANKS, o->ranks);
    if (!o->transport || strcmp(o->transport, "local") != 0)
        return tess_error(TESS_ERR_ARG, "split transport '%s': only 'local' (the ranks in this process) runs here; the "
                          "nccl transport needs one device per rank, which the cuda backend does not open yet",
                          o->transport ? o->transport : "(null)");
    if (!backend || strcmp(backend, "cpu") != 0)
        return tess_error(TESS_ERR_ARG, "a split run on the %s backend is not built yet: split runs use the cpu "
                          "backend", backend ? backend : "default");
    if (o->overlap != 0 && o->overlap != 1) return tess_error(TESS_ERR_ARG, "split overlap is 0 or 1, not %d", o->overlap);
    if (o->halo_chunks < 1 || o->halo_chunks > 64)
        return tess_error(TESS_ERR_ARG, "halo_chunks is 1 to 64, not %d", o->halo_chunks);
    if (o->exchange_every < 1 || o->exchange_every > 64)
        return tess_error(TESS_ERR_ARG, "exchange_every is 1 to 64, not %d", o->exchange_every);
    char axes[3][TESS_EXTENT_NAME_MAX];
    if ((st = tess_op_extent_names(op, shape, ndim, axes))) return st;
    if (tess_spec_periodic(spec, 0))
        return tess_error(TESS_ERR_ARG, "%s wraps around along %s (periodic): a split along it would need the "
                          "wrap-around exchange, which is not built", name, axes[0]);
    if ((st = tess_op_list_buffers(op, shape, ndim, dtype ? dtype : "f32", r->buf, SPLIT_MAX_BUFFERS, &r->nbuf)))
        return st;
    for (int i = 0; i < r->nbuf; i++)
        if (r->buf[i].role == TESS_BUFFER_INOUT)
            return tess_error(TESS_ERR_ARG, "%s updates '%s' in place, which a split run cannot window", name,
                              r->buf[i].name);
    r->ndim = ndim;
    memcpy(r->shape, shape, (size_t)ndim * sizeof *shape);
    if ((st = tess_split_plan_make(shape[0], o->ranks, r->reach * o->exchange_every, axes[0], &r->plan))) return st;
    if (r->rep) {
        memset(r->rep, 0, sizeof *r->rep);
        r->rep->ranks = o->ranks;
        snprintf(r->rep->axis, sizeof r->rep->axis, "%s", axes[0]);
        r->rep->depth = r->plan.depth;
        for (int k = 0; k < o->ranks; k++) {
            r->rep->lo[k] = r->plan.slab[k].lo;
            r->rep->hi[k] = r->plan.slab[k].hi;
        }
    }
    return TESS_OK;
}

tess_status tess_split_check(const char *op, const int64_t *shape, int ndim, const char *backend,
                             const tess_split_options *o, tess_split_report *report) {
    split_run r = {.rep = report};
    return split_prepare(op, shape, ndim, "f32", backend, o, &r);
}

/* The kernel of a window of `planes` planes, dispatched (and counted) once. */
static tess_status split_kernel(split_run *r, int64_t planes, tess_kernel **k) {
    int64_t shape[3];
    memcpy(shape, r->shape, sizeof shape);
    shape[0] = planes;
    tess_dispatch_options d = tess_dispatch_options_default();
    tess_status st = tess_dispatch(r->ctx, r->op, shape, r->ndim, r->dtype, r->backend, &d, k);
    if (st) return tess_error_context(st, "the kernel of a %lld-plane window", (long long)planes);
    for (int i = 0; i < r->kernels; i++)
        if (r->kernel_planes[i] == planes) return TESS_OK;
    if (r->kernels < (int)(sizeof r->kernel_planes / sizeof r->kernel_planes[0])) r->kernel_planes[r->kernels++] = planes;
    return TESS_OK;
}

static void split_event(const split_run *r, int rank, int event, long app) {
    if (r->o->on_event) r->o->on_event(rank, event, app, r->o->user);
}

/* Computes planes [lo, hi) of rank k: in its own arrays, or staged (into
 * the staging arrays, then only those planes copied). dry: only dispatches
 * the window's kernel. */
static tess_status split_launch(split_run *r, int k, int64_t lo, int64_t hi, bool staged, int event, long app,
                                bool dry) {
    if (lo >= hi) return TESS_OK;
    int64_t a, b;
    tess_split_window(&r->plan, r->reach, lo, hi, &a, &b);
    tess_kernel *kern;
    tess_status st = split_kernel(r, b - a, &kern);
    if (st || dry) return st;
    if (staged && b - a > r->stage_planes)
        return tess_error(TESS_ERR_INTERNAL, "split: a %lld-plane boundary window exceeds the staging arrays",
                          (long long)(b - a));
    const tess_slab *s = &r->plan.slab[k];
    void *arrays[SPLIT_MAX_BUFFERS];
    for (int i = 0; i < r->nbuf; i++) {
        size_t pb = r->plane_bytes[i];
        if (!pb) arrays[i] = r->fields[i];
        else if (staged && split_writes(&r->buf[i])) arrays[i] = r->stage[i];
        else arrays[i] = (char *)r->local[k][i] + (size_t)(a - s->mem_lo) * pb;
    }
    if ((st = tess_kernel_run(kern, arrays, r->nbuf))) return st;
    for (int i = 0; staged && i < r->nbuf; i++)
        if (r->plane_bytes[i] && r->buf[i].role == TESS_BUFFER_OUTPUT)
            memcpy((char *)r->local[k][i] + (size_t)(lo - s->mem_lo) * r->plane_bytes[i],
                   (char *)r->stage[i] + (size_t)(lo - a) * r->plane_bytes[i], (size_t)(hi - lo) * r->plane_bytes[i]);
    split_event(r, k, event, app);
    return TESS_OK;
}

/* Queues planes [lo, lo + n) of buffer i from rank `from` to the same
 * planes of rank `to`, in halo_chunks messages. */
static tess_status split_queue(split_run *r, int i, int from, int to, int64_t lo, int64_t n) {
    size_t pb = r->plane_bytes[i], bytes = (size_t)n * pb;
    int chunks = r->o->halo_chunks;
    if (r->nmsg + chunks > r->cap_msg) {
        int cap = 2 * (r->nmsg + chunks);
        tess_halo_msg *m = realloc(r->msg, (size_t)cap * sizeof *m);
        if (!m) return tess_error(TESS_ERR_NOMEM, "halo messages");
        r->msg = m;
        r->cap_msg = cap;
    }
    const char *src = (const char *)r->local[from][i] + (size_t)(lo - r->plan.slab[from].mem_lo) * pb;
    char *dst = (char *)r->local[to][i] + (size_t)(lo - r->plan.slab[to].mem_lo) * pb;
    size_t each = (bytes + (size_t)chunks - 1) / (size_t)chunks;
    for (size_t off = 0; off < bytes; off += each) {
        size_t len = bytes - off < each ? bytes - off : each;
        r->msg[r->nmsg++] = (tess_halo_msg){from, to, src + off, dst + off, len};
        if (r->rep) r->rep->halo_bytes += (double)len;
    }
    return TESS_OK;
}

/* Posts the halos of the state (the inputs an output advances): each rank's
 * first and last `depth` owned planes to its neighbours' halos. */
static tess_status split_post(split_run *r, long app) {
    const tess_split_plan *p = &r->plan;
    r->nmsg = 0;
    tess_status st = TESS_OK;
    for (int i = 0; i < r->nbuf && !st; i++) {
        if (!r->plane_bytes[i] || r->buf[i].role != TESS_BUFFER_INPUT || !r->buf[i].advanced) continue;
        for (int k = 0; k < p->ranks && !st; k++) {
            if (k > 0) st = split_queue(r, i, k, k - 1, p->slab[k].lo, p->depth);
            if (!st && k < p->ranks - 1) st = split_queue(r, i, k, k + 1, p->slab[k].hi - p->depth, p->depth);
        }
    }
    if (!st) st = tess_halo_post(r->halo, r->msg, r->nmsg);
    if (st) return st;
    if (r->rep) {
        r->rep->exchanges++;
        r->rep->messages += r->nmsg;
    }
    for (int k = 0; k < p->ranks; k++) split_event(r, k, TESS_SPLIT_POST, app);
    return TESS_OK;
}

static tess_status split_wait(split_run *r, long app) {
    double t0 = split_now();
    tess_status st = tess_halo_wait(r->halo);
    if (r->rep) r->rep->wait_seconds += split_now() - t0;
    for (int k = 0; !st && k < r->plan.ranks; k++) split_event(r, k, TESS_SPLIT_WAIT, app);
    return st;
}

/* Application `app` on every rank (dry: dispatching its kernels only). */
static tess_status split_apply(split_run *r, long app, bool dry) {
    const tess_split_plan *p = &r->plan;
    int every = r->o->exchange_every, j = (int)(app % every);
    int64_t ext = (int64_t)(every - 1 - j) * r->reach, tlo[TESS_SPLIT_MAX_RANKS], thi[TESS_SPLIT_MAX_RANKS];
    for (int k = 0; k < p->ranks; k++) {   /* the planes to compute: owned, and `ext` into the halos */
        tlo[k] = p->slab[k].lo - ext > 0 ? p->slab[k].lo - ext : 0;
        thi[k] = p->slab[k].hi + ext < p->planes ? p->slab[k].hi + ext : p->planes;
    }
    bool exchange = j == 0 && p->ranks > 1 && p->depth > 0;
    tess_status st = exchange && !dry ? split_post(r, app) : TESS_OK;
    if (exchange && r->o->overlap) {
        int64_t cut_lo[TESS_SPLIT_MAX_RANKS], cut_hi[TESS_SPLIT_MAX_RANKS];
        for (int k = 0; k < p->ranks && !st; k++) {   /* the interior: planes whose reach stays in the slab */
            cut_lo[k] = k > 0 ? p->slab[k].lo + r->reach : tlo[k];
            cut_hi[k] = k < p->ranks - 1 ? p->slab[k].hi - r->reach : thi[k];
            if (cut_hi[k] < cut_lo[k]) cut_hi[k] = cut_lo[k];
            st = split_launch(r, k, cut_lo[k], cut_hi[k], false, TESS_SPLIT_INTERIOR, app, dry);
        }
        if (!st && !dry) st = split_wait(r, app);
        for (int k = 0; k < p->ranks && !st; k++) {
            st = split_launch(r, k, tlo[k], cut_lo[k], true, TESS_SPLIT_BOUNDARY, app, dry);
            if (!st) st = split_launch(r, k, cut_hi[k], thi[k], true, TESS_SPLIT_BOUNDARY, app, dry);
        }
    } else {
        if (exchange && !st && !dry) st = split_wait(r, app);
        for (int k = 0; k < p->ranks && !st; k++) st = split_launch(r, k, tlo[k], thi[k], false, TESS_SPLIT_WHOLE, app, dry);
    }
    for (int k = 0; k < p->ranks && !st && !dry; k++) tess_op_advance(r->buf, r->nbuf, r->local[k]);
    return st;
}

/* The ranks' arrays, each a copy of its planes of the caller's field, and
 * the staging arrays of the boundary launches. */
static tess_status split_alloc(split_run *r) {
    const tess_split_plan *p = &r->plan;
    int64_t per_plane = 1;
    for (int a = 1; a < r->ndim; a++) per_plane *= r->shape[a];
    int64_t stage = p->depth + 2 * (int64_t)r->reach;
    r->stage_planes = stage < p->planes ? stage : p->planes;
    for (int i = 0; i < r->nbuf; i++) {
        if (r->buf[i].rank != r->ndim) continue;
        size_t pb = r->plane_bytes[i] = (size_t)per_plane * r->buf[i].elem_bytes;
        for (int k = 0; k < p->ranks; k++) {
            size_t n = (size_t)(p->slab[k].mem_hi - p->slab[k].mem_lo) * pb;
            if (!(r->local[k][i] = malloc(n + 1)))
                return tess_error(TESS_ERR_NOMEM, "rank %d's '%s' (%zu bytes)", k, r->buf[i].name, n);
            memcpy(r->local[k][i], (const char *)r->fields[i] + (size_t)p->slab[k].mem_lo * pb, n);
        }
        if (split_writes(&r->buf[i]) && !(r->stage[i] = calloc((size_t)r->stage_planes * pb + 1, 1)))
            return tess_error(TESS_ERR_NOMEM, "staging '%s'", r->buf[i].name);
    }
    return TESS_OK;
}

/* Copies each rank's owned planes of the time levels back into the caller's fields. */
static void split_gather(split_run *r) {
    for (int i = 0; i < r->nbuf; i++) {
        const tess_buffer_info *b = &r->buf[i];
        bool level = (b->role == TESS_BUFFER_INPUT && b->advanced) || b->advances >= 0;
        size_t pb = r->plane_bytes[i];
        for (int k = 0; pb && level && k < r->plan.ranks; k++) {
            const tess_slab *s = &r->plan.slab[k];
            memcpy((char *)r->fields[i] + (size_t)s->lo * pb, (char *)r->local[k][i] + (size_t)(s->lo - s->mem_lo) * pb,
                   (size_t)(s->hi - s->lo) * pb);
        }
    }
}

static void split_free(split_run *r) {
    for (int i = 0; i < SPLIT_MAX_BUFFERS; i++) {
        for (int k = 0; k < TESS_SPLIT_MAX_RANKS; k++) free(r->local[k][i]);
        free(r->stage[i]);
    }
    free(r->msg);
    tess_halo_destroy(r->halo);
}

tess_status tess_split_run(tess_context *ctx, const char *op, const int64_t *shape, int ndim, const char *dtype,
                           const char *backend, const tess_split_options *o, void *const *fields, int nfields,
                           long applications, tess_split_report *report) {
    if (!ctx || !op || !shape || !o || !fields) return tess_error(TESS_ERR_ARG, "tess_split_run: NULL argument");
    split_run *r = calloc(1, sizeof *r);
    if (!r) return tess_error(TESS_ERR_NOMEM, "split run");
    *r = (split_run){.ctx = ctx, .op = op, .dtype = dtype ? dtype : "f32", .backend = backend, .o = o,
                     .fields = fields, .rep = report};
    tess_status st = split_prepare(op, shape, ndim, r->dtype, backend, o, r);
    if (!st && nfields != r->nbuf) st = tess_error(TESS_ERR_ARG, "%s takes %d fields, %d given", op, r->nbuf, nfields);
    for (int i = 0; !st && i < nfields; i++)
        if (!fields[i]) st = tess_error(TESS_ERR_ARG, "%s: field %d ('%s') is NULL", op, i, r->buf[i].name);
    if (!st) st = split_alloc(r);
    if (!st) st = tess_halo_local_create(&r->halo);
    /* every window's kernel first: none is compiled after a kernel has run */
    for (long app = 0; app < o->exchange_every && app < applications && !st; app++) st = split_apply(r, app, true);
    double t0 = split_now();
    for (long app = 0; app < applications && !st; app++) st = split_apply(r, app, false);
    if (report) {
        report->seconds = split_now() - t0;
        report->kernels = r->kernels;
    }
    if (!st) split_gather(r);
    split_free(r);
    free(r);
    return st;
}
