/* split_internal.h - the state of a split stencil run (api_split.c), shared
 * with the process-per-GPU driver (api_split_procs.c), which runs one rank
 * of it in each forked process. */
#ifndef TESS_SPLIT_INTERNAL_H
#define TESS_SPLIT_INTERNAL_H

#include <stdbool.h>
#include "core/halo.h"
#include "core/split.h"

#define SPLIT_MAX_BUFFERS 8

typedef struct split_run {
    tess_context *ctx;
    const char *op, *dtype, *backend;
    const tess_split_options *o;
    bool nccl;                              /* the nccl transport (cuda), else local (cpu) */
    int me;                                 /* the one rank this process runs, or -1: all of them */
    unsigned char nccl_id[TESS_HALO_NCCL_ID_BYTES];
    /* one rank per process: fills nccl_id (rank 0 makes it, the others get
     * it), called once the rank's kernels and arrays exist */
    tess_status (*share_id)(struct split_run *r, void *user);
    void *share_user;
    int ndim;
    int64_t shape[3];
    tess_split_plan plan;
    int reach;                              /* planes one application reaches: spec reach x fused steps */
    tess_buffer_info buf[SPLIT_MAX_BUFFERS];
    int nbuf;
    size_t plane_bytes[SPLIT_MAX_BUFFERS];  /* 0: a buffer over fewer axes, shared whole */
    void *const *fields;                    /* the caller's (host) */
    void *const *out;                       /* where the owned planes of the time levels go (host) */
    tess_kernel *mem;                       /* the kernel whose memory the arrays are (cuda), or NULL */
    void *shared[SPLIT_MAX_BUFFERS];        /* buffers over fewer axes, in the kernels' memory */
    void *local[TESS_SPLIT_MAX_RANKS][SPLIT_MAX_BUFFERS];
    void *stage[SPLIT_MAX_BUFFERS];
    int64_t stage_planes;
    int64_t kernel_planes[4 * TESS_SPLIT_MAX_RANKS];   /* the window extents dispatched */
    int kernels;
    tess_halo_transport *halo;
    tess_halo_msg *msg;
    int nmsg, cap_msg;
    tess_split_report *rep;
} split_run;

/* Runs r's applications for the ranks held here (all, or r->me), the
 * owned planes of the time levels copied to r->out at the end. */
tess_status tess_split_execute(split_run *r, long applications);
/* Runs each rank in a forked process on its own GPU (CUDA_VISIBLE_DEVICES:
 * the rank's entry of the caller's list, else its number), the nccl
 * transport between them; the time levels come back into r->fields. */
tess_status tess_split_run_processes(split_run *r, long applications);

#endif
