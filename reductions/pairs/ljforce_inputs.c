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
#include "core/host_parallel.h"
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

/* The cells of a list build, read by the per-atom pass of each part. */
typedef struct list_job {
    const tess_lj_params *p;
    const double *pos;
    const long long *head, *next;
    long long nc;
    double box, rl2;
    int32_t *nbr, *count;
    long long overflow[TESS_HOST_MAX_PARTS];   /* the first atom of a part with more than M neighbours, or -1 */
} list_job;

static long long cell_of(const list_job *j, long long i, int d) {
    long long c = (long long)(j->pos[4 * i + d] / j->box * (double)j->nc);
    return c >= j->nc ? j->nc - 1 : c < 0 ? 0 : c;
}

static void list_atoms(void *ctx, int part, int64_t first, int64_t end) {
    list_job *j = ctx;
    const tess_lj_params *p = j->p;
    const long long nc = j->nc;
    const int reach = nc == 1 ? 0 : 1;
    j->overflow[part] = -1;
    for (long long i = first; i < end; i++) {
        const long long c[3] = {cell_of(j, i, 0), cell_of(j, i, 1), cell_of(j, i, 2)};
        long long k = 0;
        for (int dz = -reach; dz <= reach; dz++)
            for (int dy = -reach; dy <= reach; dy++)
                for (int dx = -reach; dx <= reach; dx++) {
                    const long long cx = (c[0] + dx + nc) % nc, cy = (c[1] + dy + nc) % nc, cz = (c[2] + dz + nc) % nc;
                    for (long long n = j->head[(cz * nc + cy) * nc + cx]; n >= 0; n = j->next[n]) {
                        if (n == i) continue;
                        double r2 = 0;
                        for (int d = 0; d < 3; d++) {
                            double x = j->pos[4 * i + d] - j->pos[4 * n + d];
                            x -= j->box * nearbyint(x / j->box);
                            r2 += x * x;
                        }
                        if (r2 >= j->rl2) continue;
                        if (k == p->m) {
                            j->overflow[part] = i;
                            return;
                        }
                        j->nbr[p->cols ? k * p->n + i : i * p->m + k] = (int32_t)n;
                        k++;
                    }
                }
        j->count[i] = (int32_t)k;
        for (long long r = k; r < p->m; r++) j->nbr[p->cols ? r * p->n + i : i * p->m + r] = (int32_t)i;
    }
}

/* Cells of at least the list radius along each axis; fewer than 3 would
 * visit a cell twice, so then one cell holds every atom. The atoms are
 * binned in order, then listed in parallel (each atom's entries in cell
 * order, so the list does not depend on the number of cores). */
tess_status tess_lj_make_list(const tess_lj_params *p, const double *pos, int32_t *nbr, int32_t *count) {
    const double box = tess_lj_box(p), rl = p->rc + p->skin;
    long long nc = (long long)floor(box / rl);
    if (nc < 3) nc = 1;
    const long long ncells = nc * nc * nc;
    long long *head = malloc((size_t)ncells * sizeof *head), *next = malloc((size_t)p->n * sizeof *next);
    if (!head || !next) {
        free(head);
        free(next);
        return tess_error(TESS_ERR_NOMEM, "ljforce: cell lists of %lld atoms", p->n);
    }
    list_job j = {.p = p, .pos = pos, .head = head, .next = next, .nc = nc, .box = box, .rl2 = rl * rl,
                  .nbr = nbr, .count = count};
    for (long long c = 0; c < ncells; c++) head[c] = -1;
    for (long long i = 0; i < p->n; i++) {
        const long long id = (cell_of(&j, i, 2) * nc + cell_of(&j, i, 1)) * nc + cell_of(&j, i, 0);
        next[i] = head[id];
        head[id] = i;
    }
    const int parts = tess_host_parallel(p->n, list_atoms, &j);
    tess_status st = TESS_OK;
    for (int q = 0; q < parts && !st; q++)
        if (j.overflow[q] >= 0)
            st = tess_error(TESS_ERR_ARG, "ljforce: atom %lld has more than M = %lld neighbours within %g",
                            j.overflow[q], p->m, rl);
    free(head);
    free(next);
    return st;
}
