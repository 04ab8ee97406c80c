/*
 * model.h - tracers stepped on the sphere by the weather app's two tessera
 * stencils: sphadv (flux-form advection) and, when a diffusion coefficient
 * is given, sphdiff (COSMO-style limited biharmonic diffusion) after it, each
 * the kernel tessera dispatches for this grid on the chosen backend. Uses
 * the public API (tessera.h) only.
 */
#ifndef WEATHER_MODEL_H
#define WEATHER_MODEL_H

#include <tessera.h>

#include "grid.h"

#define MODEL_MAX_BUFFERS 8

typedef struct model_kernel {
    const char *op;
    tess_kernel *k;                           /* borrowed from the context (tess_dispatch) */
    tess_buffer_info buf[MODEL_MAX_BUFFERS];
    int n;
    void *arrays[MODEL_MAX_BUFFERS];          /* device memory for cuda, host memory for cpu */
} model_kernel;

typedef struct model_options {
    const char *dtype;       /* "f32" or "f64" */
    const char *backend;     /* "cpu" or "cuda" */
    int tune;                /* evaluations to tune a kernel never tuned for this grid; 0: none */
    double k4;               /* biharmonic coefficient, m^4/s; 0: no diffusion */
    double radius;           /* of the sphere, m */
} model_options;

typedef struct model {
    const grid *g;
    model_options opt;
    double dt;
    model_kernel adv, diff;
    int diffuse;
    int capped_rows;         /* rows whose diffusion coefficient the stability cap lowered */
    void *q[2];              /* the tracer's two time levels, q[0] the current one */
} model;

/* Mass fluxes per second (radius-squared units) through the west (mx) and
 * south (my) faces of every cell, in padded 3D arrays: the largest sum of a
 * cell's outflow Courant numbers per second. dt = 0.5 / it keeps the
 * advection monotone. */
double model_courant_per_second(const grid *g, const double *mx, const double *my);

/* Gets the kernels for the grid (tuning them first with opt->tune
 * evaluations where they were never tuned), allocates their buffers and sets
 * their coefficients: the fluxes mx, my per second (padded 3D) times dt, the
 * metric, and the diffusion coefficient. On failure the message is in
 * tess_errmsg() and what was allocated is freed. */
tess_status model_open(model *m, tess_context *ctx, const grid *g, const model_options *opt, double dt,
                       const double *mx, const double *my);
void model_close(model *m);

/* Sets the tracer (padded 3D, float64) and reads it back. */
tess_status model_set(model *m, const double *q);
tess_status model_get(model *m, double *q);
/* Runs steps time steps; progress (may be NULL) is called after each. */
tess_status model_run(model *m, long steps, tess_step_fn progress, void *user);

#endif
