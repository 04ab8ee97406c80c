/* register.c - the GEMM family's operators. */
#include "gemm.h"

tess_status tess_gemm_register(void) {
    tess_status st = tess_op_register(&tess_op_gemm);
    return st ? st : tess_op_register(&tess_op_conv2d);
}
