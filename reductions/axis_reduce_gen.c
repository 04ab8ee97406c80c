/* axis_reduce_gen.c - the #defines both `reduce` generators print (axis_reduce_gen.h). */
#include "axis_reduce_gen.h"

void tess_reduce_print_defines(tess_strbuf *b, const tess_reduce_view *v, const char *neg_inf) {
    const bool max = v->kind == TESS_REDUCE_MAX;
    tess_strbuf_printf(b,
        "#define OUTER %lldLL\n#define N %lldLL\n#define INNER %lldLL\n"
        "#define INIT %s\n#define COMBINE(a, b) %s\n#define OMP_REDUCTION %s\n#define FINISH(a) %s\n",
        (long long)v->outer, (long long)v->n, (long long)v->inner, max ? neg_inf : "0.0f",
        max ? "fmaxf(a, b)" : "((a) + (b))", max ? "max" : "+",
        v->kind == TESS_REDUCE_MEAN ? "((a) * (1.0f / N))" : "(a)");
}
