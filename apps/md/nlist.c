/*
 * nlist.c - cell lists and the Verlet neighbour list (md.h).
 *
 * Cells are at least rc + skin wide, so an atom's neighbours lie in its
 * own cell and the 26 around it; with fewer than 3 cells a side that would
 * visit a cell twice, and one cell holds every atom instead.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "md.h"

int md_nlist_resize(md_nlist *l, long n, long m) {
    free(l->nbr);
    free(l->count);
    free(l->x0);
    l->m = m;
    l->nbr = malloc((size_t)(n * m) * sizeof *l->nbr);
    l->count = calloc((size_t)n, sizeof *l->count);
    l->x0 = calloc((size_t)n * 3, sizeof *l->x0);
    return !l->nbr || !l->count || !l->x0;
}

void md_nlist_free(md_nlist *l) {
    free(l->nbr);
    free(l->count);
    free(l->x0);
    free(l->cell_head);
    free(l->cell_next);
    memset(l, 0, sizeof *l);
}

static double min_image(double d, double box) { return d - box * nearbyint(d / box); }

bool md_nlist_stale(const md_nlist *l, const md_system *s) {
    const double limit = 0.25 * l->skin * l->skin;   /* (skin / 2)^2 */
    for (long i = 0; i < s->n; i++) {
        double r2 = 0;
        for (int d = 0; d < 3; d++) {
            double x = min_image(s->x[3 * i + d] - l->x0[3 * i + d], s->box);
            r2 += x * x;
        }
        if (r2 > limit) return true;
    }
    return false;
}

static long cell_of(const double *x, double box, long nc) {
    long c[3];
    for (int d = 0; d < 3; d++) {
        c[d] = (long)(x[d] / box * (double)nc);
        if (c[d] >= nc) c[d] = nc - 1;
        if (c[d] < 0) c[d] = 0;
    }
    return (c[2] * nc + c[1]) * nc + c[0];
}

/* Re-orders the atoms by cell (a counting sort), so that the atoms of a
 * cell, and mostly their neighbours, are adjacent in memory. */
static int sort_by_cell(md_system *s, long nc) {
    const long ncells = nc * nc * nc, n = s->n;
    long *start = calloc((size_t)ncells + 1, sizeof *start), *cell = malloc((size_t)n * sizeof *cell);
    double *tmp = malloc((size_t)n * 9 * sizeof *tmp);
    long *ids = malloc((size_t)n * sizeof *ids);
    if (!start || !cell || !tmp || !ids) {
        free(start);
        free(cell);
        free(tmp);
        free(ids);
        return 1;
    }
    for (long i = 0; i < n; i++) start[(cell[i] = cell_of(s->x + 3 * i, s->box, nc)) + 1]++;
    for (long c = 0; c < ncells; c++) start[c + 1] += start[c];
    for (long i = 0; i < n; i++) {
        long to = start[cell[i]]++;
        memcpy(tmp + 9 * to, s->x + 3 * i, 3 * sizeof *tmp);
        memcpy(tmp + 9 * to + 3, s->v + 3 * i, 3 * sizeof *tmp);
        memcpy(tmp + 9 * to + 6, s->f + 3 * i, 3 * sizeof *tmp);
        ids[to] = s->id[i];
    }
    for (long i = 0; i < n; i++) {
        memcpy(s->x + 3 * i, tmp + 9 * i, 3 * sizeof *tmp);
        memcpy(s->v + 3 * i, tmp + 9 * i + 3, 3 * sizeof *tmp);
        memcpy(s->f + 3 * i, tmp + 9 * i + 6, 3 * sizeof *tmp);
    }
    memcpy(s->id, ids, (size_t)n * sizeof *ids);
    free(start);
    free(cell);
    free(tmp);
    free(ids);
    return 0;
}

int md_nlist_build(md_nlist *l, md_system *s, bool sort, long *needed) {
    const double rl = l->rc + l->skin, rl2 = rl * rl;
    long nc = (long)floor(s->box / rl);
    if (nc < 3) nc = 1;
    const long ncells = nc * nc * nc;
    if (sort && nc > 1 && sort_by_cell(s, nc)) return 2;
    if (l->ncells_side != nc) {
        free(l->cell_head);
        l->cell_head = malloc((size_t)ncells * sizeof *l->cell_head);
        l->ncells_side = nc;
    }
    free(l->cell_next);
    l->cell_next = malloc((size_t)s->n * sizeof *l->cell_next);
    if (!l->cell_head || !l->cell_next) return 2;
    for (long c = 0; c < ncells; c++) l->cell_head[c] = -1;
    /* Inserted last to first, so each cell lists its atoms in memory order. */
    for (long i = s->n - 1; i >= 0; i--) {
        long c = cell_of(s->x + 3 * i, s->box, nc);
        l->cell_next[i] = l->cell_head[c];
        l->cell_head[c] = i;
    }
    const int reach = nc == 1 ? 0 : 1;
    long most = 0;
    for (long i = 0; i < s->n; i++) {
        const long c = cell_of(s->x + 3 * i, s->box, nc);
        const long cx = c % nc, cy = c / nc % nc, cz = c / (nc * nc);
        long k = 0;
        for (int dz = -reach; dz <= reach; dz++)
            for (int dy = -reach; dy <= reach; dy++)
                for (int dx = -reach; dx <= reach; dx++) {
                    const long o = (((cz + dz + nc) % nc) * nc + (cy + dy + nc) % nc) * nc + (cx + dx + nc) % nc;
                    for (long j = l->cell_head[o]; j >= 0; j = l->cell_next[j]) {
                        if (j == i) continue;
                        double r2 = 0;
                        for (int d = 0; d < 3; d++) {
                            double x = min_image(s->x[3 * i + d] - s->x[3 * j + d], s->box);
                            r2 += x * x;
                        }
                        if (r2 >= rl2) continue;
                        if (k < l->m) l->nbr[l->cols ? k * s->n + i : i * l->m + k] = (int32_t)j;
                        k++;
                    }
                }
        if (k > most) most = k;
        l->count[i] = (int32_t)(k < l->m ? k : l->m);
    }
    *needed = most;
    if (most > l->m) return 1;
    memcpy(l->x0, s->x, (size_t)s->n * 3 * sizeof *s->x);
    l->builds++;
    return 0;
}
