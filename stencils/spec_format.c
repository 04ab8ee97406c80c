/* spec_format.c - printing specs and expressions. */
#include <stdlib.h>
#include <string.h>
#include "spec_print.h"

/* Precedence levels, loosest first; primaries bind tightest. */
enum { LV_OR, LV_AND, LV_CMP, LV_ADD, LV_MUL, LV_UNARY, LV_PRIMARY };

static int level(const tess_expr *e) {
    if (e->kind == TESS_EXPR_NEG || e->kind == TESS_EXPR_NOT) return LV_UNARY;
    if (e->kind != TESS_EXPR_BIN) return LV_PRIMARY;
    switch ((tess_binop)e->op) {
    case TESS_BIN_OR: return LV_OR;
    case TESS_BIN_AND: return LV_AND;
    case TESS_BIN_ADD: case TESS_BIN_SUB: return LV_ADD;
    case TESS_BIN_MUL: case TESS_BIN_DIV: return LV_MUL;
    default: return LV_CMP;
    }
}

static void print_at(tess_strbuf *b, const tess_expr *e, int min_level, const tess_expr_printer *p);

static void print_node(tess_strbuf *b, const tess_expr *e, const tess_expr_printer *p) {
    char num[32];
    switch (e->kind) {
    case TESS_EXPR_NUM:
        if (p->num) {
            p->num(b, e->num, p->user);
        } else {
            tess_spec_number(e->num, num, sizeof num);
            tess_strbuf_puts(b, num);
        }
        break;
    case TESS_EXPR_REF:
        if (p->ref) {
            p->ref(b, e, p->user);
            break;
        }
        tess_strbuf_puts(b, e->name);
        for (int i = 0; i < e->noff; i++) tess_strbuf_printf(b, "%s%d", i ? "," : "[", e->woff[i]);
        if (e->noff) tess_strbuf_puts(b, "]");
        break;
    case TESS_EXPR_NEG:
    case TESS_EXPR_NOT:
        tess_strbuf_puts(b, e->kind == TESS_EXPR_NEG ? "-" : "!");
        /* "- -a", never "--a"; no parentheses, which would nest deeper than the text did */
        if (e->kind == TESS_EXPR_NEG && (e->arg[0]->kind == TESS_EXPR_NEG || (e->arg[0]->kind == TESS_EXPR_NUM && e->arg[0]->num < 0)))
            tess_strbuf_puts(b, " ");
        print_at(b, e->arg[0], LV_UNARY, p);
        break;
    case TESS_EXPR_BIN: {
        int lv = level(e);
        /* Left-associative. Comparisons share one level in the format, but
         * not in C, where they chain only inside parentheses. */
        print_at(b, e->arg[0], lv == LV_CMP && p->c_syntax ? LV_ADD : lv, p);
        tess_strbuf_printf(b, " %s ", tess_binop_text((tess_binop)e->op));
        print_at(b, e->arg[1], lv + 1, p);
        break;
    }
    case TESS_EXPR_CALL:
        if (p->c_syntax && e->op == TESS_FN_SELECT) {
            tess_strbuf_puts(b, "(");
            print_at(b, e->arg[0], LV_OR, p);
            tess_strbuf_puts(b, " ? ");
            print_at(b, e->arg[1], LV_OR, p);
            tess_strbuf_puts(b, " : ");
            print_at(b, e->arg[2], LV_OR, p);
            tess_strbuf_puts(b, ")");
            break;
        }
        tess_strbuf_printf(b, "%s%s(", p->c_syntax ? "tess_" : "", tess_fn_name((tess_fn)e->op));
        for (int i = 0; i < e->nargs; i++) {
            if (i) tess_strbuf_puts(b, ", ");
            print_at(b, e->arg[i], LV_OR, p);
        }
        tess_strbuf_puts(b, ")");
        break;
    }
}

static void print_at(tess_strbuf *b, const tess_expr *e, int min_level, const tess_expr_printer *p) {
    bool paren = level(e) < min_level;
    if (paren) tess_strbuf_puts(b, "(");
    print_node(b, e, p);
    if (paren) tess_strbuf_puts(b, ")");
}

void tess_expr_print(tess_strbuf *b, const tess_expr *e, const tess_expr_printer *p) {
    print_at(b, e, LV_OR, p);
}

static const char *type_name(tess_spec_type t) {
    return t == TESS_TYPE_F32 ? "f32" : t == TESS_TYPE_F64 ? "f64" : "real";
}

static const char *role_name(tess_spec_role r) {
    return r == TESS_FIELD_IN ? "in" : r == TESS_FIELD_COEF ? "coef" : "out";
}

tess_status tess_spec_format(const tess_spec *s, char **text) {
    tess_strbuf b = {0};
    char n1[32], n2[32];
    tess_strbuf_printf(&b, "stencil %s", s->name);
    if (s->summary && *s->summary) tess_strbuf_printf(&b, " \"%s\"", s->summary);
    tess_strbuf_puts(&b, "\n");
    if (s->rank) {
        tess_strbuf_puts(&b, "grid ");
        for (int a = 0; a < s->rank; a++) tess_strbuf_printf(&b, a ? "x%lld" : "%lld", (long long)s->shape[a]);
        tess_strbuf_puts(&b, "\n");
    }
    if (s->halo >= 0) tess_strbuf_printf(&b, "halo %d\n", s->halo);
    if (s->periodic_xyz) {
        tess_strbuf_puts(&b, "boundary periodic");
        for (int i = 2; i >= 0; i--)
            if (s->periodic_xyz >> i & 1u) tess_strbuf_printf(&b, " %c", "xyz"[i]);
        tess_strbuf_puts(&b, "\n");
    }
    if (s->steps != 1) tess_strbuf_printf(&b, "steps %d\n", s->steps);
    tess_strbuf_puts(&b, "\n");
    for (int i = 0; i < s->nfields; i++) {
        const tess_spec_field *f = &s->field[i];
        tess_strbuf_printf(&b, "field %s", f->name);
        if (f->type != TESS_TYPE_REAL) tess_strbuf_printf(&b, " %s", type_name(f->type));
        if (f->rank && f->rank != s->rank) tess_strbuf_printf(&b, " %dd", f->rank);
        tess_strbuf_printf(&b, " %s", role_name(f->role));
        if (f->advances_name[0]) tess_strbuf_printf(&b, " advances %s", f->advances_name);
        if (f->fill_lo != -1 || f->fill_hi != 1) {
            tess_spec_number(f->fill_lo, n1, sizeof n1);
            tess_spec_number(f->fill_hi, n2, sizeof n2);
            tess_strbuf_printf(&b, " range %s %s", n1, n2);
        }
        tess_strbuf_puts(&b, "\n");
    }
    for (int i = 0; i < s->nparams; i++) {
        tess_spec_number(s->param[i].value, n1, sizeof n1);
        /* A negative value prints as -v, which reads back as the same number. */
        tess_strbuf_printf(&b, "param %s = %s\n", s->param[i].name, n1);
    }
    tess_strbuf_puts(&b, "\n");
    tess_expr_printer p = {0};
    for (int i = 0; i < s->nstmts; i++) {
        tess_strbuf_printf(&b, "%s = ", s->stmt[i].target);
        tess_expr_print(&b, s->stmt[i].expr, &p);
        tess_strbuf_puts(&b, "\n");
    }
    return tess_strbuf_finish(&b, text);
}
