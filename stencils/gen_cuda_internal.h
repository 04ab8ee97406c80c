/* gen_cuda_internal.h - what the CUDA generator's files share. */
#ifndef TESS_GEN_CUDA_INTERNAL_H
#define TESS_GEN_CUDA_INTERNAL_H

#include <stdbool.h>
#include "core/strbuf.h"
#include "gen_cuda.h"

#define TESS_CUDA_MAX_DZ TESS_SPEC_MAX_REACH   /* offsets reach at most this far once intermediates are inlined */

/* What each field needs. */
typedef struct tess_cuda_use {
    bool plane;      /* read in its own plane off the centre */
    bool column;     /* read off its own plane along its column */
    bool centre;     /* read anywhere on its column, centre included */
    int zlo, zhi;    /* column offsets, including the centre */
    bool offcol;     /* read off its column, in any plane */
    int ozlo, ozhi;  /* plane offsets of the reads off its column */
} tess_cuda_use;

void tess_cuda_uses(const tess_spec *s, tess_cuda_use use[TESS_SPEC_MAX_FIELDS]);

/* staging=async keeps the planes z - lo .. z + hi of the fields read off
 * their column (3D fields of a 3D spec) in a ring of shared tiles; a field
 * read along its column takes its queue's top plane from there too. Whether
 * field f is in the ring, and how far the ring reaches below and above z. */
bool tess_cuda_in_ring(const tess_spec *s, const tess_cuda_use use[TESS_SPEC_MAX_FIELDS], int f);
void tess_cuda_ring_reach(const tess_spec *s, const tess_cuda_use use[TESS_SPEC_MAX_FIELDS], int *lo, int *hi);

/* One config of one task, as the emitters see it. */
typedef struct tess_cuda_plan {
    const tess_spec *s;
    const tess_task *t;
    int bx, by, bz, px, py, vec, chunk, unroll, min_blocks;
    int time_block;                      /* steps fused in one launch */
    bool stream, shared;
    bool async;                          /* shared tiles filled by asynchronous copies, a ring of planes */
    int prefetch;                        /* async: planes in flight past the ones a step reads */
    int ring_lo, ring_hi;                /* async: the ring holds planes z - ring_lo .. z + ring_hi, read */
    int padx, padr;                      /* tile and window columns left / right of a vector: LO_X, HI_X rounded up to vec */
    bool staged[TESS_SPEC_MAX_FIELDS];   /* plane read from a shared tile */
    bool coef_tile[TESS_SPEC_MAX_FIELDS];   /* coefs=shared: a 2D field read from its tile, loaded once */
    bool queue[TESS_SPEC_MAX_FIELDS];    /* column kept in registers */
    /* Its own plane's centre read from the plane's window rather than the
     * queue, so that intermediates a thread computes at several offsets
     * read each point's value under one name (and are computed once). */
    bool centre_in_window[TESS_SPEC_MAX_FIELDS];
    int qlo[TESS_SPEC_MAX_FIELDS], qhi[TESS_SPEC_MAX_FIELDS];
    /* Planes z+dz (index dz + TESS_CUDA_MAX_DZ) of field f read through a register window from global memory. */
    bool gwin[TESS_SPEC_MAX_FIELDS][2 * TESS_CUDA_MAX_DZ + 1];
    /* Planes z+dz of field f read through a register window from its shared tile. */
    bool twin[TESS_SPEC_MAX_FIELDS][2 * TESS_CUDA_MAX_DZ + 1];
} tess_cuda_plan;

/* staging=async: the bytes of field f's ring of tiles (a multiple of 16). */
long tess_cuda_ring_field_bytes(const tess_cuda_plan *p, int f);
/* Kernel parameters: one pointer per field (and per scratch buffer). */
void tess_cuda_emit_params(tess_strbuf *b, const tess_cuda_plan *p, bool with_scratch);
/* Expression printer callback for numbers; user is the plan. */
void tess_cuda_print_number(tess_strbuf *b, double v, void *user);
/* Settles where each field's values come from (staged, queue, windows). */
void tess_cuda_plan_sources(tess_cuda_plan *p);
/* The sweep of one step (gen_cuda_sweep.c). */
void tess_cuda_emit_sweep(tess_strbuf *b, const tess_cuda_plan *p);
/* The temporally blocked sweep (gen_cuda_tb.c): time_block steps per call. */
/* The plane offsets dz (ascending) at which some update reads field f off
 * its column, that is, through temporal blocking's shared tiles; returns
 * their number. */
int tess_cuda_tb_planes(const tess_spec *s, int f, int dz[2 * TESS_CUDA_MAX_DZ + 1]);
/* Planes between temporal blocking's levels: level L computes plane
 * i - L * lag at iteration i; above every plane offset read off a column. */
int tess_cuda_tb_lag(const tess_spec *s);
/* Planes in a level's register queue of a point: z - LO_Z .. z + lag. */
int tess_cuda_tb_queue_len(const tess_spec *s);
/* Temporal blocking: the bytes of field f's shared tiles (a multiple of 16). */
long tess_cuda_tb_field_bytes(const tess_cuda_plan *p, int f);
void tess_cuda_emit_tb_sweep(tess_strbuf *b, const tess_cuda_plan *p);

#endif
