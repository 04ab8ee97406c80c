/* heat3d.h - the 3D 7-point heat stencil: out = in + alpha * laplacian(in)
 * on the interior, out = in on the boundary (fixed values). Buffers: in, out.
 * The operator (heat3d.c) dispatches to a code generator per backend. */
#ifndef TESS_HEAT3D_H
#define TESS_HEAT3D_H

#include "core/op.h"

#define TESS_HEAT3D_ALPHA 0.1   /* diffusion number, stable for alpha <= 1/6 */

/* C/OpenMP generator (heat3d_cpu.c). */
tess_status tess_heat3d_cpu_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out);
tess_status tess_heat3d_cpu_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                                 const tess_config *c, tess_kernel_source *out);
/* CUDA generator (heat3d_cuda.c). */
tess_status tess_heat3d_cuda_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out);
tess_status tess_heat3d_cuda_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                                  const tess_config *c, tess_kernel_source *out);
/* The operator table (registered by tess_register_builtin). */
extern const tess_op tess_op_heat3d;

#endif
