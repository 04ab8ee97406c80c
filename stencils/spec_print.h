/* spec_print.h - printing expressions, in the .stencil syntax or as C (the
 * code generators' syntax, shared by C/OpenMP and CUDA). */
#ifndef TESS_SPEC_PRINT_H
#define TESS_SPEC_PRINT_H

#include <stdbool.h>
#include "spec.h"
#include "core/strbuf.h"

typedef struct tess_expr_printer {
    /* C: select(c, a, b) prints as (c ? a : b) and min, max, abs, sqrt as
     * tess_min, tess_max, tess_abs, tess_sqrt, which the generated code defines. */
    bool c_syntax;
    void (*ref)(tess_strbuf *b, const tess_expr *e, void *user);  /* NULL: the name as written */
    void (*num)(tess_strbuf *b, double v, void *user);            /* NULL: shortest decimal */
    void *user;
} tess_expr_printer;

/* Prints e with the parentheses its tree needs and no more (in C, also
 * around comparisons nested in comparisons). */
void tess_expr_print(tess_strbuf *b, const tess_expr *e, const tess_expr_printer *p);

#endif
