/*
 * forces.c - the force field through tessera's ljforce kernel (md.h): the
 * positions packed in the kernel's layout (x, y, z, 0 per atom, in its
 * dtype), the kernel run on the host or the GPU, the forces unpacked and
 * the per-atom energies and virials summed in double.
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

double md_pressure(const md_system *s, const md_forces *ff) {
    const double volume = s->box * s->box * s->box;
    return ((double)(3 * s->n - 3) * md_temperature(s) + ff->virial) / (3 * volume) +
           (ff->tail ? md_tail_pressure((double)s->n / volume, ff->rc) : 0);
}

void md_forces_op(const md_forces *ff, char *buf, size_t len) {
    snprintf(buf, len, "ljforce:rc=%g,shift=%d,layout=%s,density=%.6g", ff->rc, ff->shift ? 1 : 0,
             ff->cols ? "cols" : "rows", ff->density);
}

static size_t real_size(const md_forces *ff) { return ff->f64 ? sizeof(double) : sizeof(float); }

/* cuda only: on the cpu the list's arrays are the host's. */
static void release_device(md_forces *ff) {
    if (strcmp(ff->backend, "cuda") != 0) return;
    for (int b = 0; b < 5; b++)
        if (ff->dev[b]) tess_kernel_free(ff->kernel, ff->dev[b]);
    memset(ff->dev, 0, sizeof ff->dev);
}

static size_t buffer_bytes(const md_forces *ff, int b) {
    const size_t n = (size_t)ff->n, r = real_size(ff);
    const size_t bytes[5] = {4 * n * r, n * (size_t)ff->m * 4, n * 4, 3 * n * r, 2 * n * sizeof(double)};
    return bytes[b];
}

int md_forces_open(md_forces *ff, tess_context *ctx, const md_system *s, const md_nlist *l, char *err, size_t errlen) {
    ff->ctx = ctx;
    ff->n = s->n;
    ff->density = (double)s->n / (s->box * s->box * s->box);
    ff->cols = l->cols;
    ff->pos = calloc((size_t)s->n * 4, real_size(ff));
    ff->force = calloc((size_t)s->n * 3, real_size(ff));
    ff->ev = calloc((size_t)s->n * 2, sizeof *ff->ev);
    if (!ff->pos || !ff->force || !ff->ev) {
        snprintf(err, errlen, "cannot allocate the force arrays of %ld atoms", s->n);
        return 1;
    }
    return 0;
}

int md_forces_set_list(md_forces *ff, const md_system *s, const md_nlist *l, char *err, size_t errlen) {
    const bool cuda = strcmp(ff->backend, "cuda") == 0;
    if (!ff->kernel || ff->m != l->m) {
        if (ff->kernel) {
            release_device(ff);
            tess_kernel_destroy(ff->kernel);
        }
        char op[160];
        ff->m = l->m;
        md_forces_op(ff, op, sizeof op);
        const int64_t shape[2] = {s->n, l->m};
        /* the best recorded config for this device, else the template's default */
        if (tess_kernel_get(ff->ctx, op, shape, 2, ff->f64 ? "f64" : "f32", ff->backend, &ff->kernel) ||
            tess_kernel_set_scalar(ff->kernel, "box", s->box)) {
            snprintf(err, errlen, "force kernel %s %ldx%ld: %s", op, s->n, l->m, tess_errmsg());
            return 1;
        }
        for (int b = 0; b < 5 && cuda; b++)
            if (tess_kernel_alloc(ff->kernel, buffer_bytes(ff, b), &ff->dev[b])) {
                snprintf(err, errlen, "device memory for the force kernel: %s", tess_errmsg());
                return 1;
            }
    }
    if (cuda && (tess_kernel_upload(ff->kernel, ff->dev[1], l->nbr, buffer_bytes(ff, 1)) ||
                 tess_kernel_upload(ff->kernel, ff->dev[2], l->count, buffer_bytes(ff, 2)))) {
        snprintf(err, errlen, "uploading the neighbour list: %s", tess_errmsg());
        return 1;
    }
    ff->dev[1] = cuda ? ff->dev[1] : l->nbr;
    ff->dev[2] = cuda ? ff->dev[2] : l->count;
    return 0;
}

int md_forces_compute(md_forces *ff, md_system *s, char *err, size_t errlen) {
    const bool cuda = strcmp(ff->backend, "cuda") == 0;
    for (long i = 0; i < s->n; i++)
        for (int d = 0; d < 4; d++) {
            const double x = d < 3 ? s->x[3 * i + d] : 0;
            if (ff->f64) ((double *)ff->pos)[4 * i + d] = x;
            else ((float *)ff->pos)[4 * i + d] = (float)x;
        }
    void *arrays[5] = {ff->pos, ff->dev[1], ff->dev[2], ff->force, ff->ev};
    if (cuda) {
        arrays[0] = ff->dev[0];
        arrays[3] = ff->dev[3];
        arrays[4] = ff->dev[4];
    }
    tess_status st = cuda ? tess_kernel_upload(ff->kernel, ff->dev[0], ff->pos, buffer_bytes(ff, 0)) : TESS_OK;
    if (!st) st = tess_kernel_run(ff->kernel, arrays, 5);
    if (!st && cuda) st = tess_kernel_download(ff->kernel, ff->force, ff->dev[3], buffer_bytes(ff, 3));
    if (!st && cuda) st = tess_kernel_download(ff->kernel, ff->ev, ff->dev[4], buffer_bytes(ff, 4));
    if (st) {
        snprintf(err, errlen, "force kernel: %s", tess_errmsg());
        return 1;
    }
    double pe = 0, w = 0;
    for (long i = 0; i < s->n; i++) {
        pe += ff->ev[2 * i];
        w += ff->ev[2 * i + 1];
        for (int d = 0; d < 3; d++)
            s->f[3 * i + d] = ff->f64 ? ((double *)ff->force)[3 * i + d] : ((float *)ff->force)[3 * i + d];
    }
    ff->pe = pe + (ff->tail ? (double)s->n * md_tail_energy(ff->density, ff->rc) : 0);
    ff->virial = w;
    return 0;
}

void md_forces_close(md_forces *ff) {
    if (ff->kernel) {
        release_device(ff);
        tess_kernel_destroy(ff->kernel);
    }
    free(ff->pos);
    free(ff->force);
    free(ff->ev);
    ff->kernel = NULL;
    ff->pos = ff->force = NULL;
    ff->ev = NULL;
}
