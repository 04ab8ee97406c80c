/*
 * engine.c - a time step as tessera's kernels on the state where they run
 * (md.h). Every array is allocated through one kernel that lives as long
 * as the engine (the first half of velocity Verlet), so that a list widened
 * during the run can replace the list and force kernels without losing it.
 * On cuda the kernels are queued on the default stream; the copies that
 * cross to the host (the moved counts, the largest list, the thermo sums,
 * each a partial sum per chunk of atoms that the host adds) wait for them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "md.h"

double md_tail_energy(double density, double rc) {
    const double ir3 = 1 / (rc * rc * rc);
    return 8.0 / 3.0 * M_PI * density * (ir3 * ir3 * ir3 / 3 - ir3);
}

double md_tail_pressure(double density, double rc) {
    const double ir3 = 1 / (rc * rc * rc);
    return 16.0 / 3.0 * M_PI * density * density * (2.0 / 3.0 * ir3 * ir3 * ir3 - ir3);
}

double md_engine_temperature(const md_engine *e) { return e->v2 / (double)(3 * e->n - 3); }

double md_engine_pressure(const md_engine *e) {
    const double volume = e->box * e->box * e->box;
    return ((double)(3 * e->n - 3) * md_engine_temperature(e) + e->virial) / (3 * volume) +
           (e->cfg.tail ? md_tail_pressure(e->density, e->cfg.rc) : 0);
}

/* A list width for the density: the mean count within rc + skin with room
 * for a liquid's fluctuations, a multiple of 16. */
static long initial_width(double density, double rl, long n) {
    double mean = 4.0 / 3.0 * M_PI * rl * rl * rl * density;
    long m = ((long)(1.35 * mean + 12) + 15) / 16 * 16;
    return m < n - 1 ? m : n - 1 > 0 ? n - 1 : 1;
}

void md_engine_init(md_engine *e, tess_context *ctx, const md_engine_config *cfg, const md_system *s) {
    memset(e, 0, sizeof *e);
    e->cfg = *cfg;
    e->ctx = ctx;
    e->n = s->n;
    e->box = s->box;
    e->density = (double)s->n / (s->box * s->box * s->box);
    e->m = initial_width(e->density, cfg->rc + cfg->skin, s->n);
    e->s = md_cells_side(s->box, cfg->rc + cfg->skin);
}

const char *md_shape_text(const int64_t *shape, int nd, char *buf, size_t len) {
    size_t used = 0;
    buf[0] = 0;
    for (int d = 0; d < nd && used < len; d++) used += (size_t)snprintf(buf + used, len - used, d ? "x%lld" : "%lld", (long long)shape[d]);
    return buf;
}

int md_engine_task(const md_engine *e, int which, char *op, size_t oplen, int64_t shape[3]) {
    const md_engine_config *c = &e->cfg;
    const char *layout = c->cols ? "cols" : "rows";
    shape[0] = e->n;
    shape[1] = which == MD_BIN ? e->s : e->m;
    shape[2] = e->s;
    switch (which) {
    case MD_FIRST:
        snprintf(op, oplen, "md_verlet:half=first,thermostat=%s,density=%.6g", c->langevin > 0 ? "langevin" : "none",
                 e->density);
        return 1;
    case MD_SECOND: snprintf(op, oplen, "md_verlet:half=second,density=%.6g", e->density); return 1;
    case MD_DISPLACE: snprintf(op, oplen, "md_displace:skin=%g,density=%.6g", c->skin, e->density); return 1;
    case MD_BIN: snprintf(op, oplen, "md_bin:rc=%g,skin=%g,density=%.6g", c->rc, c->skin, e->density); return 2;
    case MD_LIST:
        snprintf(op, oplen, "md_list:rc=%g,skin=%g,layout=%s,density=%.6g", c->rc, c->skin, layout, e->density);
        return 3;
    default:
        snprintf(op, oplen, "ljforce:rc=%g,shift=%d,layout=%s,density=%.6g", c->rc, c->shift ? 1 : 0, layout,
                 e->density);
        return 2;
    }
}

int md_engine_tune(md_engine *e, int budget, char *err, size_t errlen) {
    for (int w = 0; w < MD_NKERNELS; w++) {
        char op[200];
        int64_t shape[3];
        const int nd = md_engine_task(e, w, op, sizeof op, shape);
        tess_tune_options topt = tess_tune_options_default();
        topt.budget = budget;
        tess_tune_report rep;
        if (tess_tune(e->ctx, op, shape, nd, e->cfg.dtype, e->cfg.backend, &topt, &rep)) {
            snprintf(err, errlen, "tuning %s: %s", op, tess_errmsg());
            return 1;
        }
        char text[64];
        printf("tuned %s %s: %s, %.4g ms (default %.4g ms)\n", op, md_shape_text(shape, nd, text, sizeof text), rep.best_config,
               rep.best_ms, rep.default_ms);
    }
    return 0;
}

/* The scalars of a step of dt: dt, and the thermostat's c1 = exp(-gamma dt), c2 = sqrt((1 - c1^2) T). */
static tess_status set_dt(md_engine *e, double dt) {
    tess_status st = tess_kernel_set_scalar(e->k[MD_FIRST], "dt", dt);
    if (!st) st = tess_kernel_set_scalar(e->k[MD_SECOND], "dt", dt);
    if (st || !(e->cfg.langevin > 0)) return st;
    const double c1 = exp(-e->cfg.damp * dt);
    st = tess_kernel_set_scalar(e->k[MD_FIRST], "c1", c1);
    return st ? st : tess_kernel_set_scalar(e->k[MD_FIRST], "c2", sqrt((1 - c1 * c1) * e->cfg.langevin));
}

/* The kernel of `which` for the current sizes (the best recorded config, else the default), its box set. */
static int get_kernel(md_engine *e, int which, char *err, size_t errlen) {
    char op[200];
    int64_t shape[3];
    const int nd = md_engine_task(e, which, op, sizeof op, shape);
    if (e->k[which]) tess_kernel_destroy(e->k[which]);
    e->k[which] = NULL;
    tess_status st = tess_kernel_get(e->ctx, op, shape, nd, e->cfg.dtype, e->cfg.backend, &e->k[which]);
    if (!st && which != MD_SECOND) st = tess_kernel_set_scalar(e->k[which], "box", e->box);
    if (!st && which == MD_FIRST && e->cfg.langevin > 0)
        st = tess_kernel_set_scalar(e->k[which], "seed", (double)e->cfg.thermostat_seed);
    if (st) {
        char text[64];
        snprintf(err, errlen, "kernel %s %s: %s", op, md_shape_text(shape, nd, text, sizeof text), tess_errmsg());
        return 1;
    }
    return 0;
}

static int run(md_engine *e, int which, void *a0, void *a1, void *a2, void *a3, void *a4, char *err, size_t errlen) {
    void *const arrays[5] = {a0, a1, a2, a3, a4};
    const int n = which == MD_FIRST || which == MD_SECOND ? 4 : which == MD_DISPLACE || which == MD_BIN ? 3 : 5;
    if (tess_kernel_run_on_stream(e->k[which], arrays, n, NULL)) {
        snprintf(err, errlen, "%s: %s", tess_kernel_config(e->k[which]), tess_errmsg());
        return 1;
    }
    return 0;
}

static int copy_down(md_engine *e, void *host, const void *from, size_t bytes, const char *what, char *err,
                     size_t errlen) {
    if (tess_kernel_download(e->k[MD_FIRST], host, from, bytes)) {
        snprintf(err, errlen, "reading %s: %s", what, tess_errmsg());
        return 1;
    }
    return 0;
}

static size_t real_size(const md_engine *e) { return strcmp(e->cfg.dtype, "f64") == 0 ? 8 : 4; }

static size_t list_bytes(const md_engine *e) { return (size_t)(e->n + e->n * e->m) * sizeof(int32_t); }

/* The chunks the partial sums are kept per: as many as md_displace's counts. */
static int count_chunks(md_engine *e, char *err, size_t errlen) {
    char op[200];
    int64_t shape[3];
    tess_buffer_info bufs[3];
    int nbufs = 0;
    const int nd = md_engine_task(e, MD_DISPLACE, op, sizeof op, shape);
    if (tess_op_list_buffers(op, shape, nd, e->cfg.dtype, bufs, 3, &nbufs) || nbufs != 3) {
        snprintf(err, errlen, "the buffers of %s: %s", op, tess_errmsg());
        return 1;
    }
    e->chunks = (long)bufs[2].count;
    return 0;
}

static int alloc_all(md_engine *e, char *err, size_t errlen) {
    if (count_chunks(e, err, errlen)) return 1;
    if (!(e->host = malloc((size_t)e->chunks * 3 * sizeof(double)))) {
        snprintf(err, errlen, "memory for the partial sums of %ld atoms", e->n);
        return 1;
    }
    const size_t n = (size_t)e->n, r = real_size(e), cells = (size_t)(e->s * e->s * e->s) + 1 + n;
    void **arrays[] = {&e->x, &e->v, &e->x0, &e->f, &e->pos, &e->ev, &e->sums, &e->cells, &e->rank, &e->list,
                       &e->most, &e->moved};
    const size_t bytes[] = {24 * n, 24 * n, 24 * n, 3 * r * n, 4 * r * n, 16 * n, 24 * (size_t)e->chunks,
                            4 * cells, 4 * n, list_bytes(e), 4, 4 * (size_t)e->chunks};
    const size_t narrays = sizeof bytes / sizeof bytes[0];
    size_t largest = 0;
    for (size_t i = 0; i < narrays; i++) largest = bytes[i] > largest ? bytes[i] : largest;
    /* Every array starts as zeros: the first half step, of length 0, reads the
     * forces before any were computed, and 0 times fresh memory's bytes (NaN
     * after a tune's poisoned buffers) is not 0. */
    void *zeros = calloc(1, largest);
    if (!zeros) {
        snprintf(err, errlen, "memory for the state of %ld atoms", e->n);
        return 1;
    }
    int rc = 0;
    for (size_t i = 0; i < narrays && !rc; i++)
        if (tess_kernel_alloc(e->k[MD_FIRST], bytes[i], arrays[i]) ||
            tess_kernel_upload(e->k[MD_FIRST], *arrays[i], zeros, bytes[i])) {
            snprintf(err, errlen, "memory for the state of %ld atoms: %s", e->n, tess_errmsg());
            rc = 1;
        }
    free(zeros);
    return rc;
}

/* Bins the atoms and builds the list, widening it (new list and force kernels) until every atom's neighbours fit. */
static int rebuild(md_engine *e, char *err, size_t errlen) {
    if (run(e, MD_BIN, e->x, e->cells, e->rank, NULL, NULL, err, errlen)) return 1;
    for (;;) {
        int32_t most = 0;
        if (run(e, MD_LIST, e->x, e->cells, e->list, e->x0, e->most, err, errlen) ||
            copy_down(e, &most, e->most, sizeof most, "the list's largest count", err, errlen))
            return 1;
        if (most <= e->m) break;
        tess_kernel_free(e->k[MD_FIRST], e->list);
        e->list = NULL;
        e->m = ((long)most * 5 / 4 + 15) / 16 * 16;
        if (tess_kernel_alloc(e->k[MD_FIRST], list_bytes(e), &e->list)) {
            snprintf(err, errlen, "memory for a list of width %ld: %s", e->m, tess_errmsg());
            return 1;
        }
        if (get_kernel(e, MD_LIST, err, errlen) || get_kernel(e, MD_FORCE, err, errlen)) return 1;
    }
    e->builds++;
    return 0;
}

static int forces(md_engine *e, char *err, size_t errlen) {
    int32_t *list = e->list;
    return run(e, MD_FORCE, e->pos, list + e->n, list, e->f, e->ev, err, errlen);
}

int md_engine_open(md_engine *e, const md_system *s, char *err, size_t errlen) {
    for (int w = 0; w < MD_NKERNELS; w++)
        if (get_kernel(e, w, err, errlen)) return 1;
    if (alloc_all(e, err, errlen)) return 1;
    const size_t state = (size_t)e->n * 3 * sizeof(double);
    if (tess_kernel_upload(e->k[MD_FIRST], e->x, s->x, state) || tess_kernel_upload(e->k[MD_FIRST], e->v, s->v, state)) {
        snprintf(err, errlen, "copying the state of %ld atoms: %s", e->n, tess_errmsg());
        return 1;
    }
    /* A step of length 0 packs the positions for the force kernel and sums the thermo terms. */
    if (set_dt(e, 0)) {
        snprintf(err, errlen, "%s", tess_errmsg());
        return 1;
    }
    if (run(e, MD_FIRST, e->x, e->v, e->f, e->pos, NULL, err, errlen) || rebuild(e, err, errlen) ||
        forces(e, err, errlen) || run(e, MD_SECOND, e->v, e->f, e->ev, e->sums, NULL, err, errlen) ||
        md_engine_thermo(e, err, errlen))
        return 1;
    if (set_dt(e, e->cfg.dt)) {
        snprintf(err, errlen, "%s", tess_errmsg());
        return 1;
    }
    return 0;
}

int md_engine_step(md_engine *e, char *err, size_t errlen) {
    e->step++;
    if (e->cfg.langevin > 0 && tess_kernel_set_scalar(e->k[MD_FIRST], "step", (double)e->step)) {
        snprintf(err, errlen, "%s", tess_errmsg());
        return 1;
    }
    if (run(e, MD_FIRST, e->x, e->v, e->f, e->pos, NULL, err, errlen) ||
        run(e, MD_DISPLACE, e->x, e->x0, e->moved, NULL, NULL, err, errlen) ||
        copy_down(e, e->host, e->moved, (size_t)e->chunks * sizeof(int32_t), "the displacement check", err, errlen))
        return 1;
    const int32_t *moved = e->host;
    long stale = 0;
    for (long c = 0; c < e->chunks; c++) stale += moved[c];
    if (stale > 0 && rebuild(e, err, errlen)) return 1;
    return forces(e, err, errlen) || run(e, MD_SECOND, e->v, e->f, e->ev, e->sums, NULL, err, errlen);
}

int md_engine_thermo(md_engine *e, char *err, size_t errlen) {
    double *chunk = e->host, sums[3] = {0, 0, 0};
    if (copy_down(e, chunk, e->sums, (size_t)e->chunks * 3 * sizeof(double), "the thermo sums", err, errlen))
        return 1;
    for (long c = 0; c < e->chunks; c++)
        for (int q = 0; q < 3; q++) sums[q] += chunk[3 * c + q];
    e->v2 = sums[0];
    e->pe = sums[1] + (e->cfg.tail ? (double)e->n * md_tail_energy(e->density, e->cfg.rc) : 0);
    e->virial = sums[2];
    return 0;
}

int md_engine_download(md_engine *e, md_system *s, char *err, size_t errlen) {
    const size_t state = (size_t)e->n * 3 * sizeof(double);
    return copy_down(e, s->x, e->x, state, "positions", err, errlen) ||
           copy_down(e, s->v, e->v, state, "velocities", err, errlen);
}

void md_engine_close(md_engine *e) {
    void *arrays[] = {e->x, e->v, e->x0, e->f, e->pos, e->ev, e->sums, e->cells, e->rank, e->list, e->most, e->moved};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0] && e->k[MD_FIRST]; i++)
        if (arrays[i]) tess_kernel_free(e->k[MD_FIRST], arrays[i]);
    for (int w = 0; w < MD_NKERNELS; w++)
        if (e->k[w]) tess_kernel_destroy(e->k[w]);
    memset(e->k, 0, sizeof e->k);
    free(e->host);
    e->host = NULL;
}
