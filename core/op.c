/*
 * op.c - the operator contract's shared half: buffer lists, kernel-source
 * scalars, architectures, the checks an operator passes to be registered,
 * tasks built from an operator's declarations, and the doors through which
 * the core calls an operator (backend dispatch, minimum architecture).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "op.h"

/* ---- buffers ----------------------------------------------------------------------- */

tess_status tess_buffer_list_add(tess_buffer_list *l, const char *name, tess_buffer_role role,
                                 tess_dtype dtype, int64_t count) {
    if (!name || !*name || strlen(name) >= TESS_BUFFER_NAME_MAX)
        return tess_error(TESS_ERR_ARG, "buffer name '%s' is empty or longer than %d", name ? name : "",
                          TESS_BUFFER_NAME_MAX - 1);
    if (count < 0) return tess_error(TESS_ERR_ARG, "buffer '%s' has %lld elements", name, (long long)count);
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 8;
        tess_buffer_spec *s = realloc(l->spec, (size_t)cap * sizeof *s);
        if (!s) return tess_error(TESS_ERR_NOMEM, "out of memory declaring buffer '%s'", name);
        l->spec = s;
        l->cap = cap;
    }
    tess_buffer_spec *b = &l->spec[l->n++];
    memset(b, 0, sizeof *b);
    strcpy(b->name, name);
    b->role = role;
    b->dtype = dtype;
    b->count = count;
    return TESS_OK;
}

void tess_buffer_list_free(tess_buffer_list *l) {
    free(l->spec);
    l->spec = NULL;
    l->n = l->cap = 0;
}

size_t tess_buffer_bytes(const tess_buffer_spec *b) { return (size_t)b->count * tess_dtype_size(b->dtype); }

bool tess_buffer_is_input(const tess_buffer_spec *b) { return b->role == TESS_BUF_IN || b->role == TESS_BUF_INOUT; }

bool tess_buffer_is_output(const tess_buffer_spec *b) { return b->role == TESS_BUF_OUT || b->role == TESS_BUF_INOUT; }

/* ---- kernel sources ------------------------------------------------------------------ */

tess_status tess_kernel_source_add_launch(tess_kernel_source *k, const char *entry, unsigned grid, unsigned block,
                                          unsigned shared_bytes) {
    if (k->nlaunches == TESS_MAX_LAUNCHES) return tess_error(TESS_ERR_ARG, "more than %d launches", TESS_MAX_LAUNCHES);
    tess_launch *l = &k->launch[k->nlaunches];
    if (!entry || !*entry || strlen(entry) >= sizeof l->entry)
        return tess_error(TESS_ERR_ARG, "launch entry '%s' is empty or too long", entry ? entry : "");
    memset(l, 0, sizeof *l);
    strcpy(l->entry, entry);
    l->grid[0] = grid;
    l->block[0] = block;
    l->grid[1] = l->grid[2] = l->block[1] = l->block[2] = 1;
    l->shared_bytes = shared_bytes;
    k->nlaunches++;
    return TESS_OK;
}

tess_status tess_kernel_source_add_scalar(tess_kernel_source *k, const char *name, tess_scalar_type type,
                                          double value) {
    if (k->nscalars == TESS_MAX_SCALARS)
        return tess_error(TESS_ERR_ARG, "more than %d scalar arguments", TESS_MAX_SCALARS);
    if (!name || !*name || strlen(name) >= sizeof k->scalar[0].name)
        return tess_error(TESS_ERR_ARG, "scalar argument name '%s' is empty or too long", name ? name : "");
    tess_scalar *s = &k->scalar[k->nscalars++];
    memset(s, 0, sizeof *s);
    strcpy(s->name, name);
    s->type = type;
    tess_scalar_assign(s, value);
    return TESS_OK;
}

void tess_scalar_assign(tess_scalar *s, double value) {
    switch (s->type) {
    case TESS_SCALAR_I32: s->value.i32 = (int32_t)value; break;
    case TESS_SCALAR_I64: s->value.i64 = (int64_t)value; break;
    case TESS_SCALAR_F32: s->value.f32 = (float)value; break;
    case TESS_SCALAR_F64: s->value.f64 = value; break;
    }
}

int tess_kernel_source_find_scalar(const tess_kernel_source *k, const char *name) {
    for (int i = 0; i < k->nscalars; i++)
        if (strcmp(k->scalar[i].name, name) == 0) return i;
    return -1;
}

tess_status tess_arch_parse(const char *arch, int *cc, bool *arch_specific) {
    int major = 0, minor = 0, used = 0;
    if (!arch || sscanf(arch, "sm_%1d%1d%n", &major, &minor, &used) != 2 || major < 1 ||
        (arch[used] && strcmp(arch + used, "a") != 0))
        return tess_error(TESS_ERR_ARG, "architecture '%s' is not sm_XY or sm_XYa", arch ? arch : "");
    *cc = 10 * major + minor;
    *arch_specific = arch[used] == 'a';
    return TESS_OK;
}

/* ---- registration --------------------------------------------------------------------- */

/* The first required slot the operator lacks, or NULL. */
static const char *missing_slot(const tess_op *op) {
    if (!op->family || !*op->family) return "family";
    if (!op->summary) return "summary";
    if (!op->default_shape) return "default_shape";
    if (!op->extents || !*op->extents) return "extents";
    if (op->nattrs < 0 || (op->nattrs > 0 && !op->attrs)) return "attrs";
    if (!op->check_task) return "check_task";
    if (!op->buffers) return "buffers";
    if (!op->reference) return "reference";
    if (!op->flops) return "flops";
    if (!op->bytes) return "bytes";
    if (!op->tolerance) return "tolerance";
    if (op->nimpl < 1 || !op->impl) return "impl (no backend)";
    for (int i = 0; i < op->nimpl; i++) {
        const tess_op_backend *b = &op->impl[i];
        if (!b->backend || !*b->backend) return "impl[].backend";
        if (!b->space) return "impl[].space";
        if (!b->emit) return "impl[].emit";
        int cc;
        bool specific;
        if (b->min_arch && tess_arch_parse(b->min_arch, &cc, &specific)) return "impl[].min_arch (malformed)";
    }
    for (int i = 0; i < op->nattrs; i++)
        if (!op->attrs[i].name || !op->attrs[i].dflt || (op->attrs[i].type == TESS_ATTR_WORD && !op->attrs[i].choices))
            return "attrs[] (name, default and, for words, choices)";
    return NULL;
}

static tess_status canonical_value(const tess_op *op, const tess_attr_spec *a, const char *text, char *out,
                                   size_t len);

tess_status tess_op_check_complete(const tess_op *op) {
    if (!op || !op->name || !*op->name) return tess_error(TESS_ERR_ARG, "an operator without a name");
    if (strlen(op->name) >= TESS_OP_NAME_MAX || strchr(op->name, ':') || strchr(op->name, ','))
        return tess_error(TESS_ERR_ARG, "operator name '%s' is longer than %d characters or holds ':' or ','",
                          op->name, TESS_OP_NAME_MAX - 1);
    const char *slot = missing_slot(op);
    if (slot) return tess_error(TESS_ERR_ARG, "operator '%s' is incomplete: no %s", op->name, slot);
    if (op->nattrs > TESS_MAX_ATTRS)
        return tess_error(TESS_ERR_ARG, "operator '%s' declares %d attributes (at most %d)", op->name, op->nattrs,
                          TESS_MAX_ATTRS);
    /* every declared attribute must make a task: a well-formed name and a default of its type */
    for (int i = 0; i < op->nattrs; i++) {
        tess_task probe;
        char canonical[TESS_ATTR_VALUE_MAX + 8];
        memset(&probe, 0, sizeof probe);
        tess_status st = canonical_value(op, &op->attrs[i], op->attrs[i].dflt, canonical, sizeof canonical);
        if (!st) st = tess_task_set_attr(&probe, op->attrs[i].name, canonical);
        if (st) return tess_error_context(TESS_ERR_ARG, "operator '%s': attribute %d", op->name, i);
    }
    return TESS_OK;
}

const tess_op_backend *tess_op_backend_find(const tess_op *op, const char *backend) {
    for (int i = 0; backend && i < op->nimpl; i++)
        if (strcmp(op->impl[i].backend, backend) == 0) return &op->impl[i];
    return NULL;
}

bool tess_op_supports_backend(const tess_op *op, const char *backend) {
    return tess_op_backend_find(op, backend) != NULL;
}

/* ---- tasks ------------------------------------------------------------------------------ */

/* Is `word` one of the comma-separated `choices`? */
static bool one_of(const char *word, const char *choices) {
    size_t n = strlen(word);
    for (const char *p = choices; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, word, n) == 0) return true;
        if (!end) break;
        p = end + 1;
    }
    return false;
}

/* The canonical text of a typed value: what keys hold. */
static tess_status canonical_value(const tess_op *op, const tess_attr_spec *a, const char *text, char *out,
                                   size_t len) {
    char *end;
    errno = 0;
    switch (a->type) {
    case TESS_ATTR_INT: {
        long long v = strtoll(text, &end, 10);
        if (errno || end == text || *end) break;
        snprintf(out, len, "%lld", v);
        return TESS_OK;
    }
    case TESS_ATTR_REAL: {
        double v = strtod(text, &end);
        if (errno || end == text || *end || !isfinite(v)) break;
        if (v == 0) v = 0;   /* -0 and 0 are one value, one key */
        /* the shortest text that reads back as the same double */
        for (int digits = 1; digits <= 17; digits++) {
            snprintf(out, len, "%.*g", digits, v);
            if (strtod(out, NULL) == v) break;
        }
        return TESS_OK;
    }
    case TESS_ATTR_BOOL:
        if (strcmp(text, "1") == 0 || strcmp(text, "true") == 0) return snprintf(out, len, "1"), TESS_OK;
        if (strcmp(text, "0") == 0 || strcmp(text, "false") == 0) return snprintf(out, len, "0"), TESS_OK;
        break;
    case TESS_ATTR_WORD:
        if (!one_of(text, a->choices)) break;
        snprintf(out, len, "%s", text);
        return TESS_OK;
    }
    static const char *const kind[] = {"an integer", "a number", "0 or 1", "one of "};
    return tess_error(TESS_ERR_ARG, "%s: attribute %s=%s must be %s%s", op->name, a->name, text, kind[a->type],
                      a->type == TESS_ATTR_WORD ? a->choices : "");
}

static const tess_attr_spec *attr_spec(const tess_op *op, const char *name) {
    for (int i = 0; i < op->nattrs; i++)
        if (strcmp(op->attrs[i].name, name) == 0) return &op->attrs[i];
    return NULL;
}

static tess_status set_attr(const tess_op *op, tess_task *t, const char *name, const char *value) {
    const tess_attr_spec *a = attr_spec(op, name);
    if (!a) {
        char names[256] = "";
        for (int i = 0; i < op->nattrs; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", op->attrs[i].name);
        return tess_error(TESS_ERR_ARG, "%s has no attribute '%s' (%s)", op->name, name,
                          op->nattrs ? names : "it takes none");
    }
    char canonical[TESS_ATTR_VALUE_MAX + 8];
    tess_status st = canonical_value(op, a, value, canonical, sizeof canonical);
    return st ? st : tess_task_set_attr(t, name, canonical);
}

tess_status tess_op_make_task(const tess_op *op, tess_dtype in, tess_dtype acc, tess_dtype out,
                              const int64_t *shape, int ndim, const char *attrs, tess_task *t) {
    tess_status st = tess_task_init(t, op->name, in, shape, ndim);
    if (st) return st;
    tess_task_set_dtypes(t, acc == TESS_DTYPE_COUNT ? in : acc, out == TESS_DTYPE_COUNT ? in : out);
    if (!op->dtype_roles && (t->acc_dtype != in || t->out_dtype != in))
        return tess_error(TESS_ERR_ARG, "%s takes one dtype for input, accumulation and output, not %s,%s,%s",
                          op->name, tess_dtype_name(in), tess_dtype_name(t->acc_dtype), tess_dtype_name(t->out_dtype));
    st = tess_task_name_extents(t, op->extents);
    for (int i = 0; i < op->nattrs && !st; i++) st = set_attr(op, t, op->attrs[i].name, op->attrs[i].dflt);
    if (!st && attrs && *attrs) {
        char list[512];
        if (strlen(attrs) >= sizeof list) return tess_error(TESS_ERR_ARG, "attributes '%.64s...' too long", attrs);
        strcpy(list, attrs);
        for (char *save = NULL, *a = strtok_r(list, ",", &save); a && !st; a = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(a, '=');
            if (!eq) return tess_error(TESS_ERR_ARG, "attribute '%s' needs a value (name=value)", a);
            *eq = '\0';
            st = set_attr(op, t, a, eq + 1);
        }
    }
    return st ? st : op->check_task(op, t);
}

/* ---- the doors ---------------------------------------------------------------------------- */

/* The backend half for dev, after the device's architecture is checked
 * against the operator's minimum. */
static tess_status impl_for(const tess_op *op, const tess_device *dev, const tess_op_backend **out) {
    *out = tess_op_backend_find(op, dev->backend);
    if (!*out)
        return tess_error(TESS_ERR_UNAVAILABLE, "operator %s has no %s code generator", op->name, dev->backend);
    if (!(*out)->min_arch) return TESS_OK;
    int need, have;
    bool specific, have_specific;
    tess_status st = tess_arch_parse((*out)->min_arch, &need, &specific);
    if (!st) st = tess_arch_parse(dev->arch, &have, &have_specific);
    if (st) return st;
    /* arch-specific features (the 'a' targets) exist on exactly that architecture */
    if (have < need || (specific && have != need))
        return tess_error(TESS_ERR_UNAVAILABLE, "operator %s needs %s; this device is %s", op->name,
                          (*out)->min_arch, dev->arch);
    return TESS_OK;
}

tess_status tess_op_check_device(const tess_op *op, const tess_device *dev) {
    const tess_op_backend *b;
    return impl_for(op, dev, &b);
}

tess_status tess_op_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out) {
    *out = NULL;
    const tess_op_backend *b;
    tess_status st = impl_for(op, dev, &b);
    return st ? st : b->space(op, t, dev, out);
}

tess_status tess_op_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                         const tess_config *c, tess_kernel_source *out) {
    memset(out, 0, sizeof *out);
    const tess_op_backend *b;
    tess_status st = impl_for(op, dev, &b);
    return st ? st : b->emit(op, t, dev, s, c, out);
}

tess_status tess_op_buffers(const tess_op *op, const tess_task *t, tess_buffer_list *out) {
    memset(out, 0, sizeof *out);
    tess_status st = op->buffers(op, t, out);
    if (!st && out->n == 0) st = tess_error(TESS_ERR_ARG, "operator %s declares no buffers", op->name);
    if (st) tess_buffer_list_free(out);
    return st;
}

double tess_op_buffer_tolerance(const tess_op *op, const tess_task *t, const tess_buffer_spec *b) {
    return b->tolerance > 0 ? b->tolerance : op->tolerance(op, t);
}
