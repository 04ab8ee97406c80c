/* spec_lex.h - the tokenizer of the .stencil format (internal to the parser). */
#ifndef TESS_SPEC_LEX_H
#define TESS_SPEC_LEX_H

#include <stddef.h>
#include "core/tessera.h"

typedef enum spec_tok_kind {
    TOK_EOF,
    TOK_NEWLINE,   /* ends a declaration or statement (not inside brackets) */
    TOK_IDENT,
    TOK_NUMBER,
    TOK_WORD,      /* starts with a digit but is no number: "2d", "256x256x80" */
    TOK_STRING,    /* "..." (text excludes the quotes) */
    TOK_PUNCT      /* = [ ] ( ) , + - * / < <= > >= == != && || ! */
} spec_tok_kind;

typedef struct spec_token {
    spec_tok_kind kind;
    const char *text;   /* into the source */
    int len;
    double num;         /* TOK_NUMBER */
    int line, col;
} spec_token;

typedef struct spec_lexer {
    const char *src;    /* NUL-terminated */
    const char *end;    /* src + its length: a NUL before it is a stray byte */
    const char *p;
    const char *file;
    int line;
    const char *line_start;
    int depth;          /* open brackets: newlines inside them are skipped */
} spec_lexer;

void spec_lex_init(spec_lexer *lx, const char *src, size_t len, const char *file);
/* Reads the next token; a malformed one fails with "file:line:col: message". */
tess_status spec_lex_next(spec_lexer *lx, spec_token *t);
/* Whether t is the punctuation or identifier `text`. */
int spec_tok_is(const spec_token *t, const char *text);
/* A short description of t for messages: "'foo'", "end of line". */
void spec_tok_describe(const spec_token *t, char *buf, size_t len);

#endif
