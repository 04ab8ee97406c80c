/*
 * ljforce_inputs.c - the verification inputs of ljforce: a jittered cubic
 * grid of atoms filling the box (no two closer than about 0.9 of the grid
 * spacing, so forces stay of the size a liquid has) and its full
 * neighbour list, built through cell lists so that million-atom tasks
 * take a second, not the hours of comparing every pair.
 */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include "core/error.h"
#include "ljforce.h"

#define JITTER 0.05   /* sigma, each way along each axis */

tess_status tess_lj_make_positions(const tess_lj_params *p, uint64_t seed, double *pos) {
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng) return tess_error(TESS_ERR_NOMEM, "ljforce: random number generator");
    gsl_rng_set(rng, (unsigned long)(seed % 4294967291ULL) + 1);
    const double box = tess_lj_box(p);
    long long side = 1;
    while (side * side * side < p->n) side++;
    const double a = box / (double)side;
    for (long long i = 0; i < p->n; i++) {
        const long long cell[3] = {i % side, i / side % side, i / (side * side)};
        for (int d = 0; d < 3; d++) {
            double x = (cell[d] + 0.5) * a + JITTER * (2 * gsl_rng_uniform(rng) - 1);
            pos[4 * i + d] = x - box * floor(x / box);
        }
        pos[4 * i + 3] = 0;
    }
    gsl_rng_free(rng);
    return TESS_OK;
}

/* Cells of at least the list radius along each axis; fewer than 3 would
 * visit a cell twice, so then one cell holds every atom. */
tess_status tess_lj_make_list(const tess_lj_params *p, const double *pos, int32_t *nbr, int32_t *count) {
    const double box = tess_lj_box(p), rl = p->rc + p->skin, rl2 = rl * rl;
    long long nc = (long long)floor(box / rl);
    if (nc < 3) nc = 1;
    const long long ncells = nc * nc * nc;
    long long *head = malloc((size_t)ncells * sizeof *head), *next = malloc((size_t)p->n * sizeof *next);
    if (!head || !next) {
        free(head);
        free(next);
        return tess_error(TESS_ERR_NOMEM, "ljforce: cell lists of %lld atoms", p->n);
    }
    for (long long c = 0; c < ncells; c++) head[c] = -1;
    for (long long i = 0; i < p->n; i++) {
        long long c[3];
        for (int d = 0; d < 3; d++) {
            c[d] = (long long)(pos[4 * i + d] / box * (double)nc);
            if (c[d] >= nc) c[d] = nc - 1;
            if (c[d] < 0) c[d] = 0;
        }
        const long long id = (c[2] * nc + c[1]) * nc + c[0];
        next[i] = head[id];
        head[id] = i;
    }
    tess_status st = TESS_OK;
    const int reach = nc == 1 ? 0 : 1;
    for (long long i = 0; i < p->n && !st; i++) {
        long long c[3], k = 0;
        for (int d = 0; d < 3; d++) {
            c[d] = (long long)(pos[4 * i + d] / box * (double)nc);
            if (c[d] >= nc) c[d] = nc - 1;
        }
        for (int dz = -reach; dz <= reach; dz++)
            for (int dy = -reach; dy <= reach; dy++)
                for (int dx = -reach; dx <= reach; dx++) {
                    const long long cx = (c[0] + dx + nc) % nc, cy = (c[1] + dy + nc) % nc, cz = (c[2] + dz + nc) % nc;
                    for (long long j = head[(cz * nc + cy) * nc + cx]; j >= 0; j = next[j]) {
                        if (j == i) continue;
                        double r2 = 0;
                        for (int d = 0; d < 3; d++) {
                            double x = pos[4 * i + d] - pos[4 * j + d];
                            x -= box * nearbyint(x / box);
                            r2 += x * x;
                        }
                        if (r2 >= rl2) continue;
                        if (k == p->m) {
                            st = tess_error(TESS_ERR_ARG, "ljforce: atom %lld has more than M = %lld neighbours within %g",
                                            i, p->m, rl);
                            break;
                        }
                        nbr[p->cols ? k * p->n + i : i * p->m + k] = (int32_t)j;
                        k++;
                    }
                }
        count[i] = (int32_t)k;
        for (long long r = k; r < p->m; r++) nbr[p->cols ? r * p->n + i : i * p->m + r] = (int32_t)i;
    }
    free(head);
    free(next);
    return st;
}
