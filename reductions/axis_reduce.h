/*
 * axis_reduce.h - `reduce`: the sum, max or mean of a 3D task (extents
 * z,y,x) along one axis (attributes kind and axis): column sums of a field
 * over its levels (axis 0), zonal means over longitude (axis 2). Seen as
 * (outer, n, inner) with n the reduced extent, out[o][i] combines
 * x[o][0..n-1][i]; f32, or bf16/f16 storage accumulated in f32. The op
 * table and float64 reference are in axis_reduce.c, the generators in
 * axis_reduce_cpu.c and axis_reduce_cuda.c (templates/axis_reduce.cu).
 */
#ifndef TESS_AXIS_REDUCE_H
#define TESS_AXIS_REDUCE_H

#include "core/op.h"

typedef enum tess_reduce_kind { TESS_REDUCE_SUM, TESS_REDUCE_MAX, TESS_REDUCE_MEAN } tess_reduce_kind;

/* A task's view: its kind and the extents around the reduced axis. */
typedef struct tess_reduce_view {
    tess_reduce_kind kind;
    int64_t outer, n, inner;
} tess_reduce_view;

tess_reduce_view tess_reduce_view_of(const tess_task *t);

tess_status tess_reduce_cpu_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out);
tess_status tess_reduce_cpu_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                                 const tess_config *c, tess_kernel_source *out);
tess_status tess_reduce_cuda_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out);
tess_status tess_reduce_cuda_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                                  const tess_config *c, tess_kernel_source *out);

extern const tess_op tess_op_reduce;

#endif
