/*
 * test_pairs.c - the Lennard-Jones force operator (reductions/pairs):
 *   - the float64 reference on hand-placed atoms: the pair force and
 *     energy of the 12-6 formula, across the periodic boundary, nothing
 *     beyond the cut-off, the energy shift, and the per-atom halves;
 *   - the reference's forces are minus the gradient of its energy (central
 *     differences on a jittered lattice), and sum to zero (Newton's third law);
 *   - the verification inputs' neighbour lists hold exactly the pairs
 *     within rc + skin (against comparing every pair), in both layouts;
 *   - generated C kernels of both layouts, with and without the shift, in
 *     f32 and f64, pass the hardware evaluator's verification;
 *   - a task whose box cannot hold the list radius twice is refused.
 */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include "check.h"
#include "core/problem.h"
#include "reductions/pairs/ljforce.h"
#include "rowwise_check.h"
#include "transfer/builtin.h"

static const tess_op *op;

static tess_task make_task(tess_dtype d, int64_t n, int64_t m, const char *attrs) {
    tess_task t;
    memset(&t, 0, sizeof t);
    const int64_t shape[2] = {n, m};
    CHECK_OK(tess_op_make_task(op, d, TESS_DTYPE_COUNT, TESS_DTYPE_COUNT, shape, 2, attrs, &t));
    return t;
}

/* Runs the reference on n atoms at pos (n*4 doubles) with full lists of every other atom. */
static void reference(const tess_task *t, const double *pos, double *force, double *ev) {
    const long n = (long)t->shape[0], m = (long)t->shape[1];
    int32_t *nbr = calloc((size_t)(n * m), sizeof *nbr), count[8];
    CHECK(n <= 8 && m >= n - 1);
    for (long i = 0; i < n; i++) {
        int k = 0;
        for (long j = 0; j < n; j++)
            if (j != i) nbr[i * m + k++] = (int32_t)j;
        count[i] = k;
    }
    void *bufs[5] = {(void *)pos, nbr, count, force, ev};
    CHECK_OK(op->reference(op, t, bufs));
    free(nbr);
}

static double lj_force(double r) { return 24 * (2 * pow(r, -13) - pow(r, -7)); }
static double lj_energy(double r) { return 4 * (pow(r, -12) - pow(r, -6)); }

static void check_hand_placed(void) {
    /* 2 atoms in a box of 8: density 2/512 */
    tess_task t = make_task(TESS_F64, 2, 1, "density=0.00390625");
    const double r = 1.3;
    /* across the boundary: x = 0.2 and x = 8 - 1.1 are 1.3 apart through it */
    double pos[8] = {0.2, 4, 4, 0, 8 - 1.1, 4, 4, 0}, force[6], ev[4];
    reference(&t, pos, force, ev);
    CHECK_NEAR(force[0], lj_force(r), 1e-12);      /* pushed away from its neighbour on the left */
    CHECK_NEAR(force[3], -lj_force(r), 1e-12);
    CHECK_NEAR(force[1], 0, 1e-15);
    CHECK_NEAR(ev[0], 0.5 * lj_energy(r), 1e-12);
    CHECK_NEAR(ev[1], 0.5 * lj_force(r) * r, 1e-12);
    CHECK_NEAR(ev[2], ev[0], 1e-15);
    /* beyond the cut-off: nothing */
    pos[4] = 0.2 + 2.6;
    reference(&t, pos, force, ev);
    CHECK(force[0] == 0 && ev[0] == 0 && ev[1] == 0);
    /* the shift: the energy at rc subtracted, the force unchanged */
    tess_task shifted = make_task(TESS_F64, 2, 1, "density=0.00390625,shift=1");
    pos[4] = 0.2 + 2.0;
    reference(&shifted, pos, force, ev);
    CHECK_NEAR(ev[0], 0.5 * (lj_energy(2.0) - lj_energy(2.5)), 1e-12);
    CHECK_NEAR(force[0], -lj_force(2.0), 1e-12);
}

/* The energy of the jittered lattice with atom i moved by h along axis a. */
static double energy(const tess_task *t, const void *const *in, double *pos, long i, int a, double h) {
    const long n = (long)t->shape[0];
    double *force = malloc((size_t)n * 3 * sizeof *force), *ev = malloc((size_t)n * 2 * sizeof *ev), e = 0;
    pos[4 * i + a] += h;
    void *bufs[5] = {pos, (void *)in[1], (void *)in[2], force, ev};
    CHECK_OK(op->reference(op, t, bufs));
    pos[4 * i + a] -= h;
    for (long k = 0; k < n; k++) e += ev[2 * k];
    free(force);
    free(ev);
    return e;
}

static void check_gradient(void) {
    tess_task t = make_task(TESS_F64, 500, 128, NULL);
    tess_problem *p = NULL;
    CHECK_OK(tess_problem_create(op, &t, 3, &p));
    if (!p) return;
    const long n = 500;
    double *pos = malloc((size_t)n * 4 * sizeof *pos), *force = malloc((size_t)n * 3 * sizeof *force),
           *ev = malloc((size_t)n * 2 * sizeof *ev);
    memcpy(pos, tess_problem_input(p, 0), (size_t)n * 4 * sizeof *pos);
    const void *in[3] = {pos, tess_problem_input(p, 1), tess_problem_input(p, 2)};
    void *bufs[5] = {pos, (void *)in[1], (void *)in[2], force, ev};
    CHECK_OK(op->reference(op, &t, bufs));
    double sum[3] = {0, 0, 0}, scale = 0;
    for (long i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) {
            sum[a] += force[3 * i + a];
            scale += fabs(force[3 * i + a]);
        }
    CHECK(scale > n);   /* the jitter makes real forces */
    for (int a = 0; a < 3; a++) CHECK_NEAR(sum[a], 0, 1e-9 * scale);
    const double h = 1e-6;
    for (long i = 0; i < n; i += 97)
        for (int a = 0; a < 3; a++) {
            double grad = (energy(&t, in, pos, i, a, h) - energy(&t, in, pos, i, a, -h)) / (2 * h);
            CHECK_MSG(fabs(-grad - force[3 * i + a]) < 1e-5 * (1 + fabs(force[3 * i + a])),
                      "atom %ld axis %d: force %g, -dE/dx %g", i, a, force[3 * i + a], -grad);
        }
    free(pos);
    free(force);
    free(ev);
    tess_problem_destroy(p);
}

static void check_lists(const char *attrs) {
    tess_task t = make_task(TESS_F32, 700, 112, attrs);
    tess_lj_params prm;
    CHECK_OK(tess_lj_params_get(&t, &prm));
    const long n = 700, m = 112;
    double *pos = malloc((size_t)n * 4 * sizeof *pos);
    int32_t *nbr = malloc((size_t)(n * m) * sizeof *nbr), *count = malloc((size_t)n * sizeof *count);
    CHECK_OK(tess_lj_make_positions(&prm, 11, pos));
    CHECK_OK(tess_lj_make_list(&prm, pos, nbr, count));
    const double box = tess_lj_box(&prm), rl = prm.rc + prm.skin;
    long listed = 0, wrong = 0;
    for (long i = 0; i < n; i++) {
        char *in_list = calloc((size_t)n, 1);
        for (long k = 0; k < count[i]; k++) in_list[nbr[prm.cols ? k * n + i : i * m + k]]++;
        for (long j = 0; j < n; j++) {
            double r2 = 0;
            for (int a = 0; a < 3; a++) {
                double d = pos[4 * i + a] - pos[4 * j + a];
                d -= box * nearbyint(d / box);
                r2 += d * d;
            }
            const int want = j != i && r2 < rl * rl;
            wrong += in_list[j] != want;
            listed += want;
        }
        free(in_list);
    }
    CHECK_MSG(wrong == 0, "%s: %ld list entries differ from comparing every pair", attrs, wrong);
    CHECK(listed > 60 * n);   /* about 78 neighbours within 2.8 at density 0.8442 */
    free(pos);
    free(nbr);
    free(count);
}

int main(void) {
    CHECK_OK(tess_register_builtin());
    op = tess_op_find("ljforce");
    CHECK(op != NULL);
    if (!op) return check_finish("test_pairs");
    check_hand_placed();
    check_gradient();
    check_lists("layout=rows");
    check_lists("layout=cols");

    const tess_backend_ops *cpu = tess_backend_find("cpu");
    tess_device dev;
    CHECK(cpu != NULL);
    if (cpu) CHECK_OK(cpu->probe(&dev));
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 5);
    if (cpu) {
        check_kernels(cpu, &dev, "ljforce", TESS_F32, 301, 112, "layout=cols,shift=1", 2, rng);
        check_kernels(cpu, &dev, "ljforce", TESS_F32, 301, 160, "layout=rows,rc=3,density=0.7", 2, rng);
        check_kernels(cpu, &dev, "ljforce", TESS_F64, 301, 112, "layout=cols", 1, rng);
    }
    gsl_rng_free(rng);

    tess_task small;
    const int64_t shape[2] = {100, 64};
    CHECK(tess_op_make_task(op, TESS_F32, TESS_DTYPE_COUNT, TESS_DTYPE_COUNT, shape, 2, NULL, &small) == TESS_ERR_ARG);
    CHECK(strstr(tess_errmsg(), "twice rc + skin") != NULL);
    return check_finish("test_pairs");
}
