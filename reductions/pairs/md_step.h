/*
 * md_step.h - the operators of a molecular-dynamics time step besides the
 * pair forces (ljforce.h), so that a step runs where its state lives:
 *
 *   md_verlet   (md_verlet.c)  a half of velocity Verlet. half=first: kick
 *               by dt/2, drift by dt (or BAOAB's drift, Ornstein-Uhlenbeck
 *               step and drift with thermostat=langevin), wrap into the box,
 *               pack the positions for ljforce. half=second: kick by dt/2,
 *               and sum 2*kinetic energy, potential energy and virial.
 *   md_displace (md_displace.c) how many atoms moved more than skin/2 since
 *               the list was built (0: the list is still good).
 *   md_bin      (md_cells.c)   the atoms sorted into S^3 cells.
 *   md_list     (md_cells.c)   the full Verlet list within rc + skin from
 *               the cells, and the positions it was built at.
 *
 * Every operator works on N atoms in a periodic cube whose edge is the
 * scalar `box` (default: the box of N atoms at the attribute `density`).
 * Positions x and velocities v are f64 (N*3); the task's dtype is that of
 * the forces and of the packed positions ljforce reads (f32 or f64).
 * Buffers, in order:
 *   md_verlet half=first:  x inout, v inout, f in (N*3 dtype), pos out (N*4 dtype)
 *             half=second: v inout, f in (N*3 dtype), ev in (N*2 f64: ljforce's
 *                          energy and virial halves), sums out (3 f64 per chunk
 *                          of TESS_MD_CHUNK atoms: its sum of v^2, of energies,
 *                          of virials)
 *             scalars dt, box; with langevin also c1 = exp(-gamma dt),
 *             c2 = sqrt((1 - c1^2) T), seed and step (the noise of atom i,
 *             axis a at a step is a function of seed, step and 3i + a).
 *   md_displace: x in, x0 in, moved out (1 i32 per chunk of TESS_MD_CHUNK
 *            atoms: how many of them moved); scalar box.
 *   md_bin   (task NxS): x in, cells out ((S^3 + 1 + N) i32: the first S^3 + 1
 *            are each cell's first index into the rest, then the atoms cell
 *            by cell, in any order within a cell), rank scratch (N i32);
 *            scalar box.
 *   md_list  (task NxMxS): x in, cells in (as md_bin writes), list out
 *            (N + N*M i32: each atom's count, then the neighbours; layout=rows:
 *            list[N + i*M + k], cols: list[N + k*N + i]; entries past the
 *            count are not written), x0 out (N*3 f64, a copy of x), most out
 *            (1 i32: the most neighbours an atom has, which may exceed M:
 *            then the list holds M of them and the caller widens it);
 *            scalar box.
 * The reductions end per chunk of atoms, each chunk's sum written by one
 * block without atomics (the caller adds the chunks), so that no launch
 * has to zero a total first and the sums do not depend on the order blocks
 * finish in.
 * Cells: S a side, each at least rc + skin wide (S >= 3), or S = 1 (one
 * cell holds every atom); an atom at x lies in cell floor(x / box * S),
 * clamped to [0, S).
 */
#ifndef TESS_PAIRS_MD_STEP_H
#define TESS_PAIRS_MD_STEP_H

#include <stdbool.h>
#include <stdint.h>
#include "core/op.h"

#define TESS_MD_CHUNK 256   /* atoms per partial sum of md_verlet and md_displace */

extern const tess_op tess_op_md_verlet, tess_op_md_displace, tess_op_md_bin, tess_op_md_list;

typedef struct tess_md_params {
    long long n, m, s;      /* atoms, list width (md_list), cells a side (md_bin, md_list) */
    double density, rc, skin, box;
    bool cols;              /* layout=cols */
} tess_md_params;

/* The task's extents and attributes (an attribute an operator lacks keeps its default). */
tess_status tess_md_params_get(const tess_task *t, tess_md_params *p);
/* Checks rank, dtype and density shared by the operators. */
tess_status tess_md_check_common(const tess_task *t, int ndim, const tess_md_params *p);
/* Checks that S cells a side are at least rc + skin wide in the default box (or S = 1). */
tess_status tess_md_check_cells(const tess_md_params *p);

/* A jittered lattice of the task's atoms (ljforce's verification positions), as N*3 doubles. */
tess_status tess_md_positions(const tess_md_params *p, uint64_t seed, double *x);
/* The cell of the atom at x (3 doubles). */
long long tess_md_cell_of(const double *x, double box, long long s);
/* The cells buffer md_bin writes, atoms in increasing order within a cell. */
tess_status tess_md_bin_reference(const tess_md_params *p, const double *x, int32_t *cells);
/* md_list's outputs; *most as the buffer. */
void tess_md_list_reference(const tess_md_params *p, const double *x, const int32_t *cells, int32_t *list,
                            int32_t *most);

/* The Langevin noise of component k at a step: a standard normal deviate
 * made from a counter-based hash, the same in every generated kernel. */
double tess_md_noise(uint64_t seed, uint64_t step, uint64_t k);

/* The tolerance slot of the operators whose verify hook compares exactly
 * (md_bin, md_list, md_displace): only the scale of a planted error. */
double tess_md_exact_tolerance(const tess_op *op, const tess_task *t);

/* md_cell.h's arithmetic rounded step by step, as the float64 reference
 * rounds it: plain C compiled without contractions (tess_md_cpu_launch), or
 * CUDA's round-to-nearest intrinsics. */
#define TESS_MD_C_ROUNDING                                                                              \
    "#include <math.h>\n#define MD_FN static inline\n#define MD_MUL(a, b) ((a) * (b))\n"             \
    "#define MD_ADD(a, b) ((a) + (b))\n#define MD_SUB(a, b) ((a) - (b))"
#define TESS_MD_CUDA_ROUNDING                                                                           \
    "#define MD_FN static __device__ __forceinline__\n#define MD_MUL __dmul_rn\n#define MD_ADD __dadd_rn\n" \
    "#define MD_SUB __dsub_rn"
/* A C kernel's one launch of entry, compiled without floating-point
 * contractions (its counts and cells are compared exactly). */
void tess_md_cpu_launch(tess_kernel_source *out, const char *entry);
/* A cuda space of one parameter: threads per block, 64 to 512 (default 256). */
tess_status tess_md_cuda_block_space(tess_space **out);
/* A cuda space of threads per block for one block per chunk: 64 to 256 (default 128). */
tess_status tess_md_cuda_chunk_space(tess_space **out);
/* The chunks of n atoms. */
long long tess_md_chunks(long long n);
/* A cpu space of one parameter: OpenMP threads. */
tess_status tess_md_cpu_threads_space(const tess_device *dev, tess_space **out);

#endif
