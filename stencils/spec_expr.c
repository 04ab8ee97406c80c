/* spec_expr.c - expression trees: constructors, operator names, and the
 * arithmetic every evaluator shares. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "spec.h"

static tess_expr *new_expr(tess_expr_kind kind) {
    tess_expr *e = calloc(1, sizeof *e);
    if (!e) tess_error(TESS_ERR_NOMEM, "out of memory building an expression");
    else e->kind = kind;
    return e;
}

tess_expr *tess_expr_num(double v) {
    if (!isfinite(v)) {
        tess_error(TESS_ERR_ARG, "a number in an expression must be finite");
        return NULL;
    }
    tess_expr *e = new_expr(TESS_EXPR_NUM);
    if (e) e->num = v;
    return e;
}

tess_expr *tess_expr_ref(const char *name, int noff, const int *off) {
    if (!name || !*name || strlen(name) >= TESS_SPEC_NAME_MAX) {
        tess_error(TESS_ERR_ARG, "invalid name '%.40s' in an expression", name ? name : "");
        return NULL;
    }
    if (noff < 0 || noff > TESS_SPEC_MAX_RANK) {
        tess_error(TESS_ERR_ARG, "'%s' takes at most %d offsets", name, TESS_SPEC_MAX_RANK);
        return NULL;
    }
    tess_expr *e = new_expr(TESS_EXPR_REF);
    if (!e) return NULL;
    strcpy(e->name, name);
    e->noff = noff;
    for (int i = 0; i < noff; i++) e->woff[i] = off[i];
    return e;
}

static tess_expr *with_args(tess_expr_kind kind, int op, int n, tess_expr *const *args) {
    bool ok = true;
    for (int i = 0; i < n; i++) ok &= args[i] != NULL;
    tess_expr *e = ok ? new_expr(kind) : NULL;
    if (!e) {
        for (int i = 0; i < n; i++) tess_expr_free(args[i]);
        return NULL;
    }
    e->op = op;
    e->nargs = n;
    for (int i = 0; i < n; i++) e->arg[i] = args[i];
    return e;
}

tess_expr *tess_expr_neg(tess_expr *a) { return with_args(TESS_EXPR_NEG, 0, 1, &a); }
tess_expr *tess_expr_not(tess_expr *a) { return with_args(TESS_EXPR_NOT, 0, 1, &a); }

tess_expr *tess_expr_bin(tess_binop op, tess_expr *a, tess_expr *b) {
    tess_expr *args[2] = {a, b};
    if ((unsigned)op > TESS_BIN_OR) {
        tess_error(TESS_ERR_ARG, "invalid binary operator %d", (int)op);
        tess_expr_free(a);
        tess_expr_free(b);
        return NULL;
    }
    return with_args(TESS_EXPR_BIN, (int)op, 2, args);
}

tess_expr *tess_expr_call(tess_fn fn, int nargs, tess_expr *const *args) {
    if ((unsigned)fn > TESS_FN_SELECT || nargs != tess_fn_arity(fn)) {
        if ((unsigned)fn > TESS_FN_SELECT) tess_error(TESS_ERR_ARG, "invalid function %d", (int)fn);
        else tess_error(TESS_ERR_ARG, "%s takes %d argument%s, not %d", tess_fn_name(fn),
                        tess_fn_arity(fn), tess_fn_arity(fn) == 1 ? "" : "s", nargs);
        for (int i = 0; i < nargs && i < 3; i++) tess_expr_free(args[i]);
        return NULL;
    }
    return with_args(TESS_EXPR_CALL, (int)fn, nargs, args);
}

void tess_expr_free(tess_expr *e) {
    if (!e) return;
    for (int i = 0; i < e->nargs; i++) tess_expr_free(e->arg[i]);
    free(e);
}

const char *tess_binop_text(tess_binop op) {
    static const char *const text[] = {"+", "-", "*", "/", "<", "<=", ">", ">=", "==", "!=", "&&", "||"};
    return (unsigned)op <= TESS_BIN_OR ? text[op] : "?";
}

const char *tess_fn_name(tess_fn fn) {
    static const char *const names[] = {"min", "max", "abs", "sqrt", "select"};
    return (unsigned)fn <= TESS_FN_SELECT ? names[fn] : "?";
}

int tess_fn_arity(tess_fn fn) {
    static const int arity[] = {2, 2, 1, 1, 3};
    return (unsigned)fn <= TESS_FN_SELECT ? arity[fn] : 0;
}

