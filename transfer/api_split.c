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
 * On the cpu every rank runs here, one after another, over the local
 * transport; on cuda each rank is a process of its own on its own GPU
 * (api_split_procs.c) and the arrays are device memory.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/error.h"
#include "request.h"
#include "split_internal.h"
#include "stencils/family.h"

static double split_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

tess_split_options tess_split_options_default(void) {
    return (tess_split_options){.ranks = 2, .transport = NULL, .overlap = 1, .halo_chunks = 1, .exchange_every = 1};
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
    int reach = 0;
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
    bool cuda = backend && strcmp(backend, "cuda") == 0;
    if (!cuda && (!backend || strcmp(backend, "cpu") != 0))
        return tess_error(TESS_ERR_ARG, "split runs use the cpu or the cuda backend, not '%s'", backend ? backend : "(default)");
    const char *transport = o->transport ? o->transport : cuda ? "nccl" : "local";
    if (strcmp(transport, cuda ? "nccl" : "local") != 0)
        return tess_error(TESS_ERR_ARG, "split transport '%s' on the %s backend: it takes '%s' (local: the ranks in "
                          "this process; nccl: one process and GPU per rank)", transport, cuda ? "cuda" : "cpu",
                          cuda ? "nccl" : "local");
    r->nccl = cuda;
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    if (cuda && visible && *visible) {
        int listed = 1;
        for (const char *c = visible; *c; c++) listed += *c == ',';
        if (listed < o->ranks)
            return tess_error(TESS_ERR_ARG, "CUDA_VISIBLE_DEVICES lists %d GPU%s for %d ranks (one GPU per rank)",
                              listed, listed == 1 ? "" : "s", o->ranks);
    }
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
        snprintf(r->rep->transport, sizeof r->rep->transport, "%s", transport);
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
    split_run r = {.rep = report, .me = -1};
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
    if (r->nccl && !r->mem) r->mem = *k;
    for (int i = 0; i < r->kernels; i++)
        if (r->kernel_planes[i] == planes) return TESS_OK;
    if (r->kernels < (int)(sizeof r->kernel_planes / sizeof r->kernel_planes[0])) r->kernel_planes[r->kernels++] = planes;
    return TESS_OK;
}

static void split_event(const split_run *r, int rank, int event, long app) {
    if (r->o->on_event) r->o->on_event(rank, event, app, r->o->user);
}

static bool split_here(const split_run *r, int k) { return r->me < 0 || r->me == k; }

/* Arrays in the kernels' memory: host memory, or device memory of r->mem. */
static tess_status split_mem_alloc(split_run *r, size_t bytes, void **p) {
    if (r->mem) return tess_kernel_alloc(r->mem, bytes + 1, p);
    if (!(*p = calloc(bytes + 1, 1))) return tess_error(TESS_ERR_NOMEM, "%zu bytes", bytes);
    return TESS_OK;
}

static tess_status split_mem_put(split_run *r, void *dst, const void *host, size_t bytes) {
    if (r->mem) return tess_kernel_upload(r->mem, dst, host, bytes);
    memcpy(dst, host, bytes);
    return TESS_OK;
}

static tess_status split_mem_get(split_run *r, void *host, const void *src, size_t bytes) {
    if (r->mem) return tess_kernel_download(r->mem, host, src, bytes);
    memcpy(host, src, bytes);
    return TESS_OK;
}

static void split_mem_free(split_run *r, void *p) {
    if (p && r->mem) tess_kernel_free(r->mem, p);
    else free(p);
}

/* Computes planes [lo, hi) of rank k: in its own arrays, or staged (into
 * the staging arrays, then only those planes copied, as messages of the
 * rank to itself: a device-to-device copy on a GPU). dry: only dispatches
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
        if (!pb) arrays[i] = r->shared[i];
        else if (staged && split_writes(&r->buf[i])) arrays[i] = r->stage[i];
        else arrays[i] = (char *)r->local[k][i] + (size_t)(a - s->mem_lo) * pb;
    }
    if ((st = tess_kernel_run(kern, arrays, r->nbuf))) return st;
    if (staged) {
        tess_halo_msg copies[SPLIT_MAX_BUFFERS];
        int n = 0;
        for (int i = 0; i < r->nbuf; i++)
            if (r->plane_bytes[i] && r->buf[i].role == TESS_BUFFER_OUTPUT)
                copies[n++] = (tess_halo_msg){k, k, (char *)r->stage[i] + (size_t)(lo - a) * r->plane_bytes[i],
                                              (char *)r->local[k][i] + (size_t)(lo - s->mem_lo) * r->plane_bytes[i],
                                              (size_t)(hi - lo) * r->plane_bytes[i]};
        st = tess_halo_post(r->halo, copies, n);
        if (!st) st = tess_halo_wait(r->halo);
        if (st) return st;
    }
    split_event(r, k, event, app);
    return TESS_OK;
}

/* Queues planes [lo, lo + n) of buffer i from rank `from` to the same
 * planes of rank `to`, in halo_chunks messages (the pointers of ranks not
 * held here left NULL: their own processes hold them). */
static tess_status split_queue(split_run *r, int i, int from, int to, int64_t lo, int64_t n) {
    if (!split_here(r, from) && !split_here(r, to)) return TESS_OK;
    size_t pb = r->plane_bytes[i], bytes = (size_t)n * pb;
    int chunks = r->o->halo_chunks;
    if (r->nmsg + chunks > r->cap_msg) {
        int cap = 2 * (r->nmsg + chunks);
        tess_halo_msg *m = realloc(r->msg, (size_t)cap * sizeof *m);
        if (!m) return tess_error(TESS_ERR_NOMEM, "halo messages");
        r->msg = m;
        r->cap_msg = cap;
    }
    const char *src = split_here(r, from) ? (const char *)r->local[from][i] + (size_t)(lo - r->plan.slab[from].mem_lo) * pb
                                          : NULL;
    char *dst = split_here(r, to) ? (char *)r->local[to][i] + (size_t)(lo - r->plan.slab[to].mem_lo) * pb : NULL;
    size_t each = (bytes + (size_t)chunks - 1) / (size_t)chunks;
    for (size_t off = 0; off < bytes; off += each) {
        size_t len = bytes - off < each ? bytes - off : each;
        r->msg[r->nmsg++] = (tess_halo_msg){from, to, src ? src + off : NULL, dst ? dst + off : NULL, len};
        if (r->rep && split_here(r, from)) {   /* counted by the sender */
            r->rep->messages++;
            r->rep->halo_bytes += (double)len;
        }
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
    if (r->rep) r->rep->exchanges++;
    for (int k = 0; k < p->ranks; k++)
        if (split_here(r, k)) split_event(r, k, TESS_SPLIT_POST, app);
    return TESS_OK;
}

static tess_status split_wait(split_run *r, long app) {
    double t0 = split_now();
    tess_status st = tess_halo_wait(r->halo);
    if (r->rep) r->rep->wait_seconds += split_now() - t0;
    for (int k = 0; !st && k < r->plan.ranks; k++)
        if (split_here(r, k)) split_event(r, k, TESS_SPLIT_WAIT, app);
    return st;
}

/* Application `app` on every rank held here (dry: dispatching its kernels only). */
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
            if (split_here(r, k)) st = split_launch(r, k, cut_lo[k], cut_hi[k], false, TESS_SPLIT_INTERIOR, app, dry);
        }
        if (!st && !dry) st = split_wait(r, app);
        for (int k = 0; k < p->ranks && !st; k++) {
            if (!split_here(r, k)) continue;
            st = split_launch(r, k, tlo[k], cut_lo[k], true, TESS_SPLIT_BOUNDARY, app, dry);
            if (!st) st = split_launch(r, k, cut_hi[k], thi[k], true, TESS_SPLIT_BOUNDARY, app, dry);
        }
    } else {
        if (exchange && !st && !dry) st = split_wait(r, app);
        for (int k = 0; k < p->ranks && !st; k++)
            if (split_here(r, k)) st = split_launch(r, k, tlo[k], thi[k], false, TESS_SPLIT_WHOLE, app, dry);
    }
    for (int k = 0; k < p->ranks && !st && !dry; k++)
        if (split_here(r, k)) tess_op_advance(r->buf, r->nbuf, r->local[k]);
    return st;
}

/* The ranks' arrays, each a copy of its planes of the caller's field, the
 * buffers over fewer axes, and the staging arrays of the boundary launches. */
static tess_status split_alloc(split_run *r) {
    const tess_split_plan *p = &r->plan;
    int64_t per_plane = 1;
    for (int a = 1; a < r->ndim; a++) per_plane *= r->shape[a];
    int64_t stage = p->depth + 2 * (int64_t)r->reach;
    r->stage_planes = stage < p->planes ? stage : p->planes;
    tess_status st = TESS_OK;
    for (int i = 0; i < r->nbuf && !st; i++) {
        const tess_buffer_info *b = &r->buf[i];
        if (b->rank != r->ndim) {   /* the same on every rank */
            size_t n = (size_t)b->count * b->elem_bytes;
            if (!r->mem) r->shared[i] = r->fields[i];
            else if (!(st = split_mem_alloc(r, n, &r->shared[i]))) st = split_mem_put(r, r->shared[i], r->fields[i], n);
            continue;
        }
        size_t pb = r->plane_bytes[i] = (size_t)per_plane * b->elem_bytes;
        for (int k = 0; k < p->ranks && !st; k++) {
            if (!split_here(r, k)) continue;
            size_t n = (size_t)(p->slab[k].mem_hi - p->slab[k].mem_lo) * pb;
            st = split_mem_alloc(r, n, &r->local[k][i]);
            if (!st) st = split_mem_put(r, r->local[k][i], (const char *)r->fields[i] + (size_t)p->slab[k].mem_lo * pb, n);
            if (st) tess_error_context(st, "rank %d's '%s' (%zu bytes)", k, b->name, n);
        }
        if (!st && split_writes(b)) st = split_mem_alloc(r, (size_t)r->stage_planes * pb, &r->stage[i]);
    }
    return st;
}

/* Copies each rank's owned planes of the time levels to r->out. */
static tess_status split_gather(split_run *r) {
    tess_status st = TESS_OK;
    for (int i = 0; i < r->nbuf && !st; i++) {
        const tess_buffer_info *b = &r->buf[i];
        bool level = (b->role == TESS_BUFFER_INPUT && b->advanced) || b->advances >= 0;
        size_t pb = r->plane_bytes[i];
        for (int k = 0; pb && level && k < r->plan.ranks && !st; k++) {
            const tess_slab *s = &r->plan.slab[k];
            if (split_here(r, k))
                st = split_mem_get(r, (char *)r->out[i] + (size_t)s->lo * pb,
                                   (char *)r->local[k][i] + (size_t)(s->lo - s->mem_lo) * pb, (size_t)(s->hi - s->lo) * pb);
        }
    }
    return st;
}

static void split_free(split_run *r) {
    for (int i = 0; i < SPLIT_MAX_BUFFERS; i++) {
        for (int k = 0; k < TESS_SPLIT_MAX_RANKS; k++) split_mem_free(r, r->local[k][i]);
        split_mem_free(r, r->stage[i]);
        if (r->mem) split_mem_free(r, r->shared[i]);
    }
    free(r->msg);
    tess_halo_destroy(r->halo);
}

tess_status tess_split_execute(split_run *r, long applications) {
    /* every window's kernel first: none is compiled after a kernel has run */
    tess_status st = TESS_OK;
    for (long app = 0; app < r->o->exchange_every && app < applications && !st; app++) st = split_apply(r, app, true);
    if (!st) st = split_alloc(r);   /* on a GPU, with the context current from here on */
    if (!st && r->nccl) st = r->share_id(r, r->share_user);   /* after the CUDA context exists: see api_split_procs.c */
    if (!st) st = r->nccl ? tess_halo_nccl_create_rank(r->plan.ranks, r->me, r->nccl_id, &r->halo)
                          : tess_halo_local_create(&r->halo);
    double t0 = split_now();
    for (long app = 0; app < applications && !st; app++) st = split_apply(r, app, false);
    if (r->rep) {
        r->rep->seconds = split_now() - t0;
        r->rep->kernels = r->kernels;
    }
    if (!st) st = split_gather(r);
    split_free(r);
    return st;
}

tess_status tess_split_run(tess_context *ctx, const char *op, const int64_t *shape, int ndim, const char *dtype,
                           const char *backend, const tess_split_options *o, void *const *fields, int nfields,
                           long applications, tess_split_report *report) {
    if (!ctx || !op || !shape || !o || !fields) return tess_error(TESS_ERR_ARG, "tess_split_run: NULL argument");
    split_run *r = calloc(1, sizeof *r);
    if (!r) return tess_error(TESS_ERR_NOMEM, "split run");
    *r = (split_run){.ctx = ctx, .op = op, .dtype = dtype ? dtype : "f32", .backend = backend, .o = o,
                     .fields = fields, .out = fields, .rep = report, .me = -1};
    tess_status st = split_prepare(op, shape, ndim, r->dtype, backend, o, r);
    if (!st && nfields != r->nbuf) st = tess_error(TESS_ERR_ARG, "%s takes %d fields, %d given", op, r->nbuf, nfields);
    for (int i = 0; !st && i < nfields; i++)
        if (!fields[i]) st = tess_error(TESS_ERR_ARG, "%s: field %d ('%s') is NULL", op, i, r->buf[i].name);
    if (!st && applications > 0)   /* (no application: the fields are already the last time level) */
        st = r->nccl ? tess_split_run_processes(r, applications) : tess_split_execute(r, applications);
    free(r);
    return st;
}
