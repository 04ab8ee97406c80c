/*
 * run.c - a run of tessera-fluid: the kernel of the case's task (tuned
 * first if asked), the time loop with convergence checks and output frames,
 * the float64 reference check, and the summary with the validation.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fluid.h"

#define HISTORY_EVERY 1000   /* steps between convergence checks */

fluid_options fluid_options_default(void) {
    return (fluid_options){.backend = "cpu", .dtype = "f32", .collision = "bgk", .layout = "soa",
                           .max_deviation = -1, .max_l2 = -1, .max_mass_drift = -1};
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail_tess(const char *what) {
    fprintf(stderr, "tessera-fluid: error: %s: %s\n", what, tess_errmsg());
    return FLUID_FAIL;
}

/* Buffers g, flags, g_out: host copies, and the arrays the kernel runs on
 * (the host copies on the cpu, device memory on cuda), which advance swaps. */
typedef struct fluid_state {
    tess_buffer_info buf[3];
    void *host[3], *arrays[3];
    bool device;
} fluid_state;

static void state_free(fluid_state *s, tess_kernel *k) {
    for (int i = 0; i < 3; i++) {
        if (s->device && s->arrays[i]) tess_kernel_free(k, s->arrays[i]);
        free(s->host[i]);
    }
}

static size_t state_bytes(const fluid_state *s, int i) { return (size_t)s->buf[i].count * s->buf[i].elem_bytes; }

/* Populations at rest (g = 0) and the case's mask, in the kernel's memory. */
static int state_init(fluid_state *s, const fluid_case *c, const char *spec, const char *dtype, bool device,
                      tess_kernel *k) {
    memset(s, 0, sizeof *s);
    s->device = device;
    int n = 0;
    if (tess_op_list_buffers(spec, c->shape, c->ndim, dtype, s->buf, 3, &n) || n != 3)
        return fail_tess("the kernel's buffers");
    for (int i = 0; i < 3; i++) {
        s->host[i] = calloc(1, state_bytes(s, i));
        if (!s->host[i]) {
            fprintf(stderr, "tessera-fluid: error: out of memory for %zu bytes of '%s'\n", state_bytes(s, i),
                    s->buf[i].name);
            return FLUID_FAIL;
        }
        s->arrays[i] = s->host[i];
    }
    /* the kinds as the operator's bytes (the mask was checked to hold kinds only) */
    unsigned char *kinds = s->host[1];
    for (int64_t i = 0; i < c->cells; i++) kinds[i] = (unsigned char)c->mask[i];
    if (!device) return FLUID_OK;
    for (int i = 0; i < 3; i++) s->arrays[i] = NULL;
    for (int i = 0; i < 3; i++) {
        if (tess_kernel_alloc(k, state_bytes(s, i), &s->arrays[i])) return fail_tess("device memory");
        if (tess_kernel_upload(k, s->arrays[i], s->host[i], state_bytes(s, i))) return fail_tess("upload");
    }
    return FLUID_OK;
}

/* The current populations on the host. */
static const void *state_g(fluid_state *s, tess_kernel *k, int *st) {
    *st = FLUID_OK;
    if (!s->device) return s->arrays[0];
    if (tess_kernel_download(k, s->host[0], s->arrays[0], state_bytes(s, 0))) *st = fail_tess("download");
    return s->host[0];
}

/* The float64 reference of the first `steps` steps from rest; its last
 * time level is left in ref->host[0]. */
static int reference_run(const fluid_case *c, const char *spec, long steps, fluid_state *ref) {
    int st = state_init(ref, c, spec, "f64", false, NULL);
    if (st) return st;
    if (tess_reference_steps(spec, c->shape, c->ndim, ref->arrays, 3, steps, NULL, NULL))
        return fail_tess("the float64 reference");
    return FLUID_OK;
}

static int compare_reference(const fluid_case *c, const char *spec, const char *dtype, const void *g,
                             fluid_state *ref, long steps) {
    double tol = 0;
    tess_comparison cmp;
    if (tess_op_counts(spec, c->shape, c->ndim, dtype, NULL, NULL, &tol) ||
        tess_reference_compare(dtype, g, ref->arrays[0], ref->buf[0].count, &cmp))
        return fail_tess("the reference check");
    /* rounding adds up step by step, at most the per-step tolerance each */
    double bound = tol * (double)steps;
    printf("  check    after %ld steps the populations differ from the float64 reference by %.3g "
           "(tolerance %.3g)\n", steps, cmp.max_diff, bound);
    if (cmp.max_diff <= bound) return FLUID_OK;
    fprintf(stderr, "tessera-fluid: error: the run differs from the float64 reference by %.3g at element %lld, "
            "above %.3g\n", cmp.max_diff, (long long)cmp.worst, bound);
    return FLUID_FAIL;
}

/* Largest change of the velocity since `prev`, over the fluid cells, / U; updates prev. */
static double residual(const fluid_case *c, const fluid_fields *f, double **prev) {
    double r = 0;
    for (int64_t k = 0; k < c->cells; k++) {
        if (c->mask[k] != CELL_FLUID) continue;
        for (int a = 0; a < 3; a++) {
            r = fmax(r, fabs(f->u[a][k] - prev[a][k]));
            prev[a][k] = f->u[a][k];
        }
    }
    return r / c->velocity;
}

typedef struct fluid_history {
    long *step;
    double *residual, *mass;
    int n, cap;
} fluid_history;

static int history_add(fluid_history *h, long step, double res, double mass) {
    if (h->n == h->cap) {
        int cap = h->cap ? 2 * h->cap : 64;
        long *s = realloc(h->step, (size_t)cap * sizeof *s);
        if (s) h->step = s;
        double *r = realloc(h->residual, (size_t)cap * sizeof *r);
        if (r) h->residual = r;
        double *m = realloc(h->mass, (size_t)cap * sizeof *m);
        if (m) h->mass = m;
        if (!s || !r || !m) return FLUID_FAIL;
        h->cap = cap;
    }
    h->step[h->n] = step;
    h->residual[h->n] = res;
    h->mass[h->n++] = mass;
    return FLUID_OK;
}

/* Prints the outcome of the bounds asked for; FLUID_FAIL when one is exceeded. */
static int check_bounds(const fluid_options *o, const fluid_validation *v, double drift) {
    int st = FLUID_OK;
    if (v->max_deviation >= 0)
        printf("  ghia     max deviation from Ghia, Ghia & Shin (1982), Tables I and II: %.4f U%s\n", v->max_deviation,
               v->prof[1].ref_excluded >= 0 ? " (Table II's misprint at x = 0.9063 aside, see the table)" : "");
    if (v->l2_error >= 0) printf("  profile  L2 error against the Poiseuille parabola: %.3f%%\n", 100 * v->l2_error);
    if (o->max_deviation >= 0 && !(v->max_deviation >= 0 && v->max_deviation <= o->max_deviation)) {
        fprintf(stderr, "tessera-fluid: error: %s\n",
                v->max_deviation < 0 ? "--max-deviation: Ghia et al. tabulate the 2D cavity at Re 100, 400 and 1000 only"
                                     : "the centreline profiles deviate from Ghia et al. beyond --max-deviation");
        st = FLUID_FAIL;
    }
    if (o->max_l2 >= 0 && !(v->l2_error >= 0 && v->l2_error <= o->max_l2)) {
        fprintf(stderr, "tessera-fluid: error: %s\n", v->l2_error < 0 ? "--max-l2 applies to the channel"
                                                                      : "the profile is off the parabola beyond --max-l2");
        st = FLUID_FAIL;
    }
    if (o->max_mass_drift >= 0 && !(fabs(drift) <= o->max_mass_drift)) {
        fprintf(stderr, "tessera-fluid: error: the mass changed by %.3g (relative), beyond --max-mass-drift %g\n",
                drift, o->max_mass_drift);
        st = FLUID_FAIL;
    }
    return st;
}

int fluid_run(const fluid_case *c, const fluid_options *o) {
    char spec[256], err[1024] = "";
    snprintf(spec, sizeof spec, "%s:collision=%s,layout=%s,omega=%.17g,ux=%.17g", c->lat->op, o->collision,
             o->layout, fluid_omega(c), c->velocity);
    const bool device = strcmp(o->backend, "cuda") == 0, aos = strcmp(o->layout, "aos") == 0;
    int st = FLUID_OK, nframes = 0;
    tess_context *ctx = NULL;
    tess_kernel *k = NULL;
    fluid_state s = {0}, ref = {0};
    fluid_fields f = {0};
    fluid_history h = {0};
    fluid_output *out = NULL;
    fluid_validation v = {0};
    double *prev[3] = {NULL, NULL, NULL};
    printf("  case     %s, %s, %lld", c->name, c->lat->name, (long long)c->shape[0]);
    for (int a = 1; a < c->ndim; a++) printf("x%lld", (long long)c->shape[a]);
    printf(" cells, Re %g, velocity %g, tau %.5f, %s, %s storage on %s\n", c->reynolds, c->velocity,
           1.0 / fluid_omega(c), o->collision, o->dtype, o->backend);
    if (tess_open(&ctx, o->db)) {
        st = fail_tess("the records");
        goto done;
    }
    if (o->tune_budget > 0) {
        tess_tune_options opt = tess_tune_options_default();
        opt.budget = (int)o->tune_budget;
        tess_tune_report rep;
        if (tess_tune(ctx, spec, c->shape, c->ndim, o->dtype, o->backend, &opt, &rep)) {
            st = fail_tess("tuning");
            goto done;
        }
        printf("  tuned    %d evaluations: %s, %.4g ms per step (default %.4g ms)\n", rep.evaluations,
               rep.best_config, rep.best_ms, rep.default_ms);
    }
    if (tess_kernel_get(ctx, spec, c->shape, c->ndim, o->dtype, o->backend, &k)) {
        st = fail_tess("the kernel");
        goto done;
    }
    printf("  kernel   %s (%s)\n", tess_kernel_config(k), tess_kernel_origin(k));
    if ((st = state_init(&s, c, spec, o->dtype, device, k))) goto done;
    if (fluid_fields_alloc(&f, c->cells)) goto nomem;
    for (int a = 0; a < 3; a++)
        if (!(prev[a] = calloc((size_t)c->cells, sizeof(double)))) goto nomem;
    long check = o->check_steps < c->steps ? o->check_steps : c->steps;
    if (check > 0 && (st = reference_run(c, spec, check, &ref))) goto done;
    if (o->output) {
        char history[512];
        snprintf(history, sizeof history, "tessera-fluid: %s kernel %s", spec, tess_kernel_config(k));
        if ((st = fluid_output_open(&out, o->output, c, history, err, sizeof err))) goto fail_msg;
    }
    int64_t fluid_cells = 0;
    for (int64_t i = 0; i < c->cells; i++) fluid_cells += c->mask[i] == CELL_FLUID;
    const double mass0 = (double)fluid_cells;
    double kernel_s = 0, res = INFINITY, mass = mass0, t_start = now_s();
    long step = 0;
    bool steady = false;
    while (step < c->steps && !steady) {
        double t0 = now_s();
        if (tess_kernel_run(k, s.arrays, 3)) {
            st = fail_tess("the kernel");
            goto done;
        }
        kernel_s += now_s() - t0;
        tess_op_advance(s.buf, 3, s.arrays);
        step++;
        bool sample = step % HISTORY_EVERY == 0, frame = out && step % c->interval == 0, last = step == c->steps;
        if (!(sample || frame || last || step == check)) continue;
        const void *g = state_g(&s, k, &st);
        if (st) goto done;
        if (step == check && (st = compare_reference(c, spec, o->dtype, g, &ref, check))) goto done;
        if (!(sample || frame || last)) continue;
        fluid_fields_compute(c, g, o->dtype, aos, &f);
        mass = fluid_mass(c, &f);
        if (sample || last) {
            res = residual(c, &f, prev);
            if (!isfinite(res) || !isfinite(mass)) {
                fprintf(stderr, "tessera-fluid: error: the flow became unstable (NaN or infinity) by step %ld: use "
                        "more cells, a lower velocity or --collision trt\n", step);
                st = FLUID_FAIL;
                goto done;
            }
            if (history_add(&h, step, res, mass)) goto nomem;
            steady = c->tolerance > 0 && step >= 2 * HISTORY_EVERY && res < c->tolerance;
        }
        if ((frame || last || steady) && out) {
            if ((st = fluid_output_frame(out, step, &f, err, sizeof err))) goto fail_msg;
            nframes++;
        }
        if (o->progress)
            fprintf(stderr, "\r  step %ld/%ld  change %.3g U per %d steps  %.1f MLUPS  %.0f s   ", step, c->steps,
                    res, HISTORY_EVERY, (double)c->cells * step / kernel_s / 1e6, now_s() - t_start);
    }
    if (o->progress) fprintf(stderr, "\n");
    double drift = (mass - mass0) / mass0;
    printf("  run      %ld steps in %.2f s of kernel time: %.1f MLUPS (all %lld cells)%s\n", step, kernel_s,
           (double)c->cells * step / kernel_s / 1e6, (long long)c->cells,
           steady ? ", steady" : c->tolerance > 0 ? ", not yet steady" : "");
    printf("  converge last change of the velocity %.3g U over %d steps (tolerance %g)\n", res, HISTORY_EVERY,
           c->tolerance);
    printf("  mass     relative change %.3g over the run\n", drift);
    if ((st = fluid_validate(c, &f, &v, err, sizeof err))) goto fail_msg;
    if (o->table && (st = fluid_validation_table(&v, c, o->table, err, sizeof err))) goto fail_msg;
    if (o->svg && (st = fluid_svg_write(o->svg, c, &f, &v, err, sizeof err))) goto fail_msg;
    if (out) {
        fluid_output *done_out = out;
        out = NULL;
        if ((st = fluid_output_close(done_out, h.step, h.residual, h.mass, h.n, err, sizeof err))) goto fail_msg;
        printf("  output   %s (%d %s)\n", o->output, nframes, nframes == 1 ? "frame" : "frames");
    }
    st = check_bounds(o, &v, drift);
    goto done;
nomem:
    snprintf(err, sizeof err, "out of memory");
    st = FLUID_FAIL;
fail_msg:
    fprintf(stderr, "tessera-fluid: error: %s\n", err);
    st = FLUID_FAIL;
done:
    if (out) fluid_output_close(out, h.step, h.residual, h.mass, h.n, err, sizeof err);
    fluid_validation_free(&v);
    for (int a = 0; a < 3; a++) free(prev[a]);
    free(h.step);
    free(h.residual);
    free(h.mass);
    fluid_fields_free(&f);
    state_free(&ref, NULL);
    state_free(&s, k);
    tess_kernel_destroy(k);
    tess_close(ctx);
    return st;
}
