/* spec_finish.c - checking a spec and lowering it into instances.
 *
 * Lowering expands the statements from the outputs down: an output needs
 * the intermediates it references, each at the offset it is referenced at,
 * and so on. Every (intermediate, offset) pair becomes one instance,
 * computed once per point; field references carry their total offset, from
 * which the reach of the update (and so the boundary bands) follows. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "spec.h"

static tess_status fail(const tess_spec *s, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static tess_status fail(const tess_spec *s, int line, int col, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (s->file && line > 0) return tess_error(TESS_ERR_FORMAT, "%s:%d:%d: %s", s->file, line, col, msg);
    if (s->file) return tess_error(TESS_ERR_FORMAT, "%s: %s", s->file, msg);
    return tess_error(TESS_ERR_FORMAT, "stencil '%s': %s", s->name, msg);
}

static int field_index(const tess_spec *s, const char *name) {
    for (int i = 0; i < s->nfields; i++)
        if (strcmp(s->field[i].name, name) == 0) return i;
    return -1;
}

static int param_index(const tess_spec *s, const char *name) {
    for (int i = 0; i < s->nparams; i++)
        if (strcmp(s->param[i].name, name) == 0) return i;
    return -1;
}

static int temp_index(const tess_spec *s, const char *name) {
    for (int i = 0; i < s->nstmts; i++)
        if (s->stmt[i].field < 0 && strcmp(s->stmt[i].target, name) == 0) return i;
    return -1;
}

static tess_status check_fields(tess_spec *s) {
    if (s->rank == 0) return fail(s, 0, 0, "missing 'grid' declaration (e.g. grid 256x256x256)");
    if (s->rank == 2 && (s->periodic_xyz & 4u)) return fail(s, 0, 0, "a 2D grid has no z axis to make periodic");
    int nout = 0;
    bool advanced[TESS_SPEC_MAX_FIELDS] = {false};
    for (int i = 0; i < s->nfields; i++) {
        tess_spec_field *f = &s->field[i];
        if (f->rank == 0) f->rank = s->rank;
        if (f->rank > s->rank)
            return fail(s, f->line, f->col, "field '%s' is 3D but the grid is 2D", f->name);
        if (f->role != TESS_FIELD_OUT && f->advances_name[0])
            return fail(s, f->line, f->col, "only an output field can advance another field");
        if (f->role == TESS_FIELD_OUT) {
            nout++;
            if (f->rank != s->rank)
                return fail(s, f->line, f->col, "output field '%s' must have the grid's rank", f->name);
        }
        f->advances = -1;
        if (!f->advances_name[0]) continue;
        int j = field_index(s, f->advances_name);
        if (j < 0) return fail(s, f->line, f->col, "'%s' advances unknown field '%s'", f->name, f->advances_name);
        const tess_spec_field *g = &s->field[j];
        if (g->role != TESS_FIELD_IN)
            return fail(s, f->line, f->col, "'%s' advances '%s', which is not an input field", f->name, g->name);
        if (g->type != f->type || (g->rank ? g->rank : s->rank) != f->rank)
            return fail(s, f->line, f->col, "'%s' and the field it advances, '%s', differ in type or rank",
                        f->name, g->name);
        if (advanced[j]) return fail(s, f->line, f->col, "'%s' is advanced by two outputs", g->name);
        advanced[j] = true;
        f->advances = j;
    }
    if (nout == 0) return fail(s, 0, 0, "no output field (declare one with: field NAME out)");
    if (tess_spec_nbuffers(s) > TESS_SPEC_MAX_FIELDS)
        return fail(s, 0, 0, "%d buffers (fields plus one scratch buffer per output when steps > 1); "
                    "at most %d", tess_spec_nbuffers(s), TESS_SPEC_MAX_FIELDS);
    for (int i = 0; i < s->nfields; i++) {
        const tess_spec_field *f = &s->field[i];
        if (f->role != TESS_FIELD_OUT) continue;
        bool assigned = false;
        for (int k = 0; k < s->nstmts; k++) assigned |= s->stmt[k].field == i;
        if (!assigned) return fail(s, f->line, f->col, "output field '%s' is never assigned", f->name);
        if (s->steps > 1 && f->advances < 0)
            return fail(s, f->line, f->col, "with steps > 1 every output must advance an input "
                        "('%s' advances none)", f->name);
    }
    return TESS_OK;
}

/* Resolves the names of statement k's expression. */
static tess_status resolve(tess_spec *s, int k, tess_expr *e) {
    for (int i = 0; i < e->nargs; i++) {
        tess_status st = resolve(s, k, e->arg[i]);
        if (st) return st;
    }
    if (e->kind != TESS_EXPR_REF) return TESS_OK;
    int rank;
    int f = field_index(s, e->name), t = temp_index(s, e->name), p = param_index(s, e->name);
    if (f >= 0) {
        if (s->field[f].role == TESS_FIELD_OUT)
            return fail(s, e->line, e->col, "output field '%s' cannot be read; compute it in an "
                        "intermediate and read that", e->name);
        e->ref = TESS_REF_FIELD;
        e->index = f;
        rank = s->field[f].rank;
    } else if (t >= 0) {
        if (t >= k) return fail(s, e->line, e->col, "'%s' is used before it is defined", e->name);
        e->ref = TESS_REF_TEMP;
        e->index = t;
        rank = s->rank;
    } else if (p >= 0) {
        if (e->noff) return fail(s, e->line, e->col, "parameter '%s' takes no offsets", e->name);
        e->ref = TESS_REF_PARAM;
        e->index = p;
        return TESS_OK;
    } else {
        return fail(s, e->line, e->col, "unknown name '%s'", e->name);
    }
    if (e->noff != 0 && e->noff != rank)
        return fail(s, e->line, e->col, "'%s' is %dD and takes %d offsets, not %d", e->name, rank, rank, e->noff);
    memset(e->off, 0, sizeof e->off);
    for (int i = 0; i < e->noff; i++) {
        if (e->woff[i] < -TESS_SPEC_MAX_OFFSET || e->woff[i] > TESS_SPEC_MAX_OFFSET)
            return fail(s, e->line, e->col, "offset %d of '%s' is not between -%d and %d", e->woff[i], e->name,
                        TESS_SPEC_MAX_OFFSET, TESS_SPEC_MAX_OFFSET);
        e->off[s->rank - e->noff + i] = e->woff[i];
    }
    return TESS_OK;
}

/* ---- lowering ----------------------------------------------------------------- */

static int lower_stmt(tess_spec *s, int k, const int *off, tess_status *st);

/* Copies statement expression e for an instance at offset `off`. */
static tess_expr *lower_expr(tess_spec *s, const tess_expr *e, const int *off, tess_status *st) {
    tess_expr *c = calloc(1, sizeof *c);
    if (!c) {
        *st = tess_error(TESS_ERR_NOMEM, "out of memory lowering stencil '%s'", s->name);
        return NULL;
    }
    *c = *e;
    c->nargs = 0;
    for (int i = 0; i < e->nargs; i++) {
        c->arg[i] = lower_expr(s, e->arg[i], off, st);
        if (!c->arg[i]) {
            tess_expr_free(c);
            return NULL;
        }
        c->nargs = i + 1;
    }
    if (e->kind != TESS_EXPR_REF || e->ref == TESS_REF_PARAM) return c;
    int total[TESS_SPEC_MAX_RANK] = {0};
    int first = e->ref == TESS_REF_FIELD ? s->rank - s->field[e->index].rank : 0;
    for (int a = first; a < s->rank; a++) total[a] = off[a] + e->off[a];
    for (int a = 0; a < s->rank; a++)
        if (total[a] < -TESS_SPEC_MAX_REACH || total[a] > TESS_SPEC_MAX_REACH) {
            *st = fail(s, e->line, e->col, "the update reaches more than %d points along %c through '%s'",
                       TESS_SPEC_MAX_REACH, tess_spec_axis_name(s->rank, a), e->name);
            tess_expr_free(c);
            return NULL;
        }
    memcpy(c->off, total, sizeof total);
    if (e->ref == TESS_REF_TEMP) {
        int idx = lower_stmt(s, e->index, total, st);
        if (idx < 0) {
            tess_expr_free(c);
            return NULL;
        }
        c->ref = TESS_REF_INST;
        c->index = idx;
    }
    return c;
}

/* Index of the instance of statement k at offset `off`, lowering it (and
 * what it needs) first if it is new; -1 on failure. */
static int lower_stmt(tess_spec *s, int k, const int *off, tess_status *st) {
    for (int i = 0; i < s->ninst; i++)
        if (s->inst[i].stmt == k && memcmp(s->inst[i].off, off, sizeof s->inst[i].off) == 0) return i;
    tess_expr *e = lower_expr(s, s->stmt[k].expr, off, st);
    if (!e) return -1;
    if (s->ninst == TESS_SPEC_MAX_INSTANCES) {
        tess_expr_free(e);
        *st = fail(s, s->stmt[k].line, s->stmt[k].col, "more than %d intermediate values per point",
                   TESS_SPEC_MAX_INSTANCES);
        return -1;
    }
    tess_spec_inst *in = &s->inst[s->ninst];
    in->stmt = k;
    memcpy(in->off, off, sizeof in->off);
    in->expr = e;
    return s->ninst++;
}

/* Widens the boundary bands by the field references of e. */
static void note_reach(tess_spec *s, const tess_expr *e) {
    for (int i = 0; i < e->nargs; i++) note_reach(s, e->arg[i]);
    if (e->kind != TESS_EXPR_REF || e->ref != TESS_REF_FIELD) return;
    for (int a = 0; a < s->rank; a++) {
        if (-e->off[a] > s->lo[a]) s->lo[a] = -e->off[a];
        if (e->off[a] > s->hi[a]) s->hi[a] = e->off[a];
    }
}

static tess_status lower(tess_spec *s) {
    for (int i = 0; i < s->ninst; i++) tess_expr_free(s->inst[i].expr);
    free(s->inst);
    s->ninst = 0;
    memset(s->lo, 0, sizeof s->lo);
    memset(s->hi, 0, sizeof s->hi);
    s->inst = calloc(TESS_SPEC_MAX_INSTANCES, sizeof *s->inst);
    if (!s->inst) return tess_error(TESS_ERR_NOMEM, "out of memory lowering stencil '%s'", s->name);
    for (int f = 0; f < TESS_SPEC_MAX_FIELDS; f++) s->out_inst[f] = -1;
    static const int centre[TESS_SPEC_MAX_RANK] = {0};
    tess_status st = TESS_OK;
    for (int k = 0; k < s->nstmts; k++) {
        if (s->stmt[k].field < 0) continue;
        int idx = lower_stmt(s, k, centre, &st);
        if (idx < 0) return st;
        s->out_inst[s->stmt[k].field] = idx;
    }
    for (int k = 0; k < s->nstmts; k++) {
        if (s->stmt[k].field >= 0) continue;
        bool used = false;
        for (int i = 0; i < s->ninst && !used; i++) used = s->inst[i].stmt == k;
        if (!used)
            return fail(s, s->stmt[k].line, s->stmt[k].col, "intermediate '%s' is never used", s->stmt[k].target);
    }
    for (int i = 0; i < s->ninst; i++) note_reach(s, s->inst[i].expr);
    return TESS_OK;
}

static tess_status check_halo(const tess_spec *s) {
    int reach = 0, axis = 0;
    for (int a = 0; a < s->rank; a++) {
        int r = s->lo[a] > s->hi[a] ? s->lo[a] : s->hi[a];
        if (r > reach) {
            reach = r;
            axis = a;
        }
    }
    if (s->halo >= 0 && s->halo != reach)
        return fail(s, s->halo_line, s->halo_col, "halo %d is declared but the update reaches %d point%s (along %c)", s->halo,
                    reach, reach == 1 ? "" : "s", tess_spec_axis_name(s->rank, axis));
    return TESS_OK;
}

tess_status tess_spec_finish(tess_spec *s) {
    if (s->finished) return TESS_OK;
    tess_status st = check_fields(s);
    for (int k = 0; k < s->nstmts && !st; k++) st = resolve(s, k, s->stmt[k].expr);
    if (!st) st = lower(s);
    if (!st) st = check_halo(s);
    if (st) return st;
    s->finished = true;
    return TESS_OK;
}
