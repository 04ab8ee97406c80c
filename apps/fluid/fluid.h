/* fluid.h - the pieces of tessera-fluid, the lattice Boltzmann sample
 * application: cases and their netCDF input, macroscopic fields, CF
 * output, validation against the literature, and the SVG picture. */
#ifndef TESS_FLUID_H
#define TESS_FLUID_H

#include <stdbool.h>
#include <stdint.h>
#include "tessera.h"

enum { FLUID_OK = 0, FLUID_FAIL = 1, FLUID_USAGE = 2 };

/* Cell kinds of the mask, as the lattice operators read their flags. */
enum { CELL_FLUID = 0, CELL_WALL = 1, CELL_MOVING = 2, CELL_OUTLET = 3, CELL_KINDS = 4 };

/* The lattice's velocities, in the operators' order (stencils/README.md). */
typedef struct fluid_lattice {
    const char *name, *op;   /* "d2q9", "lbm_d2q9" */
    int dim, q;
    int c[19][3];
} fluid_lattice;

const fluid_lattice *fluid_lattice_find(const char *name);

typedef struct fluid_case {
    char name[16];              /* cavity2d, cavity3d, channel */
    const fluid_lattice *lat;
    int ndim;                   /* 2 or 3 */
    int64_t shape[3];           /* slowest first: (y, x) or (z, y, x) */
    int64_t cells;
    double reynolds;
    double velocity;            /* lid or inlet speed along x, lattice units */
    double length;              /* the length Re is measured on, cells */
    long steps, interval;       /* steps at most; output and convergence checks every interval */
    double tolerance;           /* steady when max |du| over an interval < tolerance * velocity */
    int32_t *mask;              /* cells slowest first, owned */
} fluid_case;

/* The relaxation rate for the case's Reynolds number. */
double fluid_omega(const fluid_case *c);
void fluid_case_free(fluid_case *c);
/* Builds a named case of edge n (cells of fluid across the cavity or the
 * channel) at Reynolds number re and speed u; a message in err on failure. */
int fluid_case_build(const char *name, long n, double re, double u, fluid_case *c, char *err, size_t errlen);
/* The case's input file: the mask (CF flag values) and its parameters as global attributes. */
int fluid_case_write(const fluid_case *c, const char *path, char *err, size_t errlen);
int fluid_case_read(const char *path, fluid_case *c, char *err, size_t errlen);

/* Macroscopic fields of populations g (g_i = f_i - w_i, dtype of the run,
 * layout soa or aos) at every cell: velocity (dim components) and density. */
typedef struct fluid_fields {
    int64_t cells;
    double *u[3], *rho, *vort;   /* vort: z vorticity (2D) or its magnitude (3D) */
} fluid_fields;

int fluid_fields_alloc(fluid_fields *f, int64_t cells);
void fluid_fields_free(fluid_fields *f);
void fluid_fields_compute(const fluid_case *c, const void *g, const char *dtype, bool aos, fluid_fields *f);
/* Mass of the fluid cells, sum of rho. */
double fluid_mass(const fluid_case *c, const fluid_fields *f);

/* The CF output file: a frame of fields per output time, then the history. */
typedef struct fluid_output fluid_output;
int fluid_output_open(fluid_output **out, const char *path, const fluid_case *c, const char *history,
                      char *err, size_t errlen);
int fluid_output_frame(fluid_output *o, long step, const fluid_fields *f, char *err, size_t errlen);
int fluid_output_close(fluid_output *o, const long *steps, const double *residual, const double *mass, int n,
                       char *err, size_t errlen);

/* Profiles along the centrelines (cavity) or across the channel, with the
 * literature's values beside them. */
typedef struct fluid_profile {
    char title[96], xlabel[32], ylabel[32];
    int n;                   /* points of the run */
    double *pos, *val;       /* normalized position, velocity / U */
    int nref;                /* reference points (0: none) */
    int ref_excluded;        /* a reference point known to be misprinted, shown but not counted; -1: none */
    double ref_pos[32], ref_val[32], run_at_ref[32];
    char ref_name[64];
} fluid_profile;

typedef struct fluid_validation {
    int nprofiles;
    fluid_profile prof[2];
    double max_deviation;    /* cavity: max |run - Ghia| / U over both tables (misprints aside); -1: not compared */
    double l2_error;         /* channel: L2 error of the profile against the parabola; -1: not compared */
} fluid_validation;

/* Extracts the profiles and compares them with the reference the case has. */
int fluid_validate(const fluid_case *c, const fluid_fields *f, fluid_validation *v, char *err, size_t errlen);
void fluid_validation_free(fluid_validation *v);
/* Writes the comparison as a text table. */
int fluid_validation_table(const fluid_validation *v, const fluid_case *c, const char *path, char *err,
                           size_t errlen);
/* Writes a text attribute of its own length: the netCDF status (output.c,
 * used by the input writer in case.c too). */
int fluid_put_text(int nc, int var, const char *name, const char *text);

/* The picture: the speed field and the profiles with the reference points. */
int fluid_svg_write(const char *path, const fluid_case *c, const fluid_fields *f, const fluid_validation *v,
                    char *err, size_t errlen);

/* How to run a case (main.c fills it from the command line). */
typedef struct fluid_options {
    const char *backend, *dtype, *collision, *layout, *db;
    const char *output, *svg, *table;
    long tune_budget;          /* 0: no tuning */
    long check_steps;          /* 0: no reference check */
    double max_deviation, max_l2, max_mass_drift;   /* < 0: not checked */
    bool progress;
} fluid_options;

fluid_options fluid_options_default(void);
/* Runs the case to steady state (or its steps), writes what the options
 * ask for and checks the bounds; an exit status. */
int fluid_run(const fluid_case *c, const fluid_options *o);

#endif
