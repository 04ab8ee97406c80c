/* register.c - the reduction family's operators. */
#include "core/op.h"
#include "activation.h"
#include "axis_reduce.h"
#include "rowwise.h"
#include "sum.h"

tess_status tess_reductions_register(void) {
    const tess_op *const ops[] = {&tess_op_sum,          &tess_op_softmax,     &tess_op_layernorm, &tess_op_rmsnorm,
                                  &tess_op_gelu,         &tess_op_gelu_tanh,   &tess_op_silu,      &tess_op_swiglu,
                                  &tess_op_log_softmax,  &tess_op_add_rmsnorm, &tess_op_cross_entropy, &tess_op_reduce};
    tess_status st = TESS_OK;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0] && !st; i++) st = tess_op_register(ops[i]);
    return st;
}
