/* family.c - the stencil family: operators built from stencil specs, and
 * their registration from a library directory or from the copy of the
 * library embedded in the binary. */
#include <dirent.h>
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "core/fsutil.h"
#include "family.h"
#include "gen_cpu.h"
#include "gen_cuda.h"
#include "gen_util.h"
#include "spec_eval.h"

#define FAMILY_MAX 64

typedef struct stencil_entry {
    tess_spec *spec;
    tess_op op;
    char default_shape[64];
    tess_stencil_cuda_limits cuda_limits[2];   /* f32, f64 */
} stencil_entry;

/* Entries live as long as the process: the registry holds their operators. */
static stencil_entry *family[FAMILY_MAX];
static int nfamily;

/* The embedded library: the .stencil files of stencils/templates (see tess_embed). */
extern const char tess_src_stencils_templates_advect2d_stencil[];
extern const char tess_src_stencils_templates_box3d27_stencil[];
extern const char tess_src_stencils_templates_hdiff_stencil[];
extern const char tess_src_stencils_templates_heat2d_stencil[];
extern const char tess_src_stencils_templates_heat3d_stencil[];
extern const char tess_src_stencils_templates_heat3d4_stencil[];
extern const char tess_src_stencils_templates_star3d25_stencil[];
extern const char tess_src_stencils_templates_varcoef3d_stencil[];

static const struct {
    const char *file;
    const char *text;
} builtin[] = {
    {"advect2d.stencil", tess_src_stencils_templates_advect2d_stencil},
    {"box3d27.stencil", tess_src_stencils_templates_box3d27_stencil},
    {"hdiff.stencil", tess_src_stencils_templates_hdiff_stencil},
    {"heat2d.stencil", tess_src_stencils_templates_heat2d_stencil},
    {"heat3d.stencil", tess_src_stencils_templates_heat3d_stencil},
    {"heat3d4.stencil", tess_src_stencils_templates_heat3d4_stencil},
    {"star3d25.stencil", tess_src_stencils_templates_star3d25_stencil},
    {"varcoef3d.stencil", tess_src_stencils_templates_varcoef3d_stencil},
};
#define NBUILTIN ((int)(sizeof builtin / sizeof builtin[0]))

static const stencil_entry *entry_named(const char *name) {
    for (int i = 0; i < nfamily; i++)
        if (strcmp(family[i]->spec->name, name) == 0) return family[i];
    return NULL;
}

static const stencil_entry *entry_of(const tess_op *op) { return op->data; }

/* ---- the operator's functions ------------------------------------------------------ */

static tess_status op_check_task(const tess_op *op, const tess_task *t) {
    return tess_gen_check_task(entry_of(op)->spec, t);
}

static tess_status op_cpu_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out) {
    return tess_stencil_cpu_space(entry_of(op)->spec, t, dev, out);
}

static tess_status op_cuda_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out) {
    const stencil_entry *e = entry_of(op);
    return tess_stencil_cuda_space(e->spec, t, dev, &e->cuda_limits[t->dtype == TESS_F64], out);
}

static tess_status op_buffers(const tess_op *op, const tess_task *t, tess_buffer_list *out) {
    const tess_spec *s = entry_of(op)->spec;
    tess_status st = TESS_OK;
    for (int f = 0; f < s->nfields && !st; f++) {
        st = tess_buffer_list_add(out, s->field[f].name, s->field[f].role == TESS_FIELD_OUT ? TESS_BUF_OUT : TESS_BUF_IN,
                                  tess_spec_field_dtype(s, f, t->dtype), tess_spec_field_count(s, f, t->shape));
        if (st) break;
        /* what a multi-step run needs: time levels, the field's axes, its range */
        tess_buffer_spec *b = &out->spec[f];
        int from = s->field[f].advances;
        snprintf(b->advances, sizeof b->advances, "%s", from >= 0 ? s->field[from].name : "");
        b->rank = s->field[f].rank;
        b->lo = s->field[f].fill_lo;
        b->hi = s->field[f].fill_hi;
    }
    for (int f = 0; s->steps > 1 && f < s->nfields && !st; f++) {
        if (s->field[f].role != TESS_FIELD_OUT) continue;
        char name[TESS_BUFFER_NAME_MAX];
        snprintf(name, sizeof name, "%.19s_tmp", s->field[f].name);
        st = tess_buffer_list_add(out, name, TESS_BUF_SCRATCH, out->spec[f].dtype, out->spec[f].count);
    }
    return st;
}

static tess_status op_fill_input(const tess_op *op, const tess_task *t, int index, void *host, uint64_t seed) {
    const tess_spec *s = entry_of(op)->spec;
    if (index < 0 || index >= s->nfields || s->field[index].role == TESS_FIELD_OUT)
        return tess_error(TESS_ERR_ARG, "stencil '%s': buffer %d is not an input", s->name, index);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng) return tess_error(TESS_ERR_NOMEM, "out of memory creating a random generator");
    gsl_rng_set(rng, (unsigned long)(seed * 1000003u + (uint64_t)index));
    const tess_spec_field *f = &s->field[index];
    int64_t n = tess_spec_field_count(s, index, t->shape);
    bool f32 = tess_spec_field_dtype(s, index, t->dtype) == TESS_F32;
    for (int64_t i = 0; i < n; i++) {
        double v = f->fill_lo + (f->fill_hi - f->fill_lo) * gsl_rng_uniform(rng);
        if (f32) ((float *)host)[i] = (float)v;
        else ((double *)host)[i] = v;
    }
    gsl_rng_free(rng);
    return TESS_OK;
}

static tess_status op_cpu_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *sp,
                               const tess_config *c, tess_kernel_source *out) {
    (void)dev;
    return tess_stencil_cpu_emit(entry_of(op)->spec, t, sp, c, out);
}

static tess_status op_cuda_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *sp,
                                const tess_config *c, tess_kernel_source *out) {
    (void)dev;
    return tess_stencil_cuda_emit(entry_of(op)->spec, t, sp, c, out);
}

static tess_status op_reference(const tess_op *op, const tess_task *t, void *const *host_buffers) {
    return tess_spec_reference(entry_of(op)->spec, t->dtype, t->shape, host_buffers);
}

static double op_flops(const tess_op *op, const tess_task *t) { return tess_spec_flops(entry_of(op)->spec, t->shape); }

static double op_bytes(const tess_op *op, const tess_task *t) {
    return tess_spec_bytes(entry_of(op)->spec, t->dtype, t->shape);
}

static double op_tolerance(const tess_op *op, const tess_task *t) {
    return tess_spec_tolerance(entry_of(op)->spec, t->dtype);
}

static double op_verify_scale(const tess_op *op, const tess_task *t, void *const *host_buffers) {
    double scale = 1;
    tess_spec_scale(entry_of(op)->spec, t->dtype, t->shape, host_buffers, &scale);
    return scale;
}

/* ---- registration ----------------------------------------------------------------- */

static const tess_op_backend impl[] = {
    {.backend = "cpu", .space = op_cpu_space, .emit = op_cpu_emit},
    {.backend = "cuda", .space = op_cuda_space, .emit = op_cuda_emit},
};

tess_status tess_stencils_register_spec(tess_spec *s) {
    if (!s) return tess_error(TESS_ERR_ARG, "no stencil to register");
    tess_status st = tess_spec_finish(s);
    if (st || entry_named(s->name)) {
        tess_spec_destroy(s);
        return st;
    }
    if (nfamily == FAMILY_MAX) {
        tess_spec_destroy(s);
        return tess_error(TESS_ERR_NOMEM, "more than %d stencils", FAMILY_MAX);
    }
    stencil_entry *e = calloc(1, sizeof *e);
    if (!e) {
        tess_spec_destroy(s);
        return tess_error(TESS_ERR_NOMEM, "out of memory registering stencil '%s'", s->name);
    }
    e->spec = s;
    tess_shape_format(s->shape, s->rank, e->default_shape, sizeof e->default_shape);
    tess_stencil_cuda_limits_init(s, TESS_F32, &e->cuda_limits[0]);
    tess_stencil_cuda_limits_init(s, TESS_F64, &e->cuda_limits[1]);
    e->op = (tess_op){
        .name = s->name,
        .family = "stencils",
        .summary = s->summary && *s->summary ? s->summary : s->name,
        .default_shape = e->default_shape,
        .extents = s->rank == 1 ? "x" : s->rank == 2 ? "y,x" : "z,y,x",
        .data = e,
        .impl = impl,
        .nimpl = 2,
        .check_task = op_check_task,
        .buffers = op_buffers,
        .fill_input = op_fill_input,
        .reference = op_reference,
        .flops = op_flops,
        .bytes = op_bytes,
        .tolerance = op_tolerance,
        .verify_scale = op_verify_scale,
    };
    family[nfamily++] = e;
    if (tess_op_find(s->name)) return TESS_OK;   /* a hand-written operator keeps the name */
    return tess_op_register(&e->op);
}

/* Registers one file's text; keeps the first failure in *first. */
static void register_text(const char *text, size_t len, const char *file, tess_status *first, char *msg,
                          size_t msg_len) {
    tess_spec *s;
    tess_status st = tess_spec_parse(text, len, file, &s);
    if (!st) st = tess_stencils_register_spec(s);
    if (st && !*first) {
        *first = st;
        snprintf(msg, msg_len, "%s", tess_errmsg());
    }
}

static int compare_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void tess_stencils_free_paths(char **paths, size_t n) {
    for (size_t i = 0; i < n; i++) free(paths[i]);
    free(paths);
}

tess_status tess_stencils_library_files(const char *lib_dir, char ***paths, size_t *count) {
    *paths = NULL;
    *count = 0;
    DIR *d = opendir(lib_dir);
    if (!d) return tess_error(TESS_ERR_IO, "cannot open stencil library %s", lib_dir);
    char **names = NULL;
    size_t n = 0, cap = 0;
    tess_status st = TESS_OK;
    for (struct dirent *de; !st && (de = readdir(d));) {
        size_t len = strlen(de->d_name);
        if (len <= 8 || strcmp(de->d_name + len - 8, ".stencil") != 0 || de->d_name[0] == '.') continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn) {
                st = tess_error(TESS_ERR_NOMEM, "out of memory listing %s", lib_dir);
                break;
            }
            names = nn;
        }
        size_t path_len = strlen(lib_dir) + len + 2;
        if (!(names[n] = malloc(path_len))) st = tess_error(TESS_ERR_NOMEM, "out of memory listing %s", lib_dir);
        else snprintf(names[n++], path_len, "%s/%s", lib_dir, de->d_name);
    }
    closedir(d);
    if (st) {
        tess_stencils_free_paths(names, n);
        return st;
    }
    if (n) qsort(names, n, sizeof *names, compare_names);
    *paths = names;
    *count = n;
    return TESS_OK;
}

tess_status tess_stencils_register_library(const char *lib_dir) {
    char **paths;
    size_t n;
    tess_status first = tess_stencils_library_files(lib_dir, &paths, &n);
    if (first) return first;
    char msg[1024] = "";
    for (size_t i = 0; i < n; i++) {
        char *text;
        size_t len;
        tess_status st = tess_read_file(paths[i], &text, &len);
        if (st && !first) {
            first = st;
            snprintf(msg, sizeof msg, "%s", tess_errmsg());
        }
        if (!st) register_text(text, len, paths[i], &first, msg, sizeof msg);
        if (!st) free(text);
    }
    tess_stencils_free_paths(paths, n);
    return first ? tess_error(first, "%s", msg) : TESS_OK;
}

tess_status tess_stencils_register_new_file(const char *path, char *name, size_t name_len) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(name, name_len, "%.*s", (int)(strlen(base) > 8 ? strlen(base) - 8 : strlen(base)), base);
    tess_spec *s;
    tess_status st = tess_spec_load(path, &s);
    if (st) return st;
    snprintf(name, name_len, "%s", s->name);
    if (entry_named(s->name) || tess_op_find(s->name)) {
        st = tess_error(TESS_ERR_ARG, "%s: stencil '%s' has the name of a built-in operator (rename it)", path,
                        s->name);
        tess_spec_destroy(s);
        return st;
    }
    return tess_stencils_register_spec(s);
}

tess_status tess_stencils_register_builtin(void) {
    tess_status first = TESS_OK;
    char msg[1024] = "";
    for (int i = 0; i < NBUILTIN; i++)
        register_text(builtin[i].text, strlen(builtin[i].text), builtin[i].file, &first, msg, sizeof msg);
    return first ? tess_error(first, "%s", msg) : TESS_OK;
}

const tess_op *tess_stencils_op(const char *name) {
    const stencil_entry *e = name ? entry_named(name) : NULL;
    return e ? &e->op : NULL;
}

const tess_spec *tess_stencils_spec(const char *name) {
    const stencil_entry *e = name ? entry_named(name) : NULL;
    return e ? e->spec : NULL;
}

int tess_stencils_builtin_count(void) { return NBUILTIN; }
const char *tess_stencils_builtin_file(int i) { return i >= 0 && i < NBUILTIN ? builtin[i].file : NULL; }
const char *tess_stencils_builtin_text(int i) { return i >= 0 && i < NBUILTIN ? builtin[i].text : NULL; }
