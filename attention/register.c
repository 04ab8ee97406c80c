/* register.c - the attention family's operators: prefill and paged decode. */
#include "attention.h"

tess_status tess_attention_register(void) {
    tess_status st = tess_op_register(&tess_op_attention);
    return st ? st : tess_op_register(&tess_op_attention_decode);
}
