/* register.c - the reduction family's operators. */
#include "core/op.h"
#include "sum.h"

tess_status tess_reductions_register(void) { return tess_op_register(&tess_op_sum); }
