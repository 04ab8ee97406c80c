/* gen_cuda_internal.h - what the CUDA generator's files share. */
#ifndef TESS_GEN_CUDA_INTERNAL_H
#define TESS_GEN_CUDA_INTERNAL_H

#include <stdbool.h>
#include "core/strbuf.h"
#include "gen_cuda.h"

/* One config of one task, as the emitters see it. */
typedef struct tess_cuda_plan {
    const tess_spec *s;
    const tess_task *t;
    int bx, by, bz, px, py, chunk, unroll, min_blocks;
    int time_block;                      /* steps fused in one launch */
    bool stream, shared;
    bool staged[TESS_SPEC_MAX_FIELDS];   /* plane read from a shared tile */
    bool queue[TESS_SPEC_MAX_FIELDS];    /* column kept in registers */
    int qlo[TESS_SPEC_MAX_FIELDS], qhi[TESS_SPEC_MAX_FIELDS];
} tess_cuda_plan;

/* Kernel parameters: one pointer per field (and per scratch buffer). */
void tess_cuda_emit_params(tess_strbuf *b, const tess_cuda_plan *p, bool with_scratch);
/* Expression printer callback for numbers; user is the plan. */
void tess_cuda_print_number(tess_strbuf *b, double v, void *user);
/* The temporally blocked sweep (gen_cuda_tb.c): time_block steps per call. */
void tess_cuda_emit_tb_sweep(tess_strbuf *b, const tess_cuda_plan *p);

#endif
