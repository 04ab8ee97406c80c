/*
 * test_md_step.c - the operators of an MD time step (reductions/pairs/md_step.h):
 *   - md_verlet's float64 reference on hand-set atoms: the kick, the drift
 *     and the wrap across the boundary, the packed positions, BAOAB's
 *     thermostat (no friction: plain Verlet; the noise's variance), the
 *     second half's kick and sums;
 *   - the thermostat's noise: mean 0 and variance 1, different per
 *     component and per step, the same for the same counter;
 *   - md_displace's reference counts moves across the boundary and only
 *     those beyond skin/2;
 *   - md_bin's reference: every atom once, in its cell, in increasing order;
 *     md_list's: exactly the pairs within rc + skin (against comparing every
 *     pair) in both layouts, with one cell (S = 1) as with 27, and the
 *     largest count even beyond the list's width;
 *   - the generated C kernels of all four, default, largest and random
 *     configs, pass the hardware evaluator's verification;
 *   - tasks that cannot work are refused with a message.
 */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include "check.h"
#include "core/problem.h"
#include "reductions/pairs/md_step.h"
#include "md_step_check.h"
#include "transfer/builtin.h"

static void check_verlet(void) {
    const tess_op *op = tess_op_find("md_verlet");
    const int64_t two[1] = {2};
    /* 2 atoms at density 2/1000: a box of 10 */
    tess_task t = task_of("md_verlet", TESS_F64, two, 1, "density=0.002");
    double x[6] = {9.999, 5, 5, 1, 1, 1}, v[6] = {1, 0, -2, 0, 0, 0}, f[6] = {2, 0, 0, 0, 0, 4}, pos[8];
    void *bufs[4] = {x, v, f, pos};
    CHECK_OK(op->reference(op, &t, bufs));
    const double dt = 0.005, h = 0.5 * dt;
    CHECK_NEAR(v[0], 1 + h * 2, 1e-15);
    CHECK_NEAR(x[0], 9.999 + dt * v[0] - 10, 1e-12);   /* wrapped to the other side */
    CHECK_NEAR(x[2], 5 - 2 * dt, 1e-12);
    CHECK_NEAR(v[5], h * 4, 1e-15);
    CHECK(pos[0] == x[0] && pos[2] == x[2] && pos[3] == 0 && pos[4] == x[3] && pos[7] == 0);

    /* Langevin: the same kick, half drifts either side of v = c1 v + c2 g */
    tess_task lt = task_of("md_verlet", TESS_F64, two, 1, "density=0.002,thermostat=langevin");
    double lx[6] = {5, 5, 5, 5, 5, 5}, lv[6] = {1, 1, 1, 1, 1, 1}, lf[6] = {0}, lpos[8];
    void *lbufs[4] = {lx, lv, lf, lpos};
    CHECK_OK(op->reference(op, &lt, lbufs));
    const double c1 = exp(-dt), c2 = sqrt(1 - c1 * c1), g = tess_md_noise(1, 1, 0);
    CHECK_NEAR(lv[0], c1 + c2 * g, 1e-14);
    CHECK_NEAR(lx[0], 5 + h + h * lv[0], 1e-12);

    /* second half: the kick, and sum v^2, sum of energies, sum of virials */
    tess_task st = task_of("md_verlet", TESS_F32, two, 1, "density=0.002,half=second");
    double sv[6] = {1, 2, 3, 0, 0, -1}, ev[4] = {0.5, 2, -1.5, 4}, sums[3];
    float sf[6] = {0, 0, 0, 0, 0, 8};
    void *sbufs[4] = {sv, sf, ev, sums};
    CHECK_OK(op->reference(op, &st, sbufs));
    CHECK_NEAR(sv[5], -1 + h * 8, 1e-15);
    CHECK_NEAR(sums[0], 1 + 4 + 9 + sv[5] * sv[5], 1e-12);
    CHECK_NEAR(sums[1], -1, 1e-15);
    CHECK_NEAR(sums[2], 6, 1e-15);
}

static void check_noise(void) {
    const int n = 200000;
    double sum = 0, sq = 0, cross = 0;
    for (int k = 0; k < n; k++) {
        const double g = tess_md_noise(4, 17, (uint64_t)k), next_step = tess_md_noise(4, 18, (uint64_t)k);
        sum += g;
        sq += g * g;
        cross += g * next_step;
    }
    CHECK_MSG(fabs(sum / n) < 5 / sqrt(n), "noise mean %g", sum / n);
    CHECK_MSG(fabs(sq / n - 1) < 0.02, "noise variance %g", sq / n);
    CHECK_MSG(fabs(cross / n) < 5 / sqrt(n), "noise of consecutive steps correlated: %g", cross / n);
    CHECK(tess_md_noise(4, 17, 3) == tess_md_noise(4, 17, 3) && tess_md_noise(4, 17, 3) != tess_md_noise(4, 17, 4));
    CHECK(tess_md_noise(4, 17, 3) != tess_md_noise(5, 17, 3));
}

static void check_displace(void) {
    const tess_op *op = tess_op_find("md_displace");
    const int64_t three[1] = {3};
    tess_task t = task_of("md_displace", TESS_F32, three, 1, "density=0.003,skin=0.3");   /* box 10 */
    /* moved 0.2 across the boundary (counted), 0.14 (not), 0.16 along a diagonal (counted) */
    double x[9] = {0.1, 5, 5, 3, 3, 3.14, 7, 7, 7}, x0[9] = {9.9, 5, 5, 3, 3, 3, 7 - 0.16 / sqrt(2), 7 + 0.16 / sqrt(2), 7};
    int32_t moved = -1;
    void *bufs[3] = {x, x0, &moved};
    CHECK_OK(op->reference(op, &t, bufs));
    CHECK_MSG(moved == 2, "moved %d, want 2", moved);
}

static double dist2(const double *x, long i, long j, double box) {
    double r2 = 0;
    for (int d = 0; d < 3; d++) {
        double e = x[3 * i + d] - x[3 * j + d];
        e -= box * nearbyint(e / box);
        r2 += e * e;
    }
    return r2;
}

/* md_bin's and md_list's references on a jittered lattice against comparing every pair. */
static void check_cells(long n, long m, long s, const char *attrs) {
    const int64_t shape[3] = {n, m, s};
    tess_task t = task_of("md_list", TESS_F32, shape, 3, attrs);
    tess_md_params p;
    CHECK_OK(tess_md_params_get(&t, &p));
    const long ncells = s * s * s;
    double *x = malloc((size_t)n * 3 * sizeof *x);
    int32_t *cells = malloc((size_t)(ncells + 1 + n) * sizeof *cells), *list = malloc((size_t)(n + n * m) * sizeof *list);
    CHECK_OK(tess_md_positions(&p, 3, x));
    CHECK_OK(tess_md_bin_reference(&p, x, cells));
    char *seen = calloc((size_t)n, 1);
    long misplaced = 0;
    for (long c = 0; c < ncells; c++)
        for (int32_t q = cells[c]; q < cells[c + 1]; q++) {
            const int32_t i = cells[ncells + 1 + q];
            seen[i]++;
            misplaced += tess_md_cell_of(x + 3 * i, p.box, s) != c ||
                         (q > cells[c] && cells[ncells + 1 + q - 1] >= i);
        }
    long unseen = 0;
    for (long i = 0; i < n; i++) unseen += seen[i] != 1;
    CHECK_MSG(cells[0] == 0 && cells[ncells] == n && misplaced == 0 && unseen == 0,
              "%s: %ld atoms misplaced or out of order, %ld not listed once", attrs, misplaced, unseen);
    free(seen);

    int32_t most = 0;
    tess_md_list_reference(&p, x, cells, list, &most);
    const double rl2 = (p.rc + p.skin) * (p.rc + p.skin);
    long wrong = 0, largest = 0;
    for (long i = 0; i < n; i++) {
        char *in_list = calloc((size_t)n, 1);
        for (long k = 0; k < list[i]; k++) in_list[list[n + (p.cols ? k * n + i : i * m + k)]]++;
        long want_count = 0;
        for (long j = 0; j < n; j++) want_count += j != i && dist2(x, i, j, p.box) < rl2;
        const bool capped = want_count > m;
        wrong += list[i] != (capped ? m : want_count);
        for (long j = 0; j < n; j++) {
            const int want = j != i && dist2(x, i, j, p.box) < rl2;
            wrong += capped ? (!want && in_list[j] != 0) || in_list[j] > 1 : in_list[j] != want;
        }
        largest = want_count > largest ? want_count : largest;
        free(in_list);
    }
    CHECK_MSG(wrong == 0, "%s: %ld list entries differ from comparing every pair", attrs, wrong);
    CHECK_MSG(most == largest, "%s: most %d, want %ld", attrs, most, largest);
    free(x);
    free(cells);
    free(list);
}

static void check_refusals(void) {
    const tess_op *list = tess_op_find("md_list"), *verlet = tess_op_find("md_verlet");
    tess_task t;
    /* 32000 atoms at 0.8442: a box of 33.6, at most 11 cells of 2.8 */
    const int64_t wide[3] = {32000, 128, 12};
    CHECK(tess_op_make_task(list, TESS_F32, TESS_DTYPE_COUNT, TESS_DTYPE_COUNT, wide, 3, NULL, &t) == TESS_ERR_ARG);
    CHECK(strstr(tess_errmsg(), "narrower than rc + skin") != NULL);
    const int64_t two_cells[3] = {32000, 128, 2};
    CHECK(tess_op_make_task(list, TESS_F32, TESS_DTYPE_COUNT, TESS_DTYPE_COUNT, two_cells, 3, NULL, &t) == TESS_ERR_ARG);
    const int64_t n[1] = {1000};
    CHECK(tess_op_make_task(verlet, TESS_F32, TESS_DTYPE_COUNT, TESS_DTYPE_COUNT, n, 1, "half=second,thermostat=langevin",
                            &t) == TESS_ERR_ARG);
    CHECK(strstr(tess_errmsg(), "belongs to half=first") != NULL);
    CHECK(tess_op_make_task(verlet, TESS_BF16, TESS_DTYPE_COUNT, TESS_DTYPE_COUNT, n, 1, NULL, &t) == TESS_ERR_ARG);
}

static void check_cpu_kernels(void) {
    const tess_backend_ops *cpu = tess_backend_find("cpu");
    tess_device dev;
    CHECK(cpu != NULL);
    if (!cpu || cpu->probe(&dev)) return;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 9);
    check_md_step_kernels(cpu, &dev, 1, rng);
    gsl_rng_free(rng);
}

int main(void) {
    CHECK_OK(tess_register_builtin());
    check_verlet();
    check_noise();
    check_displace();
    check_cells(700, 112, 3, "density=0.8442");
    check_cells(700, 112, 3, "density=0.8442,layout=cols");
    check_cells(300, 160, 1, "rc=3,density=0.776");
    check_cells(700, 40, 3, "density=0.8442");   /* narrower than the neighbours: capped, most beyond */
    check_refusals();
    check_cpu_kernels();
    return check_finish("test_md_step");
}
