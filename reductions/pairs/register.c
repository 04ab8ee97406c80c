/* register.c - the pair-interaction operators of the reduction family and
 * the other operators of a molecular-dynamics time step (md_step.h). */
#include "core/op.h"
#include "ljforce.h"
#include "md_step.h"

tess_status tess_reductions_pairs_register(void) {
    const tess_op *const ops[] = {&tess_op_ljforce, &tess_op_md_verlet, &tess_op_md_displace, &tess_op_md_bin,
                                  &tess_op_md_list};
    tess_status st = TESS_OK;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0] && !st; i++) st = tess_op_register(ops[i]);
    return st;
}
