/* gen_cpu.h - C/OpenMP code generation for stencil specs.
 *
 * Tunables: tile_y, tile_z (3D) - the blocks of rows a thread updates at a
 * time; order (3D) - "zy" walks z tiles outermost, "yz" walks up the z
 * tiles of one band of rows before the next (planes stay in cache); simd -
 * `omp simd` on the innermost loop; threads; unroll - of the innermost loop.
 * Kernel ABI: void ENTRY(void *const *buffers), buffers in spec order. */
#ifndef TESS_GEN_CPU_H
#define TESS_GEN_CPU_H

#include "core/op.h"
#include "spec.h"

tess_status tess_stencil_cpu_space(const tess_spec *s, const tess_task *t, const tess_device *dev,
                                   tess_space **out);
tess_status tess_stencil_cpu_emit(const tess_spec *s, const tess_task *t, const tess_space *sp,
                                  const tess_config *c, tess_kernel_source *out);

#endif
