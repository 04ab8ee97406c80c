/* cpu_common.h - what the family's C/OpenMP generators share: the thread
 * counts their spaces offer and the fast-math shortcut. */
#ifndef TESS_REDUCTIONS_CPU_COMMON_H
#define TESS_REDUCTIONS_CPU_COMMON_H

#include "core/device.h"
#include "core/op.h"
#include "core/space.h"

/* Adds parameter "threads": the powers of two below the device's cores,
 * then the cores (the default). */
tess_status tess_cpu_add_threads(tess_space *s, const tess_device *dev);

/* Compiles src with -ffast-math. Its vectorized exp, erf and tanh come from
 * glibc's libmvec, which the kernel then links itself (the process that
 * loads it need not have it). */
void tess_cpu_set_fast_math(tess_kernel_source *src);

#endif
