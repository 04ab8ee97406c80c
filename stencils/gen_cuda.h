/* gen_cuda.h - CUDA code generation for stencil specs.
 *
 * Tunables: block_x, block_y, block_z (threads; block_z only without
 * streaming); ppt_x, ppt_y (points per thread, strided by the block so that
 * loads stay coalesced); vec (points per vector along x: aligned vector
 * loads and stores); stream (3D: 2.5D streaming, a block walks up z
 * keeping each field's column in a register queue) and chunk (the z range
 * one block walks); staging ("ldg": neighbours through the read-only cache,
 * "shared": each plane staged in shared memory with its halo; streaming
 * only in 3D; "async", 3D streaming on sm_80 and later: a ring of shared
 * tiles of the planes read, filled by asynchronous copies running prefetch
 * planes ahead); prefetch (with async: planes in flight); unroll (of the z loop; with time_block > 1, planes per
 * pass of the pipelined loop: 1 or 2); min_blocks (__launch_bounds__);
 * time_block (3D, steps > 1: steps fused in one launch, see gen_cuda_tb.c);
 * coefs (3D grids reading 2D fields, streaming: "regs", the windows of the
 * 2D fields in registers for the whole walk up z, or "shared", a tile of
 * each around the block in shared memory, loaded once, that each plane's
 * windows read).
 * Kernel ABI: __global__ void ENTRY(T0 *b0, T1 *b1, ...), one launch per
 * time_block steps (at most TESS_MAX_LAUNCHES launches). */
#ifndef TESS_GEN_CUDA_H
#define TESS_GEN_CUDA_H

#include "core/op.h"
#include "spec.h"

#define TESS_STENCIL_CUDA_SMEM_MAX 49152   /* static shared memory per block */
#define TESS_STENCIL_CUDA_TB_QUEUE_MAX 128   /* temporal blocking: queued values per thread */
/* Streaming with unroll above 4 (a whole turn of a long queue): at most this
 * many points per thread times planes per turn, the values the queues keep
 * live; beyond it they alone fill the registers and the loop spills. */
#define TESS_STENCIL_CUDA_TURN_MAX 40
#define TESS_STENCIL_CUDA_VEC_BYTES 16     /* the widest vector load */

/* What the space's constraints need: fixed for a spec and dtype (the
 * space keeps a copy). */
typedef struct tess_stencil_cuda_limits {
    int rank;
    int staged_bytes;      /* bytes per staged point, summed over the staged fields */
    int halo_x, halo_y;    /* tile growth for staging: lo + hi */
    int lo_x, hi_x;        /* reach along x, below and above */
    int max_field_bytes;   /* the widest field's element: vectors stay within 16 bytes */
    int steps;
    int tb_tile_bytes;     /* temporal blocking: shared bytes per tile point and level */
    int tb_queue;          /* temporal blocking: queued values per point and level */
    int tb_fields;         /* temporal blocking: fields with shared tiles */
    int ring_bytes;        /* staging=async: bytes per tile point, over the fields in the ring */
    int ring_fields;       /* staging=async: the fields in the ring */
    int ring_lo, ring_hi;  /* staging=async: planes below and above z the ring holds */
    int reads;             /* distinct neighbours (field and offset) a point reads, at most 64 */
    int coef_bytes;        /* 3D: bytes per tile point, over the 2D fields read (coefs=shared) */
    int coef_fields;       /* 3D: the 2D fields read */
} tess_stencil_cuda_limits;

void tess_stencil_cuda_limits_init(const tess_spec *s, tess_dtype real, tess_stencil_cuda_limits *lim);
tess_status tess_stencil_cuda_space(const tess_spec *s, const tess_task *t, const tess_device *dev,
                                    const tess_stencil_cuda_limits *lim, tess_space **out);
/* c must be a config of sp, the space built for t (configs that violate it
 * are refused). */
tess_status tess_stencil_cuda_emit(const tess_spec *s, const tess_task *t, const tess_space *sp,
                                   const tess_config *c, tess_kernel_source *out);

#endif
