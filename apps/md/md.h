/*
 * md.h - the state of a Lennard-Jones simulation in reduced units (sigma,
 * epsilon, mass and Boltzmann's constant 1) and the parts that act on it.
 * Positions are kept wrapped into the periodic cube [0, box)^3.
 */
#ifndef MD_H
#define MD_H

#include <stdbool.h>
#include <stdint.h>
#include <tessera.h>

typedef struct md_system {
    long n;
    double box;
    double time;          /* reduced time of the state */
    double *x, *v, *f;    /* n*3 each */
    long *id;             /* the atom's index in the input, kept through re-ordering */
} md_system;

int md_system_alloc(md_system *s, long n);
void md_system_free(md_system *s);

/* fcc lattice of cells^3 unit cells at a density, velocities drawn from a
 * Gaussian, the centre-of-mass motion removed and scaled to temperature
 * exactly (3n - 3 degrees of freedom), as LAMMPS's `velocity create` does. */
int md_lattice_fcc(md_system *s, long cells, double density, double temperature, uint64_t seed,
                   char *err, size_t errlen);
/* Velocities of every atom drawn from a Gaussian, without net momentum, scaled to temperature. */
int md_draw_velocities(md_system *s, double temperature, uint64_t seed, char *err, size_t errlen);
/* The kinetic energy and the temperature of 3n - 3 degrees of freedom. */
double md_kinetic(const md_system *s);
double md_temperature(const md_system *s);

/* Verlet neighbour list (full: each pair in both atoms' lists) within
 * rc + skin, built through cell lists; rebuilt when an atom moved more
 * than half the skin since the last build. */
typedef struct md_nlist {
    double rc, skin;
    long m;               /* list width */
    bool cols;            /* transposed layout: nbr[k*n + i] */
    int32_t *nbr, *count;
    double *x0;           /* positions at the last build */
    long *cell_head, *cell_next;
    long ncells_side;
    int builds;
} md_nlist;

/* Builds the list for s (and, with sort, first re-orders the atoms by cell
 * so that neighbours lie close in memory). *needed: the most neighbours an
 * atom has. Returns 0; 1 when that is more than m (the caller widens the
 * list and builds again); 2 when out of memory. */
int md_nlist_build(md_nlist *l, md_system *s, bool sort, long *needed);
bool md_nlist_stale(const md_nlist *l, const md_system *s);
int md_nlist_resize(md_nlist *l, long n, long m);
void md_nlist_free(md_nlist *l);

/* The force field: tessera's ljforce kernel for the system's task. */
typedef struct md_forces {
    tess_context *ctx;
    tess_kernel *kernel;
    const char *backend;          /* "cpu" or "cuda" */
    bool f64;                     /* the kernel's dtype */
    bool shift, tail;
    double rc, density;
    long n, m;
    bool cols;
    void *pos, *force;            /* host arrays in the kernel's dtype */
    double *ev;
    void *dev[5];                 /* cuda: device copies of the five buffers */
    double pe, virial;            /* of the last evaluation, tail corrections included */
} md_forces;

int md_forces_open(md_forces *ff, tess_context *ctx, const md_system *s, const md_nlist *l, char *err, size_t errlen);
/* The kernel for width l->m, and the list uploaded (after a build). */
int md_forces_set_list(md_forces *ff, const md_system *s, const md_nlist *l, char *err, size_t errlen);
int md_forces_compute(md_forces *ff, md_system *s, char *err, size_t errlen);
void md_forces_close(md_forces *ff);
/* The op text of the task: "ljforce:rc=...,shift=...,layout=...,density=..." */
void md_forces_op(const md_forces *ff, char *buf, size_t len);
/* Long-range corrections of the energy per atom and the pressure. */
double md_tail_energy(double density, double rc);
double md_tail_pressure(double density, double rc);
double md_pressure(const md_system *s, const md_forces *ff);

#endif
