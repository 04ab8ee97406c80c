/*
 * test_stencil_eval.c - what a spec means, checked against values worked
 * out by hand: the reference interpreter on fixed and periodic boundaries,
 * several steps, 2D fields in a 3D grid, the functions and logic; and the
 * FLOP and byte counts, the tolerance and the verification scale.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/error.h"
#include "stencils/spec.h"
#include "stencils/spec_eval.h"

static tess_spec *parse(const char *text) {
    tess_spec *s = NULL;
    tess_status st = tess_spec_parse(text, strlen(text), "eval.stencil", &s);
    CHECK_MSG(st == TESS_OK, "%s", tess_errmsg());
    return s;
}

/* A quadratic has a constant 5-point Laplacian: 2 + 2 * 2 for x^2 + 2 y^2. */
static void check_fixed_boundary(void) {
    tess_spec *s = parse("stencil h\ngrid 4x5\nfield u in\nfield v out advances u\nparam alpha = 0.25\n"
                         "v = u + alpha * (u[-1,0] + u[1,0] + u[0,-1] + u[0,1] - 4 * u)\n");
    if (!s) return;
    double u[20], v[20];
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 5; x++) u[y * 5 + x] = x * x + 2 * y * y;
    void *bufs[] = {u, v};
    CHECK_OK(tess_spec_reference(s, TESS_F64, (const int64_t[]){4, 5}, bufs));
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 5; x++) {
            bool band = y == 0 || y == 3 || x == 0 || x == 4;
            CHECK_NEAR(v[y * 5 + x], u[y * 5 + x] + (band ? 0 : 0.25 * 6), 1e-12);
        }
    CHECK(tess_spec_interior_points(s, (const int64_t[]){4, 5}) == 6);
    tess_spec_destroy(s);
}

static void check_periodic(void) {
    /* Both axes periodic: every point computed, neighbours wrap. */
    tess_spec *s = parse("stencil p\ngrid 3x4\nboundary periodic x y\nfield u in\nfield v out\n"
                         "v = u[0,1] - 2 * u[-1,0]\n");
    if (!s) return;
    double u[12], v[12];
    for (int i = 0; i < 12; i++) u[i] = i * i;
    void *bufs[] = {u, v};
    CHECK_OK(tess_spec_reference(s, TESS_F64, (const int64_t[]){3, 4}, bufs));
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 4; x++)
            CHECK_NEAR(v[y * 4 + x], u[y * 4 + (x + 1) % 4] - 2 * u[((y + 2) % 3) * 4 + x], 0);
    tess_spec_destroy(s);

    /* x periodic, y fixed: the first row copies (an output advancing
     * nothing is 0 there), the others wrap along x. */
    s = parse("stencil q\ngrid 3x4\nboundary periodic x\nfield u in\nfield v out\nv = u[0,-1] + u[-1,0]\n");
    if (!s) return;
    CHECK_OK(tess_spec_reference(s, TESS_F64, (const int64_t[]){3, 4}, bufs));
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 4; x++)
            CHECK_NEAR(v[y * 4 + x], y == 0 ? 0 : u[y * 4 + (x + 3) % 4] + u[(y - 1) * 4 + x], 0);
    tess_spec_destroy(s);
}

/* Three steps of a shift move the data three places. */
static void check_steps(void) {
    tess_spec *s = parse("stencil m\ngrid 2x5\nboundary periodic x\nsteps 3\nfield u in\nfield v out advances u\n"
                         "v = u[0,1]\n");
    if (!s) return;
    double u[10], v[10], scratch[10];
    for (int i = 0; i < 10; i++) u[i] = i + 0.5;
    void *bufs[] = {u, v, scratch};
    CHECK(tess_spec_nbuffers(s) == 3);
    CHECK_OK(tess_spec_reference(s, TESS_F64, (const int64_t[]){2, 5}, bufs));
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 5; x++) CHECK_NEAR(v[y * 5 + x], u[y * 5 + (x + 3) % 5], 0);
    CHECK(u[7] == 7.5);   /* inputs untouched */
    tess_spec_destroy(s);
}

/* A 2D field in a 3D grid is the same on every level; f32 buffers round. */
static void check_2d_field(void) {
    tess_spec *s = parse("stencil b\ngrid 2x2x3\nboundary periodic x\nfield u in\nfield s 2d coef\nfield v out\n"
                         "v = u + s[0,1]\n");
    if (!s) return;
    float u[12], sf[6], v[12];
    for (int i = 0; i < 12; i++) u[i] = (float)i / 3;
    for (int i = 0; i < 6; i++) sf[i] = (float)(100 * i);
    void *bufs[] = {u, sf, v};
    CHECK(tess_spec_field_count(s, 1, (const int64_t[]){2, 2, 3}) == 6);
    CHECK_OK(tess_spec_reference(s, TESS_F32, (const int64_t[]){2, 2, 3}, bufs));
    for (int z = 0; z < 2; z++)
        for (int y = 0; y < 2; y++)
            for (int x = 0; x < 3; x++) {
                int i = (z * 2 + y) * 3 + x;
                CHECK(v[i] == (float)((double)u[i] + sf[y * 3 + (x + 1) % 3]));
            }
    tess_spec_destroy(s);
}

static void check_functions(void) {
    tess_spec *s = parse("stencil f\ngrid 1x8\nfield u in\nfield v out\n"
                         "v = select(u > 0 && u < 0.5 || u == -1, sqrt(abs(u)), min(max(u, -0.5), 2) / 4) + !(u != 3)\n");
    if (!s) return;
    double u[] = {0.25, 0.5, -1, -3, 3, 1.5, 0, 0.49}, v[8];
    void *bufs[] = {u, v};
    CHECK_OK(tess_spec_reference(s, TESS_F64, (const int64_t[]){1, 8}, bufs));
    for (int i = 0; i < 8; i++) {
        double a = u[i];
        double want = ((a > 0 && a < 0.5) || a == -1 ? sqrt(fabs(a)) : fmin(fmax(a, -0.5), 2) / 4) + (a == 3);
        CHECK_NEAR(v[i], want, 1e-15);
    }
    tess_spec_destroy(s);
}

static void check_counts(void) {
    tess_spec *s = parse("stencil heat\ngrid 8x8x8\nfield u in\nfield v out advances u\nparam alpha = 0.1\n"
                         "v = u + alpha * (u[-1,0,0] + u[1,0,0] + u[0,-1,0] + u[0,1,0] + u[0,0,-1] + u[0,0,1] - 6 * u)\n");
    if (!s) return;
    const int64_t shape[] = {10, 11, 13};
    CHECK(tess_spec_point_flops(s) == 9);
    CHECK_NEAR(tess_spec_flops(s, shape), 9.0 * 8 * 9 * 11, 0);
    CHECK_NEAR(tess_spec_bytes(s, TESS_F32, shape), 2.0 * 10 * 11 * 13 * 4, 0);
    CHECK_NEAR(tess_spec_bytes(s, TESS_F64, shape), 2.0 * 10 * 11 * 13 * 8, 0);
    double t32 = tess_spec_tolerance(s, TESS_F32), t64 = tess_spec_tolerance(s, TESS_F64);
    CHECK(t32 > 1e-7 && t32 < 1e-4 && t64 > 1e-16 && t64 < 1e-12);
    /* All ones: the update's magnitude is 1 + 0.1 * (6 + 6). */
    double *u = malloc(1430 * sizeof *u), *v = malloc(1430 * sizeof *v), scale = 0;
    for (int i = 0; i < 1430; i++) u[i] = 1;
    void *bufs[] = {u, v};
    CHECK_OK(tess_spec_scale(s, TESS_F64, shape, bufs, &scale));
    CHECK_NEAR(scale, 2.2, 1e-12);
    CHECK(tess_spec_reference(s, TESS_I32, shape, bufs) == TESS_ERR_ARG);
    free(u);
    free(v);
    tess_spec_destroy(s);

    /* Intermediates count once per point; limiter comparisons count. */
    s = parse("stencil lim\ngrid 8x8\nboundary periodic x\nfield u in\nfield c coef\nfield v out\n"
              "d = u[0,1] - u\nl = select(d * u > 0, 0, d)\nv = u - c * (l - l[0,-1])\n");
    if (!s) return;
    CHECK(tess_spec_point_flops(s) == 1 + 3 + 3);
    CHECK(s->ninst == 5 && s->lo[1] == 1 && s->hi[1] == 1 && s->lo[0] == 0);
    CHECK_NEAR(tess_spec_flops(s, (const int64_t[]){6, 7}), 7.0 * 6 * 7, 0);   /* periodic x, no y reach */
    CHECK_NEAR(tess_spec_bytes(s, TESS_F32, (const int64_t[]){6, 7}), 3.0 * 42 * 4, 0);
    tess_spec_destroy(s);
}

int main(void) {
    check_fixed_boundary();
    check_periodic();
    check_steps();
    check_2d_field();
    check_functions();
    check_counts();
    return check_finish("test_stencil_eval");
}
