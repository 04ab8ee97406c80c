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
    double *x, *v;        /* n*3 each */
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
/* Pairs closer than r, each once, by minimum image of positions within [0, box)
 * (all pairs: for small systems). */
long md_pairs_within(const md_system *s, double r);

/* Re-orders the atoms by cells of at least width a side (a counting sort),
 * so that the atoms of a cell, and mostly their neighbours, are adjacent in
 * memory. Returns 1 when out of memory. */
int md_sort_by_cell(md_system *s, double width);

/* The cells a side of a box for lists within rl: cells at least rl wide,
 * and 1 (one cell holds every atom) when fewer than 3 fit. */
long md_cells_side(double box, double rl);

/* A time step's state and kernels (engine.c). The state lives where the
 * kernels run (host memory on the cpu, device memory on cuda), and a step
 * is tessera's operators only: md_verlet's halves, md_displace, md_bin and
 * md_list when the list is stale, and ljforce; what crosses to the host is
 * the count of atoms that moved, and the thermo sums when asked. */
typedef struct md_engine_config {
    const char *backend, *dtype;    /* "cpu" or "cuda"; "f32" or "f64" (forces) */
    double rc, skin, dt;
    bool shift, tail, cols;         /* cols: the list transposed */
    double langevin, damp;          /* thermostat temperature (<= 0: none, NVE) and friction */
    uint64_t thermostat_seed;
} md_engine_config;

enum { MD_FIRST, MD_SECOND, MD_DISPLACE, MD_BIN, MD_LIST, MD_FORCE, MD_NKERNELS };

typedef struct md_engine {
    md_engine_config cfg;
    tess_context *ctx;
    long n, m, s;                   /* atoms, list width, cells a side */
    double box, density;
    tess_kernel *k[MD_NKERNELS];
    /* In the kernels' memory: x, v, x0 (n*3 f64), f (n*3), pos (n*4) of the
     * force dtype, ev (n*2 f64), sums (3 f64 a chunk), cells, rank, list,
     * most, moved (1 i32 a chunk). */
    void *x, *v, *x0, *f, *pos, *ev, *sums, *cells, *rank, *list, *most, *moved;
    long chunks;                    /* of atoms, each with its partial sums (md_displace's buffers say how many) */
    void *host;                     /* room for the partial sums on the host */
    long step;                      /* of the state, numbering the thermostat's noise */
    int builds;
    double v2, pe, virial;          /* the last thermo sums, the tail correction in pe */
} md_engine;

/* "NxMxS" of a task's shape, in buf. */
const char *md_shape_text(const int64_t *shape, int nd, char *buf, size_t len);
/* The task of kernel `which` (op text with attributes, shape); ndim returned. */
int md_engine_task(const md_engine *e, int which, char *op, size_t oplen, int64_t shape[3]);
/* Tunes every kernel of a step with budget evaluations each (before any kernel runs). */
int md_engine_tune(md_engine *e, int budget, char *err, size_t errlen);
/* Uploads the system, builds the list, computes the forces and the thermo sums. */
int md_engine_open(md_engine *e, const md_system *s, char *err, size_t errlen);
/* Sizes and context before tuning or opening: n, box, list width and cells. */
void md_engine_init(md_engine *e, tess_context *ctx, const md_engine_config *cfg, const md_system *s);
int md_engine_step(md_engine *e, char *err, size_t errlen);
/* Reads the thermo sums of the last step (v2, pe, virial). */
int md_engine_thermo(md_engine *e, char *err, size_t errlen);
/* Copies positions and velocities back into s. */
int md_engine_download(md_engine *e, md_system *s, char *err, size_t errlen);
void md_engine_close(md_engine *e);

/* Long-range corrections of the energy per atom and the pressure. */
double md_tail_energy(double density, double rc);
double md_tail_pressure(double density, double rc);
double md_engine_temperature(const md_engine *e);
double md_engine_pressure(const md_engine *e);

#endif
