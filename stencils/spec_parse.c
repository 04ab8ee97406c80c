/* spec_parse.c - the parser of the .stencil format (grammar in
 * stencils/README.md). It builds the spec through the C API, attaching
 * source positions, and finishes it; every error reads "file:line:col: ...". */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "core/fsutil.h"
#include "spec.h"
#include "spec_lex.h"

#define MAX_NESTING 200

typedef struct parser {
    spec_lexer lx;
    spec_token tok;
    tess_spec *spec;
    const char *file;
    int depth;
    bool seen_grid, seen_halo, seen_boundary, seen_steps;
} parser;

static tess_status perr(const parser *ps, const spec_token *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static tess_status perr(const parser *ps, const spec_token *t, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tess_error(TESS_ERR_FORMAT, "%s:%d:%d: %s", ps->file, t->line, t->col, msg);
}

static tess_status advance(parser *ps) { return spec_lex_next(&ps->lx, &ps->tok); }

static tess_status expected(const parser *ps, const char *what) {
    char found[48];
    spec_tok_describe(&ps->tok, found, sizeof found);
    return perr(ps, &ps->tok, "expected %s but found %s", what, found);
}

static tess_status expect_punct(parser *ps, const char *text) {
    if (ps->tok.kind != TOK_PUNCT || !spec_tok_is(&ps->tok, text)) {
        char what[16];
        snprintf(what, sizeof what, "'%s'", text);
        return expected(ps, what);
    }
    return advance(ps);
}

static tess_status expect_line_end(parser *ps) {
    if (ps->tok.kind == TOK_EOF) return TESS_OK;
    if (ps->tok.kind != TOK_NEWLINE) return expected(ps, "end of line");
    return advance(ps);
}

/* Copies an identifier token into name (too long ones fail here). */
static tess_status take_ident(parser *ps, const char *what, char name[TESS_SPEC_NAME_MAX]) {
    if (ps->tok.kind != TOK_IDENT) return expected(ps, what);
    if (ps->tok.len >= TESS_SPEC_NAME_MAX)
        return perr(ps, &ps->tok, "name '%.*s...' is longer than %d characters", 16, ps->tok.text,
                    TESS_SPEC_NAME_MAX - 1);
    memcpy(name, ps->tok.text, (size_t)ps->tok.len);
    name[ps->tok.len] = '\0';
    return advance(ps);
}

static tess_status take_int(parser *ps, const char *what, int lo, int hi, int *out) {
    spec_token t = ps->tok;
    if (t.kind != TOK_NUMBER || t.num != floor(t.num)) return expected(ps, what);
    if (t.num < lo || t.num > hi) return perr(ps, &t, "%s must be between %d and %d", what, lo, hi);
    *out = (int)t.num;
    return advance(ps);
}

static tess_status take_signed_number(parser *ps, double *out) {
    double sign = 1;
    if (spec_tok_is(&ps->tok, "-") || spec_tok_is(&ps->tok, "+")) {
        sign = ps->tok.text[0] == '-' ? -1 : 1;
        tess_status st = advance(ps);
        if (st) return st;
    }
    if (ps->tok.kind != TOK_NUMBER) return expected(ps, "a number");
    *out = sign * ps->tok.num;
    return advance(ps);
}

static void mark(parser *ps, const spec_token *t) { tess_spec_set_position(ps->spec, t->line, t->col); }

/* ---- expressions ------------------------------------------------------------ */

static tess_status parse_expr(parser *ps, tess_expr **out);

static tess_expr *at(tess_expr *e, const spec_token *t) {
    if (e) {
        e->line = t->line;
        e->col = t->col;
    }
    return e;
}

/* The result of a constructor: NULL means it failed with a message. */
static tess_status built(const parser *ps, const spec_token *t, tess_expr *e, tess_expr **out) {
    *out = e;
    if (e) return TESS_OK;
    char msg[200];
    snprintf(msg, sizeof msg, "%s", tess_errmsg());
    return perr(ps, t, "%s", msg);
}

static tess_status parse_offsets(parser *ps, int *off, int *n) {
    *n = 0;
    tess_status st = advance(ps);   /* '[' */
    while (!st) {
        if (*n == TESS_SPEC_MAX_RANK) return perr(ps, &ps->tok, "at most %d offsets", TESS_SPEC_MAX_RANK);
        int sign = 1;
        if (spec_tok_is(&ps->tok, "-") || spec_tok_is(&ps->tok, "+")) {
            sign = ps->tok.text[0] == '-' ? -1 : 1;
            if ((st = advance(ps))) return st;
        }
        spec_token number = ps->tok;
        if (number.kind != TOK_NUMBER || number.num != floor(number.num)) return expected(ps, "an integer offset");
        if (number.num > TESS_SPEC_MAX_OFFSET)
            return perr(ps, &number, "offset %s%.0f is not between -%d and %d", sign < 0 ? "-" : "", number.num,
                        TESS_SPEC_MAX_OFFSET, TESS_SPEC_MAX_OFFSET);
        off[(*n)++] = sign * (int)number.num;
        if ((st = advance(ps))) return st;
        if (spec_tok_is(&ps->tok, "]")) return advance(ps);
        st = expect_punct(ps, ",");
    }
    return st;
}

static tess_status parse_call(parser *ps, const spec_token *name, tess_expr **out) {
    int fn = -1;
    for (int f = TESS_FN_MIN; f <= TESS_FN_SELECT; f++)
        if ((size_t)name->len == strlen(tess_fn_name(f)) && !memcmp(name->text, tess_fn_name(f), (size_t)name->len))
            fn = f;
    if (fn < 0) return perr(ps, name, "unknown function '%.*s' (min, max, abs, sqrt, select)", name->len, name->text);
    tess_expr *args[3] = {NULL, NULL, NULL};
    int n = 0;
    tess_status st = advance(ps);   /* '(' */
    while (!st && !spec_tok_is(&ps->tok, ")")) {
        if (n == 3) {
            st = perr(ps, &ps->tok, "too many arguments to %s", tess_fn_name(fn));
            break;
        }
        if ((st = parse_expr(ps, &args[n]))) break;
        n++;
        if (!spec_tok_is(&ps->tok, ")")) st = expect_punct(ps, ",");
    }
    if (!st && n != tess_fn_arity(fn))
        st = perr(ps, name, "%s takes %d argument%s, not %d", tess_fn_name(fn), tess_fn_arity(fn),
                  tess_fn_arity(fn) == 1 ? "" : "s", n);
    if (st) {
        for (int i = 0; i < n; i++) tess_expr_free(args[i]);
        return st;
    }
    st = built(ps, name, at(tess_expr_call(fn, n, args), name), out);
    if (!st && (st = advance(ps))) {   /* past ')' */
        tess_expr_free(*out);
        *out = NULL;
    }
    return st;
}

static tess_status parse_primary(parser *ps, tess_expr **out) {
    *out = NULL;
    spec_token t = ps->tok;
    tess_status st;
    if (t.kind == TOK_NUMBER) {
        if ((st = advance(ps))) return st;
        return built(ps, &t, at(tess_expr_num(t.num), &t), out);
    }
    if (t.kind == TOK_IDENT) {
        char name[TESS_SPEC_NAME_MAX];
        if ((st = take_ident(ps, "a name", name))) return st;
        if (spec_tok_is(&ps->tok, "(")) return parse_call(ps, &t, out);
        int off[TESS_SPEC_MAX_RANK], n = 0;
        if (spec_tok_is(&ps->tok, "[") && (st = parse_offsets(ps, off, &n))) return st;
        return built(ps, &t, at(tess_expr_ref(name, n, off), &t), out);
    }
    if (spec_tok_is(&t, "(")) {
        if ((st = advance(ps)) || (st = parse_expr(ps, out))) return st;
        if ((st = expect_punct(ps, ")"))) {
            tess_expr_free(*out);
            *out = NULL;
        }
        return st;
    }
    if (t.kind == TOK_WORD) return perr(ps, &t, "malformed number '%.*s'", t.len > 32 ? 32 : t.len, t.text);
    return expected(ps, "an expression");
}

static tess_status parse_unary(parser *ps, tess_expr **out) {
    spec_token t = ps->tok;
    bool neg = spec_tok_is(&t, "-"), not = spec_tok_is(&t, "!");
    *out = NULL;
    if (!neg && !not && !spec_tok_is(&t, "+")) return parse_primary(ps, out);
    if (++ps->depth > MAX_NESTING) return perr(ps, &t, "expression nested too deeply");
    tess_expr *a = NULL;
    tess_status st = advance(ps);
    if (!st) st = parse_unary(ps, &a);
    ps->depth--;
    if (st) return st;
    if (!neg && !not) {
        *out = a;
        return TESS_OK;
    }
    return built(ps, &t, at(neg ? tess_expr_neg(a) : tess_expr_not(a), &t), out);
}

/* Binary operators by precedence level, loosest first. */
static const struct {
    const char *text;
    tess_binop op;
    int level;
} binops[] = {
    {"||", TESS_BIN_OR, 0}, {"&&", TESS_BIN_AND, 1},
    {"==", TESS_BIN_EQ, 2}, {"!=", TESS_BIN_NE, 2}, {"<", TESS_BIN_LT, 2}, {"<=", TESS_BIN_LE, 2},
    {">", TESS_BIN_GT, 2}, {">=", TESS_BIN_GE, 2},
    {"+", TESS_BIN_ADD, 3}, {"-", TESS_BIN_SUB, 3}, {"*", TESS_BIN_MUL, 4}, {"/", TESS_BIN_DIV, 4},
};
#define UNARY_LEVEL 5

static tess_status parse_binary(parser *ps, int level, tess_expr **out) {
    *out = NULL;
    if (level == UNARY_LEVEL) return parse_unary(ps, out);
    tess_expr *lhs = NULL;
    tess_status st = parse_binary(ps, level + 1, &lhs);
    while (!st) {
        int found = -1;
        for (size_t i = 0; i < sizeof binops / sizeof binops[0]; i++)
            if (binops[i].level == level && ps->tok.kind == TOK_PUNCT && spec_tok_is(&ps->tok, binops[i].text))
                found = (int)i;
        if (found < 0) break;
        spec_token t = ps->tok;
        tess_expr *rhs = NULL;
        if ((st = advance(ps)) || (st = parse_binary(ps, level + 1, &rhs))) break;
        st = built(ps, &t, at(tess_expr_bin(binops[found].op, lhs, rhs), &t), &lhs);
        if (st) return st;   /* the constructor freed both operands */
    }
    if (st) {
        tess_expr_free(lhs);
        return st;
    }
    *out = lhs;
    return TESS_OK;
}

static tess_status parse_expr(parser *ps, tess_expr **out) {
    *out = NULL;
    if (++ps->depth > MAX_NESTING) return perr(ps, &ps->tok, "expression nested too deeply");
    tess_status st = parse_binary(ps, 0, out);
    ps->depth--;
    return st;
}

/* ---- constant expressions (parameter values) ---------------------------------- */

static tess_status const_value(const parser *ps, const tess_expr *e, double *v) {
    double a[3];
    for (int i = 0; i < e->nargs; i++) {
        tess_status st = const_value(ps, e->arg[i], &a[i]);
        if (st) return st;
    }
    if (e->kind == TESS_EXPR_NUM) {
        *v = e->num;
    } else if (e->kind == TESS_EXPR_REF) {
        const tess_spec *s = ps->spec;
        int p = -1;
        for (int i = 0; i < s->nparams; i++)
            if (strcmp(s->param[i].name, e->name) == 0) p = i;
        if (p < 0 || e->noff)
            return tess_error(TESS_ERR_FORMAT, "%s:%d:%d: a parameter's value may use only numbers and "
                              "parameters declared before it ('%s' is none)", ps->file, e->line, e->col, e->name);
        *v = s->param[p].value;
    } else {
        *v = tess_spec_apply(e, a);
    }
    return TESS_OK;
}

/* ---- declarations ---------------------------------------------------------------- */

static tess_status once(parser *ps, const spec_token *kw, bool *seen) {
    if (*seen) return perr(ps, kw, "'%.*s' is declared twice", kw->len, kw->text);
    *seen = true;
    return TESS_OK;
}

static tess_status parse_grid(parser *ps, const spec_token *kw) {
    tess_status st = once(ps, kw, &ps->seen_grid);
    if (st) return st;
    spec_token t = ps->tok;
    int64_t shape[TESS_SPEC_MAX_RANK + 1];
    int rank = 0;
    const char *p = t.text, *end = t.text + t.len;
    bool ok = t.kind == TOK_WORD || t.kind == TOK_NUMBER;
    while (ok && p < end && rank <= TESS_SPEC_MAX_RANK) {
        int64_t v = 0;
        const char *d = p;
        while (p < end && *p >= '0' && *p <= '9' && v <= (1LL << 31)) v = v * 10 + (*p++ - '0');
        ok = p > d && (p == end || (*p == 'x' && p + 1 < end));
        shape[rank++] = v;
        if (ok && p < end) p++;
    }
    if (!ok || p != end || rank < 2 || rank > TESS_SPEC_MAX_RANK)
        return perr(ps, &t, "expected a 2D or 3D shape such as 256x256x256");
    mark(ps, &t);
    if ((st = tess_spec_set_grid(ps->spec, shape, rank))) return st;
    return advance(ps);
}

static tess_status parse_boundary(parser *ps, const spec_token *kw) {
    tess_status st = once(ps, kw, &ps->seen_boundary);
    if (st) return st;
    if (spec_tok_is(&ps->tok, "fixed")) return advance(ps);
    if (!spec_tok_is(&ps->tok, "periodic")) return expected(ps, "'fixed' or 'periodic'");
    if ((st = advance(ps))) return st;
    if (ps->tok.kind != TOK_IDENT) return expected(ps, "an axis (x, y or z)");
    while (!st && ps->tok.kind == TOK_IDENT) {
        if (ps->tok.len != 1) return expected(ps, "an axis (x, y or z)");
        mark(ps, &ps->tok);
        if (!(st = tess_spec_set_periodic(ps->spec, ps->tok.text[0]))) st = advance(ps);
    }
    return st;
}

static tess_status parse_field(parser *ps) {
    spec_token t = ps->tok;
    char name[TESS_SPEC_NAME_MAX];
    tess_status st = take_ident(ps, "a field name", name);
    if (st) return st;
    tess_spec_type type = TESS_TYPE_REAL;
    if (spec_tok_is(&ps->tok, "real") || spec_tok_is(&ps->tok, "f32") || spec_tok_is(&ps->tok, "f64")) {
        type = spec_tok_is(&ps->tok, "real") ? TESS_TYPE_REAL : spec_tok_is(&ps->tok, "f32") ? TESS_TYPE_F32 : TESS_TYPE_F64;
        if ((st = advance(ps))) return st;
    }
    int rank = 0;
    if (ps->tok.kind == TOK_WORD && ps->tok.len == 2 && ps->tok.text[1] == 'd' &&
        (ps->tok.text[0] == '2' || ps->tok.text[0] == '3')) {
        rank = ps->tok.text[0] - '0';
        if ((st = advance(ps))) return st;
    }
    tess_spec_role role;
    if (spec_tok_is(&ps->tok, "in")) role = TESS_FIELD_IN;
    else if (spec_tok_is(&ps->tok, "coef")) role = TESS_FIELD_COEF;
    else if (spec_tok_is(&ps->tok, "out")) role = TESS_FIELD_OUT;
    else return expected(ps, "a role (in, coef or out)");
    mark(ps, &t);
    if ((st = tess_spec_add_field(ps->spec, name, type, rank, role)) || (st = advance(ps))) return st;
    bool seen_adv = false, seen_range = false;
    while (ps->tok.kind == TOK_IDENT) {
        spec_token kw = ps->tok;
        if (spec_tok_is(&kw, "advances")) {
            char in[TESS_SPEC_NAME_MAX];
            if ((st = once(ps, &kw, &seen_adv)) || (st = advance(ps)) ||
                (st = take_ident(ps, "the name of the field it advances", in)))
                return st;
            mark(ps, &kw);
            if ((st = tess_spec_set_advances(ps->spec, name, in))) return st;
        } else if (spec_tok_is(&kw, "range")) {
            double lo, hi;
            if ((st = once(ps, &kw, &seen_range)) || (st = advance(ps)) || (st = take_signed_number(ps, &lo)) ||
                (st = take_signed_number(ps, &hi)))
                return st;
            mark(ps, &kw);
            if ((st = tess_spec_set_range(ps->spec, name, lo, hi))) return st;
        } else {
            return expected(ps, "'advances', 'range' or end of line");
        }
    }
    return TESS_OK;
}

static tess_status parse_param(parser *ps) {
    spec_token t = ps->tok;
    char name[TESS_SPEC_NAME_MAX];
    tess_expr *e;
    double v;
    tess_status st = take_ident(ps, "a parameter name", name);
    if (st || (st = expect_punct(ps, "=")) || (st = parse_expr(ps, &e))) return st;
    st = const_value(ps, e, &v);
    tess_expr_free(e);
    if (st) return st;
    mark(ps, &t);
    return tess_spec_add_param(ps->spec, name, v);
}

static tess_status parse_statement(parser *ps) {
    spec_token t = ps->tok;
    char name[TESS_SPEC_NAME_MAX];
    tess_expr *e;
    tess_status st = take_ident(ps, "a declaration or a statement", name);
    if (st) return st;
    if (!spec_tok_is(&ps->tok, "=")) {
        if (spec_tok_is(&t, "stencil")) return perr(ps, &t, "'stencil' may appear only once, on the first line");
        return perr(ps, &t, "expected a declaration (grid, halo, boundary, steps, field, param) "
                    "or a statement 'name = expression'");
    }
    if ((st = advance(ps)) || (st = parse_expr(ps, &e))) return st;
    mark(ps, &t);
    return tess_spec_add_statement(ps->spec, name, e);
}

static tess_status parse_line(parser *ps) {
    spec_token kw = ps->tok;
    tess_status st = TESS_OK;
    if (spec_tok_is(&kw, "grid") || spec_tok_is(&kw, "halo") || spec_tok_is(&kw, "boundary") ||
        spec_tok_is(&kw, "steps") || spec_tok_is(&kw, "field") || spec_tok_is(&kw, "param")) {
        if ((st = advance(ps))) return st;
        int v;
        if (spec_tok_is(&kw, "grid")) st = parse_grid(ps, &kw);
        else if (spec_tok_is(&kw, "boundary")) st = parse_boundary(ps, &kw);
        else if (spec_tok_is(&kw, "field")) st = parse_field(ps);
        else if (spec_tok_is(&kw, "param")) st = parse_param(ps);
        else if (spec_tok_is(&kw, "halo")) {
            mark(ps, &ps->tok);
            if (!(st = once(ps, &kw, &ps->seen_halo)) && !(st = take_int(ps, "the halo width", 0, TESS_SPEC_MAX_REACH, &v)))
                st = tess_spec_set_halo(ps->spec, v);
        } else {
            mark(ps, &ps->tok);
            if (!(st = once(ps, &kw, &ps->seen_steps)) && !(st = take_int(ps, "the number of steps", 1, TESS_SPEC_MAX_STEPS, &v)))
                st = tess_spec_set_steps(ps->spec, v);
        }
    } else {
        st = parse_statement(ps);
    }
    return st ? st : expect_line_end(ps);
}

static tess_status parse_header(parser *ps) {
    tess_status st;
    while (ps->tok.kind == TOK_NEWLINE)
        if ((st = advance(ps))) return st;
    if (!spec_tok_is(&ps->tok, "stencil")) return expected(ps, "'stencil NAME' first");
    if ((st = advance(ps))) return st;
    spec_token t = ps->tok;
    char name[TESS_SPEC_NAME_MAX + 8];
    if (t.kind != TOK_IDENT) return expected(ps, "the stencil's name");
    snprintf(name, sizeof name, "%.*s", t.len > TESS_SPEC_NAME_MAX + 6 ? TESS_SPEC_NAME_MAX + 6 : t.len, t.text);
    if (tess_spec_create(name, &ps->spec) != TESS_OK) {
        char msg[200];
        snprintf(msg, sizeof msg, "%s", tess_errmsg());
        return perr(ps, &t, "%s", msg);
    }
    if ((st = tess_spec_set_file(ps->spec, ps->file)) || (st = advance(ps))) return st;
    if (ps->tok.kind == TOK_STRING) {
        char *summary = strndup(ps->tok.text, (size_t)ps->tok.len);
        if (!summary) return tess_error(TESS_ERR_NOMEM, "out of memory");
        st = tess_spec_set_summary(ps->spec, summary);
        free(summary);
        if (st || (st = advance(ps))) return st;
    }
    return expect_line_end(ps);
}

tess_status tess_spec_parse(const char *text, size_t len, const char *file, tess_spec **out) {
    *out = NULL;
    parser ps;
    memset(&ps, 0, sizeof ps);
    ps.file = file ? file : "<text>";
    char *src = malloc(len + 1);
    if (!src) return tess_error(TESS_ERR_NOMEM, "out of memory reading %s", ps.file);
    memcpy(src, text, len);
    src[len] = '\0';
    spec_lex_init(&ps.lx, src, len, ps.file);
    tess_status st = advance(&ps);
    if (!st) st = parse_header(&ps);
    while (!st && ps.tok.kind != TOK_EOF) st = ps.tok.kind == TOK_NEWLINE ? advance(&ps) : parse_line(&ps);
    if (!st) st = tess_spec_finish(ps.spec);
    free(src);
    if (st) {
        tess_spec_destroy(ps.spec);
        return st;
    }
    *out = ps.spec;
    return TESS_OK;
}

tess_status tess_spec_load(const char *path, tess_spec **out) {
    *out = NULL;
    char *text;
    size_t n;
    tess_status st = tess_read_file(path, &text, &n);
    if (st) return st;
    st = tess_spec_parse(text, n, path, out);
    free(text);
    return st;
}
