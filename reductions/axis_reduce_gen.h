/* axis_reduce_gen.h - what the `reduce` generators share: the #defines of
 * a task's view and kind (axis_reduce_gen.c). */
#ifndef TESS_AXIS_REDUCE_GEN_H
#define TESS_AXIS_REDUCE_GEN_H

#include "core/strbuf.h"
#include "axis_reduce.h"

/* Prints OUTER, N, INNER, INIT, COMBINE, OMP_REDUCTION and FINISH; neg_inf
 * spells -infinity in the kernel's language. */
void tess_reduce_print_defines(tess_strbuf *b, const tess_reduce_view *v, const char *neg_inf);

#endif
