/* spec.c - building stencil specs through the C API, and small queries.
 * Expressions are in spec_expr.c, checking and lowering in spec_finish.c. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "spec.h"

/* Words a name may not take: the format's keywords, C and CUDA keywords and
 * built-ins, and the lower-case names the code generators use for their own
 * variables. Generators name everything else with TESS_/tess_ prefixes, in
 * capitals, or with a double underscore, which names here cannot have. */
static const char *const reserved_words[] = {
    /* the format */
    "stencil", "grid", "halo", "boundary", "fixed", "periodic", "steps", "field", "param", "in",
    "coef", "out", "real", "f32", "f64", "advances", "range", "min", "max", "abs", "sqrt", "select",
    /* C and CUDA */
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
    "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict",
    "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
    "unsigned", "void", "volatile", "while", "bool", "true", "false", "size_t", "ptrdiff_t",
    "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "fabs", "fabsf", "sqrtf", "fmin",
    "fmax", "fminf", "fmaxf", "main",
    /* generator variables */
    "x", "y", "z", "xt", "yt", "zt", "idx_t", "buffers", "step", "tid", "src", "dst",
};

static bool is_reserved(const char *name) {
    for (size_t i = 0; i < sizeof reserved_words / sizeof reserved_words[0]; i++)
        if (strcmp(name, reserved_words[i]) == 0) return true;
    if (strncmp(name, "tess", 4) == 0 || strncmp(name, "TESS", 4) == 0) return true;
    /* Names in capitals (two characters or more) are the generated code's macros. */
    bool lower = false;
    for (const char *p = name; *p; p++) lower |= islower((unsigned char)*p) != 0;
    return !lower && strlen(name) > 1;
}

/* Records a message located at (line, col) of the spec's source, or naming
 * the stencil when the spec was built through the C API. */
static tess_status located(const tess_spec *s, int line, int col, const char *msg) {
    if (s->file && line > 0) return tess_error(TESS_ERR_FORMAT, "%s:%d:%d: %s", s->file, line, col, msg);
    return tess_error(TESS_ERR_FORMAT, "stencil '%s': %s", s->name, msg);
}

static tess_status check_name(const tess_spec *s, const char *what, const char *name) {
    char msg[160];
    size_t n = name ? strlen(name) : 0;
    bool ok = n > 0 && n < TESS_SPEC_NAME_MAX && isalpha((unsigned char)name[0]) && !strstr(name, "__");
    for (size_t i = 0; ok && i < n; i++) ok = isalnum((unsigned char)name[i]) || name[i] == '_';
    if (!ok) {
        snprintf(msg, sizeof msg, "invalid %s name '%.40s' (a letter, then letters, digits or single "
                 "underscores, at most %d characters)", what, name ? name : "", TESS_SPEC_NAME_MAX - 1);
        return located(s, s->pos_line, s->pos_col, msg);
    }
    if (is_reserved(name)) {
        snprintf(msg, sizeof msg, "'%s' is a reserved word and cannot name a %s", name, what);
        return located(s, s->pos_line, s->pos_col, msg);
    }
    return TESS_OK;
}

/* Whether name is taken by a field, parameter or intermediate already. */
static bool name_taken(const tess_spec *s, const char *name) {
    for (int i = 0; i < s->nfields; i++)
        if (strcmp(s->field[i].name, name) == 0) return true;
    for (int i = 0; i < s->nparams; i++)
        if (strcmp(s->param[i].name, name) == 0) return true;
    for (int i = 0; i < s->nstmts; i++)
        if (s->stmt[i].field < 0 && strcmp(s->stmt[i].target, name) == 0) return true;
    return false;
}

static tess_status check_new_name(const tess_spec *s, const char *what, const char *name) {
    tess_status st = check_name(s, what, name);
    if (st != TESS_OK) return st;
    if (name_taken(s, name)) {
        char msg[96];
        snprintf(msg, sizeof msg, "'%s' is already defined", name);
        return located(s, s->pos_line, s->pos_col, msg);
    }
    return TESS_OK;
}

static tess_status check_open(const tess_spec *s) {
    if (s->finished) return tess_error(TESS_ERR_ARG, "stencil '%s' is finished and cannot change", s->name);
    return TESS_OK;
}

tess_status tess_spec_create(const char *name, tess_spec **out) {
    *out = NULL;
    tess_spec *s = calloc(1, sizeof *s);
    if (!s) return tess_error(TESS_ERR_NOMEM, "out of memory creating a stencil");
    s->halo = -1;
    s->steps = 1;
    size_t n = name ? strlen(name) : 0;
    bool ok = n > 0 && n < sizeof s->name && isalpha((unsigned char)name[0]);
    for (size_t i = 0; ok && i < n; i++) ok = isalnum((unsigned char)name[i]) || name[i] == '_';
    if (!ok) {
        free(s);
        return tess_error(TESS_ERR_ARG, "invalid stencil name '%.40s' (a letter, then letters, digits "
                          "or underscores, at most %d characters)", name ? name : "", (int)sizeof s->name - 1);
    }
    memcpy(s->name, name, n + 1);
    *out = s;
    return TESS_OK;
}

void tess_spec_destroy(tess_spec *s) {
    if (!s) return;
    for (int i = 0; i < s->nstmts; i++) tess_expr_free(s->stmt[i].expr);
    for (int i = 0; i < s->ninst; i++) tess_expr_free(s->inst[i].expr);
    free(s->stmt);
    free(s->inst);
    free(s->param);
    free(s->summary);
    free(s->file);
    free(s);
}

void tess_spec_set_position(tess_spec *s, int line, int col) {
    s->pos_line = line;
    s->pos_col = col;
}

static tess_status set_string(char **dst, const char *src) {
    char *copy = strdup(src ? src : "");
    if (!copy) return tess_error(TESS_ERR_NOMEM, "out of memory");
    free(*dst);
    *dst = copy;
    return TESS_OK;
}

tess_status tess_spec_set_file(tess_spec *s, const char *file) { return set_string(&s->file, file); }

tess_status tess_spec_set_summary(tess_spec *s, const char *summary) {
    tess_status st = check_open(s);
    return st ? st : set_string(&s->summary, summary);
}

tess_status tess_spec_set_grid(tess_spec *s, const int64_t *shape, int rank) {
    tess_status st = check_open(s);
    if (st) return st;
    if (rank != 2 && rank != 3) return located(s, s->pos_line, s->pos_col, "a grid has 2 or 3 dimensions");
    for (int a = 0; a < rank; a++)
        if (shape[a] < 1 || shape[a] > (1LL << 31))
            return located(s, s->pos_line, s->pos_col, "grid extents must be between 1 and 2^31");
    s->rank = rank;
    memcpy(s->shape, shape, (size_t)rank * sizeof *shape);
    return TESS_OK;
}

tess_status tess_spec_set_halo(tess_spec *s, int halo) {
    tess_status st = check_open(s);
    if (st) return st;
    if (halo < 0 || halo > TESS_SPEC_MAX_REACH)
        return located(s, s->pos_line, s->pos_col, "halo must be between 0 and 16");
    s->halo = halo;
    s->halo_line = s->pos_line;
    s->halo_col = s->pos_col;
    return TESS_OK;
}

tess_status tess_spec_set_periodic(tess_spec *s, char axis) {
    tess_status st = check_open(s);
    if (st) return st;
    const char *axes = "xyz";
    const char *p = axis ? strchr(axes, axis) : NULL;
    if (!p) return located(s, s->pos_line, s->pos_col, "a periodic axis is x, y or z");
    s->periodic_xyz |= 1u << (p - axes);
    return TESS_OK;
}

tess_status tess_spec_set_steps(tess_spec *s, int steps) {
    tess_status st = check_open(s);
    if (st) return st;
    if (steps < 1 || steps > TESS_SPEC_MAX_STEPS)
        return located(s, s->pos_line, s->pos_col, "steps must be between 1 and 64");
    s->steps = steps;
    return TESS_OK;
}

tess_status tess_spec_add_field(tess_spec *s, const char *name, tess_spec_type type, int rank,
                                tess_spec_role role) {
    tess_status st = check_open(s);
    if (st || (st = check_new_name(s, "field", name))) return st;
    if (s->nfields == TESS_SPEC_MAX_FIELDS)
        return located(s, s->pos_line, s->pos_col, "too many fields (at most 8)");
    if (rank != 0 && rank != 2 && rank != 3)
        return located(s, s->pos_line, s->pos_col, "a field has 2 or 3 dimensions");
    if ((unsigned)type > TESS_TYPE_F64 || (unsigned)role > TESS_FIELD_OUT)
        return tess_error(TESS_ERR_ARG, "stencil '%s': invalid type or role for field '%s'", s->name, name);
    tess_spec_field *f = &s->field[s->nfields++];
    memset(f, 0, sizeof *f);
    strcpy(f->name, name);
    f->type = type;
    f->rank = rank;
    f->role = role;
    f->advances = -1;
    f->fill_lo = -1;
    f->fill_hi = 1;
    f->line = s->pos_line;
    f->col = s->pos_col;
    return TESS_OK;
}

static tess_spec_field *find_field(tess_spec *s, const char *name) {
    for (int i = 0; i < s->nfields; i++)
        if (strcmp(s->field[i].name, name) == 0) return &s->field[i];
    return NULL;
}

static tess_status unknown_field(const tess_spec *s, const char *name) {
    char msg[96];
    snprintf(msg, sizeof msg, "no field named '%.40s'", name ? name : "");
    return located(s, s->pos_line, s->pos_col, msg);
}

tess_status tess_spec_set_advances(tess_spec *s, const char *out, const char *in) {
    tess_status st = check_open(s);
    if (st) return st;
    tess_spec_field *f = out ? find_field(s, out) : NULL;
    if (!f) return unknown_field(s, out);
    if (!in || strlen(in) >= TESS_SPEC_NAME_MAX) return unknown_field(s, in);
    strcpy(f->advances_name, in);   /* resolved by finish: the input may be declared later */
    return TESS_OK;
}

tess_status tess_spec_set_range(tess_spec *s, const char *field, double lo, double hi) {
    tess_status st = check_open(s);
    if (st) return st;
    tess_spec_field *f = field ? find_field(s, field) : NULL;
    if (!f) return unknown_field(s, field);
    if (!(lo <= hi) || !isfinite(lo) || !isfinite(hi))
        return located(s, s->pos_line, s->pos_col, "a range needs finite bounds with low <= high");
    f->fill_lo = lo;
    f->fill_hi = hi;
    return TESS_OK;
}

tess_status tess_spec_add_param(tess_spec *s, const char *name, double value) {
    tess_status st = check_open(s);
    if (st || (st = check_new_name(s, "parameter", name))) return st;
    if (!isfinite(value)) return located(s, s->pos_line, s->pos_col, "a parameter's value must be finite");
    if (s->nparams == s->cap_params) {
        int cap = s->cap_params ? 2 * s->cap_params : 8;
        tess_spec_param *p = realloc(s->param, (size_t)cap * sizeof *p);
        if (!p) return tess_error(TESS_ERR_NOMEM, "out of memory adding a parameter");
        s->param = p;
        s->cap_params = cap;
    }
    tess_spec_param *p = &s->param[s->nparams++];
    memset(p, 0, sizeof *p);
    strcpy(p->name, name);
    p->value = value;
    p->line = s->pos_line;
    p->col = s->pos_col;
    return TESS_OK;
}

tess_status tess_spec_add_statement(tess_spec *s, const char *target, tess_expr *e) {
    tess_status st = check_open(s);
    if (!st && !e) st = tess_error_context(TESS_ERR_ARG, "stencil '%s': invalid expression", s->name);
    if (!st) {
        tess_spec_field *f = target ? find_field(s, target) : NULL;
        if (f && f->role != TESS_FIELD_OUT) {
            char msg[128];
            snprintf(msg, sizeof msg, "'%s' is an %s field and cannot be assigned", target,
                     f->role == TESS_FIELD_IN ? "input" : "coefficient");
            st = located(s, s->pos_line, s->pos_col, msg);
        } else if (f) {
            for (int i = 0; i < s->nstmts && !st; i++)
                if (strcmp(s->stmt[i].target, target) == 0) {
                    char msg[96];
                    snprintf(msg, sizeof msg, "output '%s' is assigned twice", target);
                    st = located(s, s->pos_line, s->pos_col, msg);
                }
        } else {
            st = check_new_name(s, "intermediate", target);
        }
        if (!st && s->nstmts == s->cap_stmts) {
            int cap = s->cap_stmts ? 2 * s->cap_stmts : 8;
            tess_spec_stmt *p = realloc(s->stmt, (size_t)cap * sizeof *p);
            if (!p) st = tess_error(TESS_ERR_NOMEM, "out of memory adding a statement");
            else {
                s->stmt = p;
                s->cap_stmts = cap;
            }
        }
        if (!st) {
            tess_spec_stmt *t = &s->stmt[s->nstmts++];
            memset(t, 0, sizeof *t);
            strcpy(t->target, target);
            t->expr = e;
            t->field = f ? (int)(f - s->field) : -1;
            t->line = s->pos_line;
            t->col = s->pos_col;
            return TESS_OK;
        }
    }
    tess_expr_free(e);
    return st;
}

/* ---- names and queries --------------------------------------------------------- */

char tess_spec_axis_name(int rank, int axis) {
    return axis >= 0 && axis < rank ? "xyz"[rank - 1 - axis] : '?';
}

bool tess_spec_periodic(const tess_spec *s, int axis) {
    return axis >= 0 && axis < s->rank && (s->periodic_xyz >> (s->rank - 1 - axis) & 1u);
}

int64_t tess_spec_field_count(const tess_spec *s, int f, const int64_t *shape) {
    int64_t n = 1;
    for (int a = s->rank - s->field[f].rank; a < s->rank; a++) n *= shape[a];
    return n;
}

tess_dtype tess_spec_field_dtype(const tess_spec *s, int f, tess_dtype real) {
    switch (s->field[f].type) {
    case TESS_TYPE_F32: return TESS_F32;
    case TESS_TYPE_F64: return TESS_F64;
    default: return real;
    }
}

int tess_spec_nbuffers(const tess_spec *s) {
    int n = s->nfields;
    if (s->steps > 1)
        for (int f = 0; f < s->nfields; f++) n += s->field[f].role == TESS_FIELD_OUT;
    return n;
}

void tess_spec_number(double v, char *buf, size_t len) {
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}
