/* register.c - the pair-interaction operators of the reduction family. */
#include "core/op.h"
#include "ljforce.h"

tess_status tess_reductions_pairs_register(void) { return tess_op_register(&tess_op_ljforce); }
