/* spec_lex.c - the tokenizer of the .stencil format. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "spec_lex.h"

void spec_lex_init(spec_lexer *lx, const char *src, size_t len, const char *file) {
    memset(lx, 0, sizeof *lx);
    lx->src = lx->p = lx->line_start = src;
    lx->end = src + len;
    lx->file = file;
    lx->line = 1;
}

static tess_status lex_error(const spec_lexer *lx, const char *at, const char *msg) {
    return tess_error(TESS_ERR_FORMAT, "%s:%d:%d: %s", lx->file, lx->line, (int)(at - lx->line_start) + 1, msg);
}

static int is_ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Skips blanks and comments, and newlines while brackets are open. */
static void skip_space(spec_lexer *lx) {
    for (;;) {
        char c = *lx->p;
        if (c == ' ' || c == '\t' || c == '\r') {
            lx->p++;
        } else if (c == '#') {
            while (*lx->p && *lx->p != '\n') lx->p++;
        } else if (c == '\n' && lx->depth > 0) {
            lx->p++;
            lx->line++;
            lx->line_start = lx->p;
        } else {
            return;
        }
    }
}

/* Length of a number at p (digits, fraction, exponent), 0 if none. */
static int number_length(const char *p) {
    const char *q = p;
    while (isdigit((unsigned char)*q)) q++;
    if (*q == '.') {
        q++;
        while (isdigit((unsigned char)*q)) q++;
    }
    if (q == p || (q == p + 1 && *p == '.')) return 0;
    if (*q == 'e' || *q == 'E') {
        const char *e = q + 1;
        if (*e == '+' || *e == '-') e++;
        if (isdigit((unsigned char)*e)) {
            while (isdigit((unsigned char)*e)) e++;
            q = e;
        }
    }
    return (int)(q - p);
}

static tess_status lex_number(spec_lexer *lx, spec_token *t) {
    const char *start = lx->p;
    int n = number_length(start);
    const char *q = start + n;
    if (is_ident_char(*q) || *q == '.') {
        while (is_ident_char(*q) || *q == '.') q++;
        t->kind = TOK_WORD;
    } else {
        t->kind = TOK_NUMBER;
        t->num = strtod(start, NULL);
        if (!isfinite(t->num)) return lex_error(lx, start, "number out of range");
    }
    t->text = start;
    t->len = (int)(q - start);
    lx->p = q;
    return TESS_OK;
}

static tess_status lex_punct(spec_lexer *lx, spec_token *t) {
    static const char *const two[] = {"<=", ">=", "==", "!=", "&&", "||"};
    const char *p = lx->p;
    t->kind = TOK_PUNCT;
    t->text = p;
    for (size_t i = 0; i < sizeof two / sizeof two[0]; i++)
        if (p[0] == two[i][0] && p[1] == two[i][1]) {
            t->len = 2;
            lx->p += 2;
            return TESS_OK;
        }
    if (!*p || !strchr("=[](),+-*/<>!", *p)) {
        char msg[64];
        if (isprint((unsigned char)*p)) snprintf(msg, sizeof msg, "unexpected character '%c'", *p);
        else snprintf(msg, sizeof msg, "unexpected byte 0x%02x", (unsigned char)*p);
        return lex_error(lx, p, msg);
    }
    if (*p == '(' || *p == '[') lx->depth++;
    if ((*p == ')' || *p == ']') && lx->depth > 0) lx->depth--;
    t->len = 1;
    lx->p++;
    return TESS_OK;
}

tess_status spec_lex_next(spec_lexer *lx, spec_token *t) {
    skip_space(lx);
    memset(t, 0, sizeof *t);
    t->line = lx->line;
    t->col = (int)(lx->p - lx->line_start) + 1;
    t->text = lx->p;
    char c = *lx->p;
    if (c == '\0') {
        if (lx->p != lx->end) return lex_error(lx, lx->p, "unexpected byte 0x00");
        t->kind = TOK_EOF;
        return TESS_OK;
    }
    if (c == '\n') {
        t->kind = TOK_NEWLINE;
        t->len = 1;
        lx->p++;
        lx->line++;
        lx->line_start = lx->p;
        return TESS_OK;
    }
    if (isalpha((unsigned char)c) || c == '_') {
        const char *q = lx->p;
        while (is_ident_char(*q)) q++;
        t->kind = TOK_IDENT;
        t->len = (int)(q - lx->p);
        lx->p = q;
        return TESS_OK;
    }
    if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)lx->p[1]))) return lex_number(lx, t);
    if (c == '"') {
        const char *q = lx->p + 1;
        while (*q && *q != '"' && *q != '\n') q++;
        if (*q != '"') return lex_error(lx, lx->p, "unterminated string");
        t->kind = TOK_STRING;
        t->text = lx->p + 1;
        t->len = (int)(q - lx->p - 1);
        lx->p = q + 1;
        return TESS_OK;
    }
    return lex_punct(lx, t);
}

int spec_tok_is(const spec_token *t, const char *text) {
    if (t->kind != TOK_PUNCT && t->kind != TOK_IDENT) return 0;
    return (size_t)t->len == strlen(text) && memcmp(t->text, text, (size_t)t->len) == 0;
}

void spec_tok_describe(const spec_token *t, char *buf, size_t len) {
    switch (t->kind) {
    case TOK_EOF: snprintf(buf, len, "end of file"); break;
    case TOK_NEWLINE: snprintf(buf, len, "end of line"); break;
    case TOK_STRING: snprintf(buf, len, "a string"); break;
    default: snprintf(buf, len, "'%.*s'", t->len > 32 ? 32 : t->len, t->text); break;
    }
}
