/* sort.c - the atoms re-ordered by cell on the host before a run (md.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "md.h"

long md_cells_side(double box, double rl) {
    const long nc = (long)floor(box / rl);
    return nc < 3 ? 1 : nc;
}

static long cell_of(const double *x, double box, long nc) {
    long c[3];
    for (int d = 0; d < 3; d++) {
        c[d] = (long)(x[d] / box * (double)nc);
        c[d] = c[d] < 0 ? 0 : c[d] >= nc ? nc - 1 : c[d];
    }
    return (c[2] * nc + c[1]) * nc + c[0];
}

int md_sort_by_cell(md_system *s, double width) {
    const long nc = md_cells_side(s->box, width), ncells = nc * nc * nc, n = s->n;
    if (nc == 1) return 0;
    long *start = calloc((size_t)ncells + 1, sizeof *start), *cell = malloc((size_t)n * sizeof *cell);
    double *tmp = malloc((size_t)n * 6 * sizeof *tmp);
    long *ids = malloc((size_t)n * sizeof *ids);
    int rc = !start || !cell || !tmp || !ids;
    if (!rc) {
        for (long i = 0; i < n; i++) start[(cell[i] = cell_of(s->x + 3 * i, s->box, nc)) + 1]++;
        for (long c = 0; c < ncells; c++) start[c + 1] += start[c];
        for (long i = 0; i < n; i++) {
            const long to = start[cell[i]]++;
            memcpy(tmp + 6 * to, s->x + 3 * i, 3 * sizeof *tmp);
            memcpy(tmp + 6 * to + 3, s->v + 3 * i, 3 * sizeof *tmp);
            ids[to] = s->id[i];
        }
        for (long i = 0; i < n; i++) {
            memcpy(s->x + 3 * i, tmp + 6 * i, 3 * sizeof *tmp);
            memcpy(s->v + 3 * i, tmp + 6 * i + 3, 3 * sizeof *tmp);
        }
        memcpy(s->id, ids, (size_t)n * sizeof *ids);
    }
    free(start);
    free(cell);
    free(tmp);
    free(ids);
    return rc;
}
