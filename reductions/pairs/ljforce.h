/*
 * ljforce.h - Lennard-Jones pair forces over a Verlet neighbour list, as an
 * operator (ljforce.c), with C/OpenMP (ljforce_cpu.c) and CUDA
 * (ljforce_cuda.c, templates/ljforce.cu) generators.
 *
 * Task: ljforce:DTYPE:NxM[:attrs]. N atoms in a periodic cube, a neighbour
 * list of width M. Buffers, in order:
 *   pos    in   N*4 of DTYPE    x, y, z, unused (16-byte rows for vector loads), in [0, box)
 *   nbr    in   N*M i32         the neighbours of atom i (full list: each pair twice);
 *                               layout=rows: nbr[i*M + k], layout=cols: nbr[k*N + i]
 *   count  in   N i32           neighbours listed for atom i (at most M)
 *   force  out  N*3 of DTYPE    the force on atom i
 *   ev     out  N*2 f64         half the pair energies and half the pair virials r.f of atom i
 * Scalar: box (f64), the edge of the periodic cube; its default is the box
 * of N atoms at the task's density. Reduced units (sigma = epsilon = 1).
 * Attributes: rc (cut-off), shift (subtract the pair energy at rc), layout,
 * and for the verification inputs density and skin (the list holds every
 * pair within rc + skin of a jittered lattice).
 */
#ifndef TESS_PAIRS_LJFORCE_H
#define TESS_PAIRS_LJFORCE_H

#include <stdbool.h>
#include "core/op.h"

typedef struct tess_lj_params {
    double rc, density, skin;
    bool shift;
    bool cols;          /* layout=cols */
    long long n, m;     /* atoms, list width */
} tess_lj_params;

extern const tess_op tess_op_ljforce;

tess_status tess_lj_params_get(const tess_task *t, tess_lj_params *p);
/* The box edge of the task's atoms at its density. */
double tess_lj_box(const tess_lj_params *p);
/* The pair energy at the cut-off that shift subtracts (0 without shift). */
double tess_lj_energy_shift(const tess_lj_params *p);

/* Verification inputs (ljforce_inputs.c): atoms on a cubic grid filling
 * the box, each moved by up to 0.05 sigma, from a seed; and their full
 * neighbour list within rc + skin, built through cell lists. pos holds
 * N*4 doubles (the fourth 0). TESS_ERR_ARG when an atom has more than M
 * neighbours, saying which. */
tess_status tess_lj_make_positions(const tess_lj_params *p, uint64_t seed, double *pos);
tess_status tess_lj_make_list(const tess_lj_params *p, const double *pos, int32_t *nbr, int32_t *count);

tess_status tess_ljforce_cpu_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out);
tess_status tess_ljforce_cpu_emit(const tess_op *op, const tess_task *t, const tess_device *dev,
                                  const tess_space *s, const tess_config *c, tess_kernel_source *out);
tess_status tess_ljforce_cuda_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out);
tess_status tess_ljforce_cuda_emit(const tess_op *op, const tess_task *t, const tess_device *dev,
                                   const tess_space *s, const tess_config *c, tess_kernel_source *out);

#endif
