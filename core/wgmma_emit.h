/*
 * wgmma_emit.h - the CUDA text of one warpgroup MMA of sm_90a,
 * wgmma.mma_async m64nNk16 (k32 for e4m3) with f32 accumulators, as a device function: its
 * inline asm lists one operand per accumulator, so it is generated for N.
 * The function takes the accumulators `float (&d)[N/2]`, A (a shared-memory
 * descriptor, or the thread's four registers of a 64 x 16 fragment), B's
 * descriptor and scale_d (0: d = A B, else d += A B). The primitives around
 * it (descriptors, fences, barriers, TMA) are in templates/hopper.cuh.
 */
#ifndef TESS_WGMMA_EMIT_H
#define TESS_WGMMA_EMIT_H

#include <stdbool.h>
#include "strbuf.h"
#include "types.h"

typedef struct tess_wgmma_shape {
    const char *name;   /* the device function's name */
    int n;              /* N: 8..256, a multiple of 8 */
    tess_dtype in;      /* TESS_BF16, TESS_F16 or TESS_E4M3 (K-major operands only) */
    bool a_registers;   /* A from registers (else from shared memory, K-major) */
    bool b_mn_major;    /* B N-major in shared memory (imm-trans-b 1), else K-major */
} tess_wgmma_shape;

void tess_wgmma_emit(tess_strbuf *b, const tess_wgmma_shape *w);

/* The K of one MMA for inputs of type in: 16, or 32 for e4m3. */
int tess_wgmma_k(tess_dtype in);

#endif
