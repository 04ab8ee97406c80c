/*
 * model.c - the weather app's time stepping: coefficient fields of the
 * stencils from the grid's metric, the kernels from tess_dispatch, and the
 * tracer's time levels traded between them.
 */
#include "model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double model_courant_per_second(const grid *g, const double *mx, const double *my) {
    double worst = 0;
    for (int k = 0; k < g->nz; k++)
        for (int j = 0; j < g->nlat; j++)
            for (int i = 0; i < g->nlon; i++) {
                int64_t p = grid_at(g, k, j, i), east = grid_at(g, k, j, (i + 1) % g->nlon);
                double out = fmax(-mx[p], 0) + fmax(mx[east], 0) + fmax(-my[p], 0) + fmax(my[p + g->nlon], 0);
                worst = fmax(worst, out / g->area[j]);
            }
    return worst;
}

/* Row j's value of a per-row quantity for padded row jj: rows beyond the
 * edges take the nearest row's. */
static int clamp_row(const grid *g, int jj) {
    int j = jj - GRID_PAD;
    return j < 0 ? 0 : j >= g->nlat ? g->nlat - 1 : j;
}

/* The coefficient K4 dt / R^4 of row j, capped so that the row is stable on
 * its own: kd L^2 <= 1/2, L bounding the eigenvalues of the row's discrete
 * Laplacian (Gershgorin: twice the diagonal), where explicit steps of the
 * biharmonic operator are stable up to kd L^2 = 2. */
static double diffusion_coefficient(const grid *g, int j, double kd) {
    double dlat = g->lat_edge[1] - g->lat_edge[0];
    double w = dlat / (cos(g->lat[j]) * g->dlon);
    double ws = j > 0 ? cos(g->lat_edge[j]) * g->dlon / dlat : 0;
    double wn = j + 1 < g->nlat ? cos(g->lat_edge[j + 1]) * g->dlon / dlat : 0;
    double L = 2 * (2 * w + ws + wn) / g->area[j];
    return fmin(kd, 0.5 / (L * L));
}

/* The coefficient field `name` of a stencil, float64 on the host, padded. */
static void metric_field(const model *m, const char *name, const double *mx, const double *my, double *out) {
    const grid *g = m->g;
    int rows = g->nlat + 2 * GRID_PAD;
    double dlat = g->lat_edge[1] - g->lat_edge[0];
    double kd = m->opt.k4 * m->dt / pow(m->opt.radius, 4);
    for (int64_t p = 0; p < grid_padded_3d(g); p++) {
        int jj = (int)(p / g->nlon % rows), j = clamp_row(g, jj);
        int inside = jj == j + GRID_PAD;
        /* the north face of row j (0 at a pole, or at the grid's edge: no flux leaves the grid) */
        double wn = inside && j + 1 < g->nlat ? cos(g->lat_edge[j + 1]) * g->dlon / dlat : 0;
        double wx = inside ? dlat / (cos(g->lat[j]) * g->dlon) : 0;
        double v = 0;
        if (!strcmp(name, "mx")) v = inside ? mx[p] * m->dt : 0;
        else if (!strcmp(name, "my")) v = jj >= GRID_PAD && jj <= g->nlat + GRID_PAD ? my[p] * m->dt : 0;
        else if (!strcmp(name, "rarea")) v = 1 / g->area[j];
        else if (!strcmp(name, "ymask")) v = inside && j > 0 && j + 1 < g->nlat;
        else if (!strcmp(name, "wx")) v = wx;
        else if (!strcmp(name, "wn")) v = wn;
        else if (!strcmp(name, "kx")) v = diffusion_coefficient(g, j, kd) * wx;
        else if (!strcmp(name, "kn"))
            v = fmin(diffusion_coefficient(g, j, kd), diffusion_coefficient(g, j + 1 < g->nlat ? j + 1 : j, kd)) * wn;
        out[p] = v;
    }
}

static void to_dtype(const char *dtype, const double *in, int64_t n, void *out) {
    for (int64_t i = 0; i < n; i++) {
        if (!strcmp(dtype, "f64")) ((double *)out)[i] = in[i];
        else ((float *)out)[i] = (float)in[i];
    }
}

static void from_dtype(const char *dtype, const void *in, int64_t n, double *out) {
    for (int64_t i = 0; i < n; i++) out[i] = !strcmp(dtype, "f64") ? ((const double *)in)[i] : ((const float *)in)[i];
}

/* Dispatches op for the grid and fills its coefficient buffers; its state
 * buffers are the model's q[0] and q[1]. */
static tess_status kernel_open(model *m, tess_context *ctx, model_kernel *mk, const char *op, const double *mx,
                               const double *my) {
    int64_t shape[3];
    grid_task_shape(m->g, shape);
    mk->op = op;
    tess_status st = tess_op_list_buffers(op, shape, 3, m->opt.dtype, mk->buf, MODEL_MAX_BUFFERS, &mk->n);
    if (st) return st;
    tess_dispatch_options d = tess_dispatch_options_default();
    d.online_budget = m->opt.tune;
    if ((st = tess_dispatch(ctx, op, shape, 3, m->opt.dtype, m->opt.backend, &d, &mk->k))) return st;
    double *field = malloc(sizeof(double) * (size_t)grid_padded_3d(m->g));
    void *staged = malloc(sizeof(double) * (size_t)grid_padded_3d(m->g));
    if (!field || !staged) st = TESS_ERR_NOMEM;
    for (int i = 0; i < mk->n && !st; i++) {
        const tess_buffer_info *b = &mk->buf[i];
        if (b->role == TESS_BUFFER_INPUT && b->advanced) {
            if (!m->q[0]) st = tess_kernel_alloc(mk->k, (size_t)b->count * b->elem_bytes, &m->q[0]);
            mk->arrays[i] = m->q[0];
        } else if (b->role == TESS_BUFFER_OUTPUT) {
            if (!m->q[1]) st = tess_kernel_alloc(mk->k, (size_t)b->count * b->elem_bytes, &m->q[1]);
            mk->arrays[i] = m->q[1];
        } else if (!(st = tess_kernel_alloc(mk->k, (size_t)b->count * b->elem_bytes, &mk->arrays[i]))) {
            metric_field(m, b->name, mx, my, field);   /* a 2d field is the first level of it */
            to_dtype(b->dtype, field, b->count, staged);
            st = tess_kernel_upload(mk->k, mk->arrays[i], staged, (size_t)b->count * b->elem_bytes);
        }
    }
    free(field);
    free(staged);
    return st;
}

static void kernel_close(model_kernel *mk, const model *m) {
    for (int i = 0; i < mk->n; i++)
        if (mk->arrays[i] && mk->arrays[i] != m->q[0] && mk->arrays[i] != m->q[1]) tess_kernel_free(mk->k, mk->arrays[i]);
    memset(mk, 0, sizeof *mk);
}

tess_status model_open(model *m, tess_context *ctx, const grid *g, const model_options *opt, double dt,
                       const double *mx, const double *my) {
    memset(m, 0, sizeof *m);
    m->g = g;
    m->opt = *opt;
    m->dt = dt;
    m->diffuse = opt->k4 > 0;
    tess_status st = kernel_open(m, ctx, &m->adv, "sphadv", mx, my);
    if (!st && m->diffuse) st = kernel_open(m, ctx, &m->diff, "sphdiff", mx, my);
    if (st) {
        model_close(m);
        return st;
    }
    double kd = opt->k4 * dt / pow(opt->radius, 4);
    for (int j = 0; j < g->nlat && m->diffuse; j++) m->capped_rows += diffusion_coefficient(g, j, kd) < kd;
    return TESS_OK;
}

void model_close(model *m) {
    tess_kernel *k = m->adv.k;
    kernel_close(&m->diff, m);
    kernel_close(&m->adv, m);
    if (k) {
        tess_kernel_free(k, m->q[0]);
        tess_kernel_free(k, m->q[1]);
    }
    m->q[0] = m->q[1] = NULL;
}

static tess_status transfer(model *m, double *q, int upload) {
    const tess_buffer_info *b = &m->adv.buf[0];
    size_t bytes = (size_t)b->count * b->elem_bytes;
    void *staged = malloc(bytes);
    if (!staged) return TESS_ERR_NOMEM;
    tess_status st = TESS_OK;
    if (upload) {
        to_dtype(b->dtype, q, b->count, staged);
        /* both levels: the output's rows beyond the edges are copied from the input, never computed */
        for (int l = 0; l < 2 && !st; l++) st = tess_kernel_upload(m->adv.k, m->q[l], staged, bytes);
    } else if (!(st = tess_kernel_download(m->adv.k, staged, m->q[0], bytes))) {
        from_dtype(b->dtype, staged, b->count, q);
    }
    free(staged);
    return st;
}

tess_status model_set(model *m, const double *q) { return transfer(m, (double *)q, 1); }
tess_status model_get(model *m, double *q) { return transfer(m, q, 0); }

/* One application of a kernel: q[0] in, q[1] out, then they trade places.
 * On cuda the launch is queued on the default stream, so the GPU runs the
 * steps back to back instead of waiting for each (a small grid's step is
 * shorter than a wait); reading the tracer back waits for them all. */
static tess_status apply(model *m, model_kernel *mk) {
    for (int i = 0; i < mk->n; i++) {
        if (mk->buf[i].role == TESS_BUFFER_INPUT && mk->buf[i].advanced) mk->arrays[i] = m->q[0];
        else if (mk->buf[i].role == TESS_BUFFER_OUTPUT) mk->arrays[i] = m->q[1];
    }
    tess_status st = tess_kernel_run_on_stream(mk->k, mk->arrays, mk->n, NULL);
    void *t = m->q[0];
    m->q[0] = m->q[1];
    m->q[1] = t;
    return st;
}

tess_status model_run(model *m, long steps, tess_step_fn progress, void *user) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    tess_status st = TESS_OK;
    for (long s = 0; s < steps && !st; s++) {
        st = apply(m, &m->adv);
        if (!st && m->diffuse) st = apply(m, &m->diff);
        if (progress) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            progress(s + 1, steps, (double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec), user);
        }
    }
    return st;
}
