/*
 * spec.h - stencil specifications: the syntax tree of a .stencil file, the C
 * API that builds it, the parser and printer, and the analysis that the
 * reference interpreter and the code generators share.
 *
 * A spec is built (by tess_spec_parse or by the tess_spec_add_* calls), then
 * checked and analysed once by tess_spec_finish; after that it is read-only
 * and may be shared between threads. The format is documented in
 * stencils/README.md.
 *
 * Grid axes are numbered in storage order, slowest first, as task shapes are:
 * a 3D grid has axes (z, y, x), a 2D grid (y, x). Offsets are written in the
 * same order: u[1,0,-1] is u at (z+1, y, x-1).
 */
#ifndef TESS_SPEC_H
#define TESS_SPEC_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/types.h"

#define TESS_SPEC_NAME_MAX 24      /* identifiers, including the NUL */
#define TESS_SPEC_MAX_FIELDS 8
#define TESS_SPEC_MAX_RANK 3
#define TESS_SPEC_MAX_OFFSET 8     /* |offset| along one axis in one access */
#define TESS_SPEC_MAX_REACH 16     /* |offset| along one axis after inlining intermediates */
#define TESS_SPEC_MAX_STEPS 64
#define TESS_SPEC_MAX_INSTANCES 1024

typedef enum tess_spec_role {
    TESS_FIELD_IN,     /* input state, read by the update */
    TESS_FIELD_COEF,   /* coefficient: read-only and constant in time */
    TESS_FIELD_OUT     /* written by the update */
} tess_spec_role;

typedef enum tess_spec_type {
    TESS_TYPE_REAL,    /* the task's dtype (f32 or f64) */
    TESS_TYPE_F32,
    TESS_TYPE_F64
} tess_spec_type;

typedef enum tess_expr_kind {
    TESS_EXPR_NUM,     /* literal number */
    TESS_EXPR_REF,     /* name or name[offsets] */
    TESS_EXPR_NEG,     /* -a */
    TESS_EXPR_NOT,     /* !a */
    TESS_EXPR_BIN,     /* a op b */
    TESS_EXPR_CALL     /* min, max, abs, sqrt, select */
} tess_expr_kind;

typedef enum tess_binop {
    TESS_BIN_ADD, TESS_BIN_SUB, TESS_BIN_MUL, TESS_BIN_DIV,
    TESS_BIN_LT, TESS_BIN_LE, TESS_BIN_GT, TESS_BIN_GE, TESS_BIN_EQ, TESS_BIN_NE,
    TESS_BIN_AND, TESS_BIN_OR
} tess_binop;

typedef enum tess_fn {
    TESS_FN_MIN, TESS_FN_MAX, TESS_FN_ABS, TESS_FN_SQRT,
    TESS_FN_SELECT     /* select(cond, a, b): a where cond is non-zero, else b */
} tess_fn;

/* What a name refers to, known after tess_spec_finish. */
typedef enum tess_ref_kind {
    TESS_REF_UNRESOLVED,
    TESS_REF_FIELD,    /* index: field; off: offset along every grid axis */
    TESS_REF_TEMP,     /* index: statement defining the intermediate */
    TESS_REF_PARAM,    /* index: parameter */
    TESS_REF_INST      /* lowered trees only; index: instance */
} tess_ref_kind;

typedef struct tess_expr {
    tess_expr_kind kind;
    int op;                          /* tess_binop (BIN) or tess_fn (CALL) */
    double num;                      /* NUM */
    char name[TESS_SPEC_NAME_MAX];   /* REF */
    int noff;                        /* REF: offsets as written; 0 for a bare name (the centre) */
    int woff[TESS_SPEC_MAX_RANK];
    tess_ref_kind ref;               /* REF, set by finish */
    int index;
    int off[TESS_SPEC_MAX_RANK];     /* REF: offset along each grid axis, set by finish */
    int nargs;
    struct tess_expr *arg[3];
    int line, col;                   /* source position; 0 when built through the C API */
} tess_expr;

typedef struct tess_spec_field {
    char name[TESS_SPEC_NAME_MAX];
    tess_spec_type type;
    int rank;                        /* 2 or 3; 0 = the grid's rank (resolved by finish) */
    tess_spec_role role;
    char advances_name[TESS_SPEC_NAME_MAX];  /* out fields: the input it is the next time level of */
    int advances;                    /* field index, or -1 (set by finish) */
    double fill_lo, fill_hi;         /* random test data range */
    int line, col;
} tess_spec_field;

typedef struct tess_spec_param {
    char name[TESS_SPEC_NAME_MAX];
    double value;
    int line, col;
} tess_spec_param;

typedef struct tess_spec_stmt {
    char target[TESS_SPEC_NAME_MAX];
    tess_expr *expr;
    int field;                       /* output field it assigns, or -1 for an intermediate */
    int line, col;
} tess_spec_stmt;

/* An intermediate or output evaluated at one offset from the point being
 * updated. Lowering turns the statements into the list of instances the
 * outputs need, dependencies first: field references carry the total offset
 * and references to intermediates become TESS_REF_INST. */
typedef struct tess_spec_inst {
    int stmt;
    int off[TESS_SPEC_MAX_RANK];
    tess_expr *expr;                 /* owned, lowered */
} tess_spec_inst;

typedef struct tess_spec {
    char name[32];
    char *summary;
    char *file;                      /* source name used in messages, NULL for the C API */
    int rank;                        /* 2 or 3; 0 until the grid is set */
    int64_t shape[TESS_SPEC_MAX_RANK];  /* default shape, slowest axis first */
    int halo;                        /* declared halo, -1 if not declared */
    int halo_line, halo_col;
    unsigned periodic_xyz;           /* bit 0: x periodic, bit 1: y, bit 2: z */
    int steps;
    int nfields;
    tess_spec_field field[TESS_SPEC_MAX_FIELDS];
    int nparams, cap_params;
    tess_spec_param *param;
    int nstmts, cap_stmts;
    tess_spec_stmt *stmt;
    int pos_line, pos_col;           /* position attached to what is added next */

    /* Analysis, filled by tess_spec_finish. */
    bool finished;
    int lo[TESS_SPEC_MAX_RANK];      /* reach of the update below / above the point, per axis: */
    int hi[TESS_SPEC_MAX_RANK];      /* the widths of the fixed boundary bands */
    int ninst;
    tess_spec_inst *inst;
    int out_inst[TESS_SPEC_MAX_FIELDS];  /* instance computing each output field, -1 otherwise */
} tess_spec;

/* ---- building (the C API; the parser uses it too) ---------------------------- */

tess_status tess_spec_create(const char *name, tess_spec **out);
void tess_spec_destroy(tess_spec *s);

/* Source position attached to the declarations and statements added next
 * (the parser sets it; messages then read "file:line:col: ..."). */
void tess_spec_set_position(tess_spec *s, int line, int col);
tess_status tess_spec_set_file(tess_spec *s, const char *file);
tess_status tess_spec_set_summary(tess_spec *s, const char *summary);
/* The grid's rank (2 or 3) and default shape, slowest axis first. */
tess_status tess_spec_set_grid(tess_spec *s, const int64_t *shape, int rank);
tess_status tess_spec_set_halo(tess_spec *s, int halo);
/* Makes one axis ('x', 'y' or 'z') periodic; the others keep fixed boundaries. */
tess_status tess_spec_set_periodic(tess_spec *s, char axis);
tess_status tess_spec_set_steps(tess_spec *s, int steps);
/* rank 0: the grid's rank. Fields become the kernel's buffers in this order. */
tess_status tess_spec_add_field(tess_spec *s, const char *name, tess_spec_type type, int rank,
                                tess_spec_role role);
/* Declares output `out` the next time level of input `in` (ping-pong partner
 * in multi-step runs; its fixed boundary values are copied from `in`). */
tess_status tess_spec_set_advances(tess_spec *s, const char *out, const char *in);
/* Range of the random values a test fills the field with (default [-1, 1]). */
tess_status tess_spec_set_range(tess_spec *s, const char *field, double lo, double hi);
tess_status tess_spec_add_param(tess_spec *s, const char *name, double value);
/* `target = e`: an output field, or a new intermediate. Takes ownership of e
 * (also on failure); a NULL e means a constructor failed and is reported. */
tess_status tess_spec_add_statement(tess_spec *s, const char *target, tess_expr *e);

/* Checks the spec (names, ranks, offsets, halo, roles) and lowers it.
 * Must be called once, after the last addition. */
tess_status tess_spec_finish(tess_spec *s);

/* Expression constructors. Each returns NULL on failure (recording a
 * message) and takes ownership of its operands, freeing them on failure, so
 * that nested calls need a single check at the end. */
tess_expr *tess_expr_num(double v);
/* name[off...]; noff 0 for a bare name (the centre). */
tess_expr *tess_expr_ref(const char *name, int noff, const int *off);
tess_expr *tess_expr_neg(tess_expr *a);
tess_expr *tess_expr_not(tess_expr *a);
tess_expr *tess_expr_bin(tess_binop op, tess_expr *a, tess_expr *b);
/* min/max take 2 arguments, abs/sqrt 1, select 3. */
tess_expr *tess_expr_call(tess_fn fn, int nargs, tess_expr *const *args);
void tess_expr_free(tess_expr *e);

/* ---- text ---------------------------------------------------------------- */

/* Parses and finishes a spec. `file` names the source in messages. */
tess_status tess_spec_parse(const char *text, size_t len, const char *file, tess_spec **out);
tess_status tess_spec_load(const char *path, tess_spec **out);
/* The spec as text in the file format; parsing it gives the same spec. */
tess_status tess_spec_format(const tess_spec *s, char **text);

/* ---- names and small queries -------------------------------------------- */

const char *tess_binop_text(tess_binop op);   /* "+" */
const char *tess_fn_name(tess_fn fn);         /* "min" */
int tess_fn_arity(tess_fn fn);
/* Name of grid axis a in a grid of the given rank: 'z', 'y' or 'x'. */
char tess_spec_axis_name(int rank, int axis);
bool tess_spec_periodic(const tess_spec *s, int axis);
/* Extent of field f along its own axes: its element count for a grid shape. */
int64_t tess_spec_field_count(const tess_spec *s, int f, const int64_t *shape);
/* Element type of field f in a task of dtype `real`. */
tess_dtype tess_spec_field_dtype(const tess_spec *s, int f, tess_dtype real);
/* Kernel buffers: the fields in order, then (steps > 1) one scratch buffer
 * per output for the intermediate time levels. */
int tess_spec_nbuffers(const tess_spec *s);
/* Operator nodes (NEG, NOT, BIN, CALL) numbered as one list. */
enum {
    TESS_OP_NEG, TESS_OP_NOT,
    TESS_OP_BIN,                       /* + tess_binop */
    TESS_OP_CALL = TESS_OP_BIN + 12,   /* + tess_fn */
    TESS_OP_COUNT = TESS_OP_CALL + 5
};

/* The number of an operator node, -1 for a number or a reference. */
static inline int tess_spec_opcode(const tess_expr *e) {
    switch (e->kind) {
    case TESS_EXPR_NEG: return TESS_OP_NEG;
    case TESS_EXPR_NOT: return TESS_OP_NOT;
    case TESS_EXPR_BIN: return (unsigned)e->op <= TESS_BIN_OR ? TESS_OP_BIN + e->op : -1;
    case TESS_EXPR_CALL: return (unsigned)e->op <= TESS_FN_SELECT ? TESS_OP_CALL + e->op : -1;
    default: return -1;
    }
}

/* Every operator's arithmetic, written once: X(opcode, value of the
 * arguments a, b, c), expanded by tess_spec_apply and by the interpreter's
 * loop over a run of points. Comparisons and logic give 1 or 0; min(a, b) is
 * a < b ? a : b. */
#define TESS_SPEC_OPERATORS(X, a, b, c)                                            \
    X(TESS_OP_NEG, -(a))                                                           \
    X(TESS_OP_NOT, (double)((a) == 0))                                             \
    X(TESS_OP_BIN + TESS_BIN_ADD, (a) + (b))                                       \
    X(TESS_OP_BIN + TESS_BIN_SUB, (a) - (b))                                       \
    X(TESS_OP_BIN + TESS_BIN_MUL, (a) * (b))                                       \
    X(TESS_OP_BIN + TESS_BIN_DIV, (a) / (b))                                       \
    X(TESS_OP_BIN + TESS_BIN_LT, (double)((a) < (b)))                              \
    X(TESS_OP_BIN + TESS_BIN_LE, (double)((a) <= (b)))                             \
    X(TESS_OP_BIN + TESS_BIN_GT, (double)((a) > (b)))                              \
    X(TESS_OP_BIN + TESS_BIN_GE, (double)((a) >= (b)))                             \
    X(TESS_OP_BIN + TESS_BIN_EQ, (double)((a) == (b)))                             \
    X(TESS_OP_BIN + TESS_BIN_NE, (double)((a) != (b)))                             \
    X(TESS_OP_BIN + TESS_BIN_AND, (double)((a) != 0 && (b) != 0))                  \
    X(TESS_OP_BIN + TESS_BIN_OR, (double)((a) != 0 || (b) != 0))                   \
    X(TESS_OP_CALL + TESS_FN_MIN, (a) < (b) ? (a) : (b))                           \
    X(TESS_OP_CALL + TESS_FN_MAX, (a) > (b) ? (a) : (b))                           \
    X(TESS_OP_CALL + TESS_FN_ABS, fabs(a))                                         \
    X(TESS_OP_CALL + TESS_FN_SQRT, sqrt(a))                                        \
    X(TESS_OP_CALL + TESS_FN_SELECT, (a) != 0 ? (b) : (c))

/* Value of an operator node from its arguments' values: the arithmetic that
 * the interpreter and constant folding share (NaN for other nodes). */
static inline double tess_spec_apply(const tess_expr *e, const double *a) {
#define TESS_SPEC_APPLY_CASE(code, value) \
    case code: return value;
    switch (tess_spec_opcode(e)) {
        TESS_SPEC_OPERATORS(TESS_SPEC_APPLY_CASE, a[0], a[1], a[2])
    default: break;
    }
#undef TESS_SPEC_APPLY_CASE
    return NAN;
}

/* Shortest text that reads back as v ("0.1", "4", "1e-05"). */
void tess_spec_number(double v, char *buf, size_t len);

#endif
