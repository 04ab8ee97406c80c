/*
 * md_common.c - what the time-step operators (md_step.h) share: their
 * parameters and checks, verification positions, the cell of an atom, the
 * float64 references of the cell and list builds, the thermostat's noise
 * and the one-parameter spaces of the simple kernels.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "ljforce.h"
#include "md_step.h"
#include "reductions/cpu_common.h"
#include "templates/md_noise.h"

tess_status tess_md_params_get(const tess_task *t, tess_md_params *p) {
    memset(p, 0, sizeof *p);
    p->n = t->ndim >= 1 ? (long long)t->shape[0] : 0;
    p->m = t->ndim == 3 ? (long long)t->shape[1] : 0;
    p->s = t->ndim >= 2 ? (long long)t->shape[t->ndim - 1] : 0;
    tess_status st = tess_task_attr_real(t, "density", 0.8442, &p->density);
    if (!st) st = tess_task_attr_real(t, "rc", 2.5, &p->rc);
    if (!st) st = tess_task_attr_real(t, "skin", 0.3, &p->skin);
    if (st) return st;
    const char *layout = tess_task_attr(t, "layout");
    p->cols = layout && strcmp(layout, "cols") == 0;
    p->box = p->density > 0 ? cbrt((double)p->n / p->density) : 0;
    return TESS_OK;
}

tess_status tess_md_check_common(const tess_task *t, int ndim, const tess_md_params *p) {
    if (t->dtype != TESS_F32 && t->dtype != TESS_F64)
        return tess_error(TESS_ERR_ARG, "%s supports f32 and f64 forces, not %s", t->op, tess_dtype_name(t->dtype));
    if (t->ndim != ndim)
        return tess_error(TESS_ERR_ARG, "%s takes a shape of %d extents (%s)", t->op, ndim,
                          ndim == 1 ? "N" : ndim == 2 ? "NxS" : "NxMxS");
    if (!(p->density > 0) || !(p->rc > 0) || !(p->skin >= 0))
        return tess_error(TESS_ERR_ARG, "%s: density and rc must be positive and skin not negative", t->op);
    if (p->n < 2 || 3 * p->n > INT32_MAX) return tess_error(TESS_ERR_ARG, "%s: 2 to 2^31/3 atoms", t->op);
    return TESS_OK;
}

tess_status tess_md_check_cells(const tess_md_params *p) {
    const double rl = p->rc + p->skin;
    if (p->s != 1 && (p->s < 3 || p->box / (double)p->s < rl * (1 - 1e-6)))
        return tess_error(TESS_ERR_ARG,
                          "%lld cells a side of a box of %.6g are narrower than rc + skin (%.6g), or fewer than 3: "
                          "at most %lld, or 1",
                          p->s, p->box, rl, (long long)floor(p->box / rl));
    if (p->s * p->s * p->s + 1 + p->n > INT32_MAX) return tess_error(TESS_ERR_ARG, "%lld cells a side: too many", p->s);
    if (p->m > 0 && p->n * (p->m + 1) > INT32_MAX)
        return tess_error(TESS_ERR_ARG, "md_list: N*(M+1) must fit in 32 bits");
    return TESS_OK;
}

tess_status tess_md_positions(const tess_md_params *p, uint64_t seed, double *x) {
    tess_lj_params lj = {.rc = p->rc, .density = p->density, .skin = p->skin, .n = p->n};
    double *pos = malloc((size_t)p->n * 4 * sizeof *pos);
    if (!pos) return tess_error(TESS_ERR_NOMEM, "positions of %lld atoms", p->n);
    tess_status st = tess_lj_make_positions(&lj, seed, pos);
    for (long long i = 0; i < p->n && !st; i++) memcpy(x + 3 * i, pos + 4 * i, 3 * sizeof *x);
    free(pos);
    return st;
}

long long tess_md_cell_of(const double *x, double box, long long s) {
    long long c[3];
    for (int d = 0; d < 3; d++) {
        c[d] = (long long)(x[d] / box * (double)s);
        c[d] = c[d] < 0 ? 0 : c[d] >= s ? s - 1 : c[d];
    }
    return (c[2] * s + c[1]) * s + c[0];
}

tess_status tess_md_bin_reference(const tess_md_params *p, const double *x, int32_t *cells) {
    const long long ncells = p->s * p->s * p->s;
    int32_t *start = cells, *atoms = cells + ncells + 1;
    int32_t *fill = calloc((size_t)ncells, sizeof *fill);
    if (!fill) return tess_error(TESS_ERR_NOMEM, "md_bin: %lld cells", ncells);
    memset(start, 0, (size_t)(ncells + 1) * sizeof *start);
    for (long long i = 0; i < p->n; i++) start[tess_md_cell_of(x + 3 * i, p->box, p->s) + 1]++;
    for (long long c = 0; c < ncells; c++) start[c + 1] += start[c];
    for (long long i = 0; i < p->n; i++) {
        const long long c = tess_md_cell_of(x + 3 * i, p->box, p->s);
        atoms[start[c] + fill[c]++] = (int32_t)i;
    }
    free(fill);
    return TESS_OK;
}

/* The minimum image of the separation of two positions in [0, box), as the kernels take it (templates/md_cell.h). */
static double min_image(double d, double box) { return d > 0.5 * box ? d - box : d < -0.5 * box ? d + box : d; }

void tess_md_list_reference(const tess_md_params *p, const double *x, const int32_t *cells, int32_t *list,
                            int32_t *most) {
    const long long s = p->s, ncells = s * s * s, n = p->n, m = p->m;
    const int32_t *start = cells, *atoms = cells + ncells + 1;
    const double rl2 = (p->rc + p->skin) * (p->rc + p->skin);
    const int reach = s == 1 ? 0 : 1;
    long long largest = 0;
    for (long long i = 0; i < n; i++) {
        const long long c = tess_md_cell_of(x + 3 * i, p->box, s);
        const long long cx = c % s, cy = c / s % s, cz = c / (s * s);
        long long k = 0;
        for (int dz = -reach; dz <= reach; dz++)
            for (int dy = -reach; dy <= reach; dy++)
                for (int dx = -reach; dx <= reach; dx++) {
                    const long long o = (((cz + dz + s) % s) * s + (cy + dy + s) % s) * s + (cx + dx + s) % s;
                    for (int32_t q = start[o]; q < start[o + 1]; q++) {
                        const int32_t j = atoms[q];
                        if (j == i) continue;
                        double r2 = 0;
                        for (int d = 0; d < 3; d++) {
                            const double e = min_image(x[3 * i + d] - x[3 * j + d], p->box);
                            r2 += e * e;
                        }
                        if (r2 >= rl2) continue;
                        if (k < m) list[n + (p->cols ? k * n + i : i * m + k)] = j;
                        k++;
                    }
                }
        list[i] = (int32_t)(k < m ? k : m);
        if (k > largest) largest = k;
    }
    *most = (int32_t)largest;
}

double tess_md_noise(uint64_t seed, uint64_t step, uint64_t k) { return md_noise(seed, step, k); }

tess_status tess_md_cuda_block_space(tess_space **out) {
    tess_space *s = tess_space_create();
    if (!s) return tess_error(TESS_ERR_NOMEM, "cuda space");
    const double block[] = {64, 128, 256, 512};
    tess_status st = tess_space_add(s, "block", 4, block, 2);
    if (st) {
        tess_space_destroy(s);
        return st;
    }
    *out = s;
    return TESS_OK;
}

long long tess_md_chunks(long long n) { return (n + TESS_MD_CHUNK - 1) / TESS_MD_CHUNK; }

tess_status tess_md_cuda_chunk_space(tess_space **out) {
    tess_space *s = tess_space_create();
    if (!s) return tess_error(TESS_ERR_NOMEM, "cuda space");
    const double block[] = {64, 128, 256};
    tess_status st = tess_space_add(s, "block", 3, block, 1);
    if (st) {
        tess_space_destroy(s);
        return st;
    }
    *out = s;
    return TESS_OK;
}

tess_status tess_md_cpu_threads_space(const tess_device *dev, tess_space **out) {
    tess_space *s = tess_space_create();
    if (!s) return tess_error(TESS_ERR_NOMEM, "cpu space");
    tess_status st = tess_cpu_add_threads(s, dev);
    if (st) {
        tess_space_destroy(s);
        return st;
    }
    *out = s;
    return TESS_OK;
}

double tess_md_exact_tolerance(const tess_op *op, const tess_task *t) {
    (void)op;
    (void)t;
    return 0.01;
}

void tess_md_cpu_launch(tess_kernel_source *out, const char *entry) {
    snprintf(out->options, sizeof out->options, "-ffp-contract=off");
    out->nlaunches = 1;
    snprintf(out->launch[0].entry, sizeof out->launch[0].entry, "%s", entry);
}
