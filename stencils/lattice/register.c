/* register.c - the lattice Boltzmann operators of the stencil family. */
#include "lattice.h"

tess_status tess_stencils_lattice_register(void) {
    tess_status st = tess_op_register(&tess_op_lbm_d2q9);
    return st ? st : tess_op_register(&tess_op_lbm_d3q19);
}
