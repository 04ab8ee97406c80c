/*
 * split.h - slab decomposition of a grid along its slowest axis, for runs
 * split over ranks (GPUs, or "ranks" in one process on the CPU).
 *
 * Each rank owns a slab of consecutive planes of the slowest axis and holds
 * halos of `depth` planes on each side that has a neighbour: the planes the
 * neighbours own that its updates read. The depth is the stencil's reach
 * along the axis times the steps one application fuses, times the
 * applications between two exchanges (a deeper halo trades redundant
 * computation for fewer exchanges). Pure arithmetic: nothing here runs or
 * allocates.
 */
#ifndef TESS_SPLIT_H
#define TESS_SPLIT_H

#include <stdint.h>
#include "space.h"

typedef struct tess_slab {
    int64_t lo, hi;           /* owned planes [lo, hi) */
    int64_t mem_lo, mem_hi;   /* planes held: the owned ones and the halos, [mem_lo, mem_hi) */
} tess_slab;

typedef struct tess_split_plan {
    int ranks;
    int64_t planes;           /* extent of the split axis */
    int depth;                /* halo planes on each side with a neighbour */
    tess_slab slab[TESS_SPLIT_MAX_RANKS];
} tess_split_plan;

/* Splits `planes` planes into `ranks` slabs as even as they come (the first
 * planes % ranks slabs one plane thicker) with halos of `depth` planes.
 * TESS_ERR_ARG, with a message naming the axis (`axis`: "z") and the sizes,
 * for ranks outside 1..TESS_SPLIT_MAX_RANKS or above the planes, and for a
 * slab thinner than the halo (its neighbour's halo would reach past it). */
tess_status tess_split_plan_make(int64_t planes, int ranks, int depth, const char *axis, tess_split_plan *out);

/* The planes [*a, *b) a launch reads to compute planes [lo, hi) of a
 * stencil that reaches `reach` planes (times its fused steps): `reach`
 * more on each side, except past the grid's edges, where the fixed boundary
 * band stands in for them. */
void tess_split_window(const tess_split_plan *p, int reach, int64_t lo, int64_t hi, int64_t *a, int64_t *b);

/* The overlap parameters of a split run as a search space:
 *   overlap         none: exchange, then each slab in one launch;
 *                   split: the interior launched while the halos are in
 *                   flight, then the boundary planes (default)
 *   halo_chunks     messages each halo travels in (1, 2, 4, 8)
 *   exchange_every  applications between exchanges (1, 2, 4, 8), the halo
 *                   that many times deeper; at most what the thinnest slab
 *                   of a split into `ranks` of `planes` allows for a step
 *                   depth of `step_depth` planes
 * A config text may leave parameters out (their defaults). Caller frees
 * with tess_space_destroy. */
tess_status tess_split_space_create(int64_t planes, int ranks, int step_depth, tess_space **out);

#endif
