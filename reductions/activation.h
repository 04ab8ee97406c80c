/*
 * activation.h - elementwise activations, forward: gelu (the erf form),
 * gelu_tanh, silu, and the gated swiglu (silu(gate) * up, two inputs), over
 * a task of any rank taken as one vector, in f32 or bf16/f16 storage
 * computed in f32. One CUDA template (templates/activation.cu) and one
 * C/OpenMP generator (activation_cpu.c) share the formulas
 * (templates/activation.h); the float64 references and the operator tables
 * are in activation.c. Under an error budget the spaces gain shortcuts:
 * gelu's tanh-form approximation on |x| <= 3 with the exact path outside,
 * a fast tanh, a fast exp, -ffast-math on the cpu.
 */
#ifndef TESS_ACTIVATION_H
#define TESS_ACTIVATION_H

#include "core/op.h"

typedef enum tess_activation_kind { TESS_ACT_GELU, TESS_ACT_GELU_TANH, TESS_ACT_SILU, TESS_ACT_SWIGLU } tess_activation_kind;

/* What an activation's op->data points to. */
typedef struct tess_activation_info {
    tess_activation_kind kind;
    const char *macro;     /* the template's ACT_ macro */
    const char *shortcut;  /* the CUDA space's shortcut parameter ("approx", "fast_tanh", "fast_exp") */
    int ninputs;           /* 1, or 2 for the gated form */
} tess_activation_info;

static inline const tess_activation_info *tess_activation_of(const tess_op *op) { return op->data; }

tess_status tess_activation_cpu_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out);
tess_status tess_activation_cpu_emit(const tess_op *op, const tess_task *t, const tess_device *dev,
                                     const tess_space *s, const tess_config *c, tess_kernel_source *out);
tess_status tess_activation_cuda_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out);
tess_status tess_activation_cuda_emit(const tess_op *op, const tess_task *t, const tess_device *dev,
                                      const tess_space *s, const tess_config *c, tess_kernel_source *out);

extern const tess_op tess_op_gelu, tess_op_gelu_tanh, tess_op_silu, tess_op_swiglu;

#endif
