/* sum.h - sum of a vector: out[0] = sum(in). Buffers: in, out (1 element),
 * and a scratch buffer for partial sums (sum_scratch_elements). The operator
 * (sum.c) dispatches to a code generator per backend. */
#ifndef TESS_SUM_H
#define TESS_SUM_H

#include "core/op.h"

/* Elements of the scratch buffer of partial sums a generator may use. */
#define TESS_SUM_SCRATCH 65536

tess_status tess_sum_cpu_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out);
tess_status tess_sum_cpu_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                              const tess_config *c, tess_kernel_source *out);
tess_status tess_sum_cuda_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out);
tess_status tess_sum_cuda_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                               const tess_config *c, tess_kernel_source *out);
/* The operator table (registered by tess_register_builtin). */
extern const tess_op tess_op_sum;

#endif
