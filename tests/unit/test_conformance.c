/*
 * test_conformance.c - the operator contract (core/op.h), checked the same
 * way for every registered operator and every backend it declares, so that
 * a new family is covered by being registered:
 *   - registration refuses a copy with any required slot cleared, naming
 *     the slot, and a second operator under a name already taken;
 *   - small tasks, f32 and f64 where accepted: extents named as the
 *     operator declares, every declared attribute present, keys that parse
 *     back to themselves, positive finite byte and FLOP counts and
 *     tolerances;
 *   - per backend: a space with a valid default, whose default, largest
 *     config (every parameter at its last legal value: what a small task is
 *     smallest for) and seeded samples emit sources that define their
 *     launch entries;
 *   - cuda, on an A100 (sm_80) and an H200 (sm_90): the default and a
 *     sampled source compile with NVRTC for every architecture the operator
 *     claims (that part skipped where NVRTC cannot be loaded), and a device
 *     below the operator's minimum architecture is refused;
 *   - cpu: the default, largest and a sampled config pass the hardware evaluator,
 *     which records a kernel writing a constant as wrong_result; the default
 *     kernel's outputs, run in this process, pass tess_problem_verify, and
 *     fail it with one element off by 100x its tolerance, or NaN.
 * No built-in operator declares attributes yet, so a copy of sum declaring
 * one of each type is registered as well.
 */
#include <ctype.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "a100.h"
#include "check.h"
#include "core/backend.h"
#include "core/error.h"
#include "core/evaluator.h"
#include "core/problem.h"
#include "core/strbuf.h"
#include "transfer/builtin.h"

#define SAMPLES 3     /* sampled configs emitted per task and device; the first is compiled and evaluated */
#define CHECKED (2 + SAMPLES)   /* the default, the largest (largest_config) and the samples */
#define MAX_IMPL 8    /* backends an operator declares, at most, for the copies below */

static const tess_dtype dtypes[] = {TESS_F32, TESS_F64};
static const tess_backend_ops *cpu, *cuda;   /* cuda: NULL in builds without the toolkit */
static tess_device cpu_dev;
static bool nvrtc_missing;

/* ---- registration ---------------------------------------------------------------- */

enum { SLOT_FAMILY, SLOT_SUMMARY, SLOT_DEFAULT_SHAPE, SLOT_EXTENTS, SLOT_ATTRS, SLOT_CHECK_TASK, SLOT_BUFFERS,
       SLOT_REFERENCE, SLOT_FLOPS, SLOT_BYTES, SLOT_TOLERANCE, SLOT_IMPL, SLOT_COUNT };
/* As tess_op_check_complete names them. */
static const char *const slot_name[SLOT_COUNT] = {
    "family", "summary", "default_shape", "extents", "attrs", "check_task", "buffers",
    "reference", "flops", "bytes", "tolerance", "impl",
};

static void clear_slot(tess_op *op, int slot) {
    switch (slot) {
    case SLOT_FAMILY: op->family = NULL; break;
    case SLOT_SUMMARY: op->summary = NULL; break;
    case SLOT_DEFAULT_SHAPE: op->default_shape = NULL; break;
    case SLOT_EXTENTS: op->extents = NULL; break;
    case SLOT_ATTRS: op->attrs = NULL; break;
    case SLOT_CHECK_TASK: op->check_task = NULL; break;
    case SLOT_BUFFERS: op->buffers = NULL; break;
    case SLOT_REFERENCE: op->reference = NULL; break;
    case SLOT_FLOPS: op->flops = NULL; break;
    case SLOT_BYTES: op->bytes = NULL; break;
    case SLOT_TOLERANCE: op->tolerance = NULL; break;
    case SLOT_IMPL: op->nimpl = 0; break;
    }
}

enum { IMPL_BACKEND, IMPL_SPACE, IMPL_EMIT, IMPL_SLOT_COUNT };
static const char *const impl_slot_name[IMPL_SLOT_COUNT] = {"impl[].backend", "impl[].space", "impl[].emit"};

static void clear_impl_slot(tess_op_backend *b, int slot) {
    switch (slot) {
    case IMPL_BACKEND: b->backend = NULL; break;
    case IMPL_SPACE: b->space = NULL; break;
    case IMPL_EMIT: b->emit = NULL; break;
    }
}

/* A copy of op under another name, with its own copy of the backend table. */
static void copy_op(const tess_op *op, const char *name, tess_op *copy, tess_op_backend impl[MAX_IMPL]) {
    *copy = *op;
    copy->name = name;
    memcpy(impl, op->impl, (size_t)op->nimpl * sizeof *impl);
    copy->impl = impl;
}

/* An operator lacking `slot` is incomplete, saying so, and registering it
 * changes nothing. */
static void check_refused(const tess_op *copy, const char *slot) {
    int before = tess_op_count();
    char want[64];
    snprintf(want, sizeof want, "no %s", slot);
    tess_status st = tess_op_check_complete(copy);
    CHECK_MSG(st == TESS_ERR_ARG && strstr(tess_errmsg(), want), "%s without %s: status %d, '%s'",
              copy->name, slot, st, tess_errmsg());
    st = tess_op_register(copy);
    CHECK_MSG(st == TESS_ERR_ARG && strstr(tess_errmsg(), want), "registering %s without %s: status %d, '%s'",
              copy->name, slot, st, tess_errmsg());
    CHECK(tess_op_count() == before && tess_op_find(copy->name) == NULL);
}

static void check_registration(const tess_op *op) {
    /* static: the registry would keep a pointer to a copy it wrongly accepted */
    static tess_op copy;
    static tess_op_backend impl[MAX_IMPL];
    static const char name[] = "conformance_copy";
    CHECK_MSG(op->nimpl <= MAX_IMPL, "%s declares %d backends", op->name, op->nimpl);
    if (op->nimpl > MAX_IMPL) return;
    for (int s = 0; s < SLOT_COUNT; s++) {
        if (s == SLOT_ATTRS && op->nattrs == 0) continue;   /* attrs may be NULL then */
        copy_op(op, name, &copy, impl);
        clear_slot(&copy, s);
        check_refused(&copy, slot_name[s]);
    }
    for (int i = 0; i < op->nimpl; i++)
        for (int s = 0; s < IMPL_SLOT_COUNT; s++) {
            copy_op(op, name, &copy, impl);
            clear_impl_slot(&impl[i], s);
            check_refused(&copy, impl_slot_name[s]);
        }
    copy_op(op, name, &copy, impl);
    CHECK_OK(tess_op_check_complete(&copy));
    /* complete, but under a name already taken */
    copy.name = op->name;
    tess_status st = tess_op_register(&copy);
    CHECK_MSG(st == TESS_ERR_ARG && strstr(tess_errmsg(), "already registered"), "a second %s: status %d, '%s'",
              op->name, st, tess_errmsg());
    CHECK(tess_op_find(op->name) == op);
}

/* ---- tasks ------------------------------------------------------------------------- */

/* A small task of op in dtype: the default shape with its extents capped
 * at 17, 19, 21, 23, 17, ... (odd, so tiles and vector loops have
 * remainders), the caps doubled until check_task accepts it. False when no
 * shape up to the default is accepted in this dtype. */
static bool small_task(const tess_op *op, tess_dtype dtype, tess_task *t) {
    int64_t dflt[TESS_MAX_DIMS], shape[TESS_MAX_DIMS];
    int ndim = 0;
    CHECK_OK(tess_shape_parse(op->default_shape, dflt, &ndim));
    for (int64_t factor = 1; ndim > 0; factor *= 2) {
        bool capped = false;
        for (int a = 0; a < ndim; a++) {
            int64_t cap = factor * (17 + 2 * (a % 4));
            shape[a] = dflt[a] < cap ? dflt[a] : cap;
            capped |= dflt[a] > cap;
        }
        if (tess_op_make_task(op, dtype, TESS_DTYPE_COUNT, TESS_DTYPE_COUNT, shape, ndim, NULL, t) == TESS_OK)
            return true;
        if (!capped) break;
    }
    return false;
}

static void check_task(const tess_op *op, const tess_task *t) {
    char key[TESS_KEY_MAX], again[TESS_KEY_MAX], names[TESS_MAX_DIMS * TESS_DIM_NAME_MAX];
    CHECK_OK(tess_task_key(t, key, sizeof key));
    /* the extents take the operator's trailing names, one each */
    CHECK_OK(tess_task_extents_format(t, names, sizeof names));
    size_t n = strlen(names), all = strlen(op->extents);
    CHECK_MSG(n > 0 && n <= all && strcmp(op->extents + all - n, names) == 0 && (n == all || op->extents[all - n - 1] == ','),
              "%s: extents named '%s', the operator's are '%s'", key, names, op->extents);
    for (int i = 0; i < t->ndim; i++)
        CHECK_MSG(tess_task_extent(t, t->dim[i]) == t->shape[i], "%s: extent '%s'", key, t->dim[i]);
    CHECK_MSG(t->nattrs == op->nattrs, "%s: %d attributes, %d declared", key, t->nattrs, op->nattrs);
    for (int i = 0; i < op->nattrs; i++)
        CHECK_MSG(tess_task_attr(t, op->attrs[i].name), "%s: attribute %s missing", key, op->attrs[i].name);
    /* the attributes are canonical: given back as text, they make the same task */
    char attrs[TESS_KEY_MAX];
    tess_task same;
    CHECK_OK(tess_task_attrs_format(t, attrs, sizeof attrs));
    CHECK_OK(tess_op_make_task(op, t->dtype, t->acc_dtype, t->out_dtype, t->shape, t->ndim, attrs, &same));
    CHECK_MSG(tess_task_equal(t, &same), "%s: made again with '%s', a different task", key, attrs);

    tess_task parsed;
    CHECK_OK(tess_task_parse_key(key, &parsed));
    CHECK_OK(tess_task_key(&parsed, again, sizeof again));
    CHECK_MSG(strcmp(key, again) == 0 && tess_task_equal(t, &parsed), "%s parsed back as %s", key, again);

    double bytes = op->bytes(op, t), flops = op->flops(op, t);
    CHECK_MSG(isfinite(bytes) && bytes > 0 && isfinite(flops) && flops > 0, "%s: %g bytes, %g flops", key, bytes,
              flops);
    tess_buffer_list bufs;
    CHECK_OK(tess_op_buffers(op, t, &bufs));
    int outputs = 0;
    for (int b = 0; b < bufs.n; b++) {
        if (!tess_buffer_is_output(&bufs.spec[b])) continue;
        outputs++;
        double tol = tess_op_buffer_tolerance(op, t, &bufs.spec[b]);
        CHECK_MSG(isfinite(tol) && tol > 0, "%s: output %s has tolerance %g", key, bufs.spec[b].name, tol);
    }
    CHECK_MSG(outputs > 0, "%s: no output to verify", key);
    tess_buffer_list_free(&bufs);
}

/* ---- spaces and sources ---------------------------------------------------------- */

/* Whether code defines (or declares) a function named entry. */
static bool names_entry(const char *code, const char *entry) {
    size_t n = strlen(entry);
    for (const char *p = code; n > 0 && (p = strstr(p, entry)); p += n) {
        bool starts = p == code || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
        if (starts && p[n] == '(') return true;
    }
    return false;
}

/* Emits config c, checking what every source promises: code and 1 to
 * TESS_MAX_LAUNCHES launches whose entries it names. */
static bool emit_source(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                        const tess_config *c, tess_kernel_source *src) {
    char text[512];
    tess_config_format(s, c, text, sizeof text);
    tess_status st = tess_op_emit(op, t, dev, s, c, src);
    CHECK_MSG(st == TESS_OK, "%s on %s, %s: %s", t->op, dev->arch, text, tess_errmsg());
    if (st) return false;
    CHECK_MSG(src->code && src->nlaunches >= 1 && src->nlaunches <= TESS_MAX_LAUNCHES, "%s on %s, %s: %d launches",
              t->op, dev->arch, text, src->nlaunches);
    for (int l = 0; src->code && l < src->nlaunches && l < TESS_MAX_LAUNCHES; l++)
        CHECK_MSG(names_entry(src->code, src->launch[l].entry), "%s on %s, %s: the source has no entry '%s'", t->op,
                  dev->arch, text, src->launch[l].entry);
    return src->code != NULL;
}

/* Compiles src with NVRTC for dev's architecture and finds each launch's
 * entry in the binary; notes instead when NVRTC cannot be loaded. */
static void check_compiles(const tess_device *dev, const tess_task *t, const tess_kernel_source *src) {
    if (nvrtc_missing) return;
    tess_blob bin = {0};
    char *log = NULL;
    tess_status st = cuda->compile(dev, src, &bin, &log);
    if (st == TESS_ERR_UNAVAILABLE) {
        printf("CUDA sources not compiled: %s\n", tess_errmsg());
        nvrtc_missing = true;
    } else {
        CHECK_MSG(st == TESS_OK, "%s for %s: %s\n%s", t->op, dev->arch, tess_errmsg(), log ? log : "");
        for (int l = 0; st == TESS_OK && l < src->nlaunches; l++)
            CHECK_MSG(memmem(bin.data, bin.size, src->launch[l].entry, strlen(src->launch[l].entry)),
                      "%s for %s: entry %s missing from the binary", t->op, dev->arch, src->launch[l].entry);
    }
    free(log);
    tess_blob_free(&bin);
}

/* The default with each parameter in turn moved to its last value that
 * keeps the config legal: the tiles, unrolls and counts that a small task
 * is smallest for. */
static void largest_config(const tess_space *s, tess_config *c) {
    tess_space_default(s, c);
    for (int p = 0; p < tess_space_nparams(s); p++) {
        int keep = c->v[p], i = tess_space_param_size(s, p) - 1;
        for (; i > keep; i--) {
            c->v[p] = i;
            if (tess_space_valid(s, c)) break;
        }
        c->v[p] = i;
    }
}

/* The configs checked in a space: its default, its largest and `nsamples`
 * seeded samples (at most SAMPLES); returns how many. */
static int checked_configs(const tess_space *s, gsl_rng *rng, int nsamples, tess_config c[CHECKED]) {
    tess_space_default(s, &c[0]);
    largest_config(s, &c[1]);
    int n = 2;
    for (; n < 2 + nsamples; n++)
        if (tess_space_sample(s, rng, &c[n]) != TESS_OK) {
            CHECK_MSG(false, "no sample: %s", tess_errmsg());
            break;
        }
    return n;
}

/* The space of t on dev: its default valid, the checked configs emitted;
 * with `compile`, the default and the first sample compiled too (NVRTC's
 * compiles are most of this test's time). */
static void check_space(const tess_op *op, const tess_task *t, const tess_device *dev, gsl_rng *rng, bool compile) {
    tess_space *s = NULL;
    tess_status st = tess_op_space(op, t, dev, &s);
    CHECK_MSG(st == TESS_OK, "%s on %s: %s", t->op, dev->arch, tess_errmsg());
    if (!s) return;
    tess_config c[CHECKED];
    int n = checked_configs(s, rng, SAMPLES, c);
    CHECK_MSG(tess_space_valid(s, &c[0]), "%s on %s: the default violates %s", t->op, dev->arch,
              tess_space_violation(s, &c[0]));
    for (int i = 0; i < n; i++) {
        tess_kernel_source src;
        if (emit_source(op, t, dev, s, &c[i], &src) && compile && (i == 0 || i == 2)) check_compiles(dev, t, &src);
        tess_kernel_source_free(&src);
    }
    tess_space_destroy(s);
}

/* Whether a backend half of minimum architecture min_arch (NULL: any)
 * claims dev: the same or a newer architecture, exactly it for an
 * arch-specific ('a') minimum. */
static bool claims(const char *min_arch, const tess_device *dev) {
    if (!min_arch) return true;
    int need, have;
    bool specific, have_specific;
    CHECK_OK(tess_arch_parse(min_arch, &need, &specific));
    CHECK_OK(tess_arch_parse(dev->arch, &have, &have_specific));
    return have >= need && (!specific || have == need);
}

/* Spaces are refused, not built, on a device below the minimum architecture. */
static void check_refused_device(const tess_op *op, const tess_task *t, const tess_device *dev) {
    tess_space *s = NULL;
    tess_status st = tess_op_space(op, t, dev, &s);
    CHECK_MSG(st == TESS_ERR_UNAVAILABLE && !s, "%s on %s: %s", op->name, dev->arch,
              st ? tess_errmsg() : "a space was built");
    tess_space_destroy(s);
}

/* The CUDA half on each device it claims; every operator, its minimum
 * raised to sm_90 or sm_90a, refuses the A100. */
static void check_cuda(const tess_op *op, const tess_op_backend *impl, const tess_task *t, gsl_rng *rng,
                       bool compile) {
    const tess_device devs[] = {tess_test_a100("NVIDIA A100"), tess_test_h200("NVIDIA H200")};
    for (size_t d = 0; d < sizeof devs / sizeof devs[0]; d++) {
        if (claims(impl->min_arch, &devs[d])) check_space(op, t, &devs[d], rng, compile && cuda);
        else check_refused_device(op, t, &devs[d]);
    }
    static const char *const newer[] = {"sm_90", "sm_90a"};
    for (size_t i = 0; i < sizeof newer / sizeof newer[0]; i++) {
        tess_op raised;
        tess_op_backend table[MAX_IMPL];
        copy_op(op, op->name, &raised, table);
        table[impl - op->impl].min_arch = newer[i];
        check_refused_device(&raised, t, &devs[0]);
    }
}

/* ---- the evaluator ----------------------------------------------------------------- */

typedef struct outcomes {
    int n[TESS_OUTCOME_COUNT];
    char message[512];   /* the first failure's */
} outcomes;

static void count_outcome(const tess_result *r, void *user) {
    outcomes *o = user;
    if (r->status != TESS_RESULT_OK && !o->message[0]) snprintf(o->message, sizeof o->message, "%s", r->message);
    o->n[r->status]++;
}

/* The first n checked configs of op's cpu space for t (the default, the
 * largest, a sample), through the hardware evaluator. */
static outcomes evaluate(const tess_op *op, const tess_task *t, gsl_rng *rng, int n) {
    outcomes out = {{0}, ""};
    tess_hw_options o = tess_hw_options_default();
    o.timeout_s = 30;
    o.min_time_s = 0.001;
    tess_space *space = NULL;
    tess_evaluator *ev = NULL;
    CHECK_OK(tess_op_space(op, t, &cpu_dev, &space));
    if (space) CHECK_OK(tess_evaluator_create_hw(op, t, space, cpu, &cpu_dev, &o, &ev));
    if (ev) {
        tess_config c[CHECKED];
        checked_configs(space, rng, 1, c);
        CHECK_OK(ev->ops->evaluate(ev, c, n, count_outcome, &out));
        tess_evaluator_destroy(ev);
    }
    tess_space_destroy(space);
    return out;
}

/* A kernel that runs and writes 0.25 to every element of every output. */
static tess_status constant_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                                 const tess_config *c, tess_kernel_source *out) {
    (void)dev, (void)s, (void)c;
    tess_buffer_list bufs;
    tess_status st = tess_op_buffers(op, t, &bufs);
    if (st) return st;
    tess_strbuf code = {0};
    tess_strbuf_puts(&code, "void planted_constant(void *const *b) {\n");
    for (int i = 0; i < bufs.n; i++) {
        const tess_buffer_spec *spec = &bufs.spec[i];
        if (!tess_buffer_is_output(spec)) continue;
        tess_strbuf_printf(&code, "    for (long k = 0; k < %lldL; k++) ((%s *)b[%d])[k] = 0.25;\n",
                           (long long)spec->count, spec->dtype == TESS_F64 ? "double" : "float", i);
    }
    tess_strbuf_puts(&code, "}\n");
    tess_buffer_list_free(&bufs);
    out->nlaunches = 1;
    strcpy(out->launch[0].entry, "planted_constant");
    return tess_strbuf_finish(&code, &out->code);
}

/* With `plant`, a copy of op whose kernel writes a constant too. */
static void check_evaluator(const tess_op *op, const tess_task *t, gsl_rng *rng, bool plant) {
    char key[TESS_KEY_MAX];
    tess_task_key(t, key, sizeof key);
    outcomes good = evaluate(op, t, rng, 3);
    CHECK_MSG(good.n[TESS_RESULT_OK] == 3, "%s: %d of the default, the largest and a sample ok: %s", key,
              good.n[TESS_RESULT_OK], good.message);
    if (!plant) return;
    tess_op planted = *op;
    tess_op_backend impl = *tess_op_backend_find(op, "cpu");
    impl.emit = constant_emit;
    planted.impl = &impl;
    planted.nimpl = 1;
    outcomes bad = evaluate(&planted, t, rng, 1);
    CHECK_MSG(bad.n[TESS_RESULT_WRONG_RESULT] == 1, "%s: a constant kernel was not wrong_result: '%s'", key,
              bad.message);
}

/* ---- verification of outputs run here ---------------------------------------------- */

/* Runs src on the cpu in this process on p's inputs (outputs and scratch
 * poisoned) and downloads every output into got[b] (malloc'd). */
static tess_status run_here(const tess_kernel_source *src, const tess_problem *p, void **got) {
    int n = tess_problem_nbuf(p);
    void **dbuf = calloc((size_t)n, sizeof *dbuf);
    tess_blob bin = {0};
    char *log = NULL;
    void *ctx = NULL, *module = NULL;
    tess_status st = dbuf ? cpu->compile(&cpu_dev, src, &bin, &log) : TESS_ERR_NOMEM;
    if (st == TESS_ERR_COMPILE) fprintf(stderr, "%s\n", log ? log : "");
    if (!st) st = cpu->open(&cpu_dev, &ctx);
    if (!st) st = cpu->load(ctx, &bin, src, &module, NULL);
    for (int b = 0; b < n && !st; b++) {
        size_t bytes = tess_buffer_bytes(tess_problem_spec(p, b));
        const void *in = tess_problem_input(p, b);
        st = cpu->alloc(ctx, bytes ? bytes : 1, &dbuf[b]);
        if (!st) st = in ? cpu->upload(ctx, dbuf[b], in, bytes) : cpu->poison(ctx, dbuf[b], bytes);
    }
    if (!st) st = cpu->run(ctx, module, dbuf, n);
    for (int b = 0; b < n && !st; b++) {
        size_t bytes = tess_buffer_bytes(tess_problem_spec(p, b));
        if (!tess_buffer_is_output(tess_problem_spec(p, b))) continue;
        st = (got[b] = malloc(bytes ? bytes : 1)) ? cpu->download(ctx, got[b], dbuf[b], bytes) : TESS_ERR_NOMEM;
    }
    for (int b = 0; dbuf && b < n; b++)
        if (dbuf[b]) cpu->release(ctx, dbuf[b]);
    if (module) cpu->unload(ctx, module);
    if (ctx) cpu->close(ctx);
    free(dbuf);
    free(log);
    tess_blob_free(&bin);
    return st;
}

/* Output b of p as the kernel wrote it passes; element k moved by 100x
 * its tolerance, or NaN, does not. */
static void check_rejects(const tess_problem *p, int b, void *got, const char *key) {
    const tess_buffer_spec *spec = tess_problem_spec(p, b);
    tess_result res;
    tess_result_init(&res, NULL);
    CHECK_MSG(tess_problem_verify(p, b, got, &res), "%s: the default's %s: %s", key, spec->name, res.message);
    int64_t k = spec->count / 2;
    double want = tess_dtype_load(p->host[b], spec->dtype, k), kept = tess_dtype_load(got, spec->dtype, k);
    CHECK_MSG(!isnan(want), "%s: reference %s[%lld] is NaN", key, spec->name, (long long)k);
    const double planted[] = {want + 100 * p->tolerance[b] * (p->scale + fabs(want)), NAN};
    for (size_t i = 0; i < sizeof planted / sizeof planted[0]; i++) {
        tess_dtype_store(got, spec->dtype, k, planted[i]);
        tess_result_init(&res, NULL);
        bool passed = tess_problem_verify(p, b, got, &res);
        CHECK_MSG(!passed && res.status == TESS_RESULT_WRONG_RESULT, "%s: %s[%lld] = %g (reference %g) passed", key,
                  spec->name, (long long)k, planted[i], want);
    }
    tess_dtype_store(got, spec->dtype, k, kept);
}

static void check_verification(const tess_op *op, const tess_task *t) {
    char key[TESS_KEY_MAX];
    tess_task_key(t, key, sizeof key);
    tess_problem *p = NULL;
    tess_space *s = NULL;
    tess_kernel_source src = {0};
    CHECK_OK(tess_problem_create(op, t, 11, &p));
    CHECK_OK(tess_op_space(op, t, &cpu_dev, &s));
    if (!p || !s) goto done;
    tess_config c;
    tess_space_default(s, &c);
    CHECK_OK(tess_op_emit(op, t, &cpu_dev, s, &c, &src));
    void **got = calloc((size_t)tess_problem_nbuf(p), sizeof *got);
    if (src.code && got) {
        tess_status st = run_here(&src, p, got);
        CHECK_MSG(st == TESS_OK, "%s: running the default: %s", key, tess_errmsg());
        for (int b = 0; !st && b < tess_problem_nbuf(p); b++)
            if (got[b]) check_rejects(p, b, got[b], key);
    }
    for (int b = 0; got && b < tess_problem_nbuf(p); b++) free(got[b]);
    free(got);
done:
    tess_kernel_source_free(&src);
    tess_space_destroy(s);
    tess_problem_destroy(p);
}

/* ---- per operator ------------------------------------------------------------------ */

/* Everything but check_verification, which runs kernels in this process. */
static void check_operator(const tess_op *op, gsl_rng *rng) {
    gsl_rng_set(rng, 42);   /* each operator's samples independent of those registered before it */
    check_registration(op);
    int accepted = 0;
    for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
        tess_task t;
        if (!small_task(op, dtypes[d], &t)) continue;
        check_task(op, &t);
        /* one dtype covers the compiler and the planted kernel; emitting both covers the generator */
        bool first = accepted++ == 0;
        for (int i = 0; i < op->nimpl; i++) {
            const tess_op_backend *impl = &op->impl[i];
            if (strcmp(impl->backend, "cpu") == 0) check_space(op, &t, &cpu_dev, rng, false);
            else if (strcmp(impl->backend, "cuda") == 0) check_cuda(op, impl, &t, rng, first);
            else CHECK_MSG(false, "%s: no device to check backend '%s' on", op->name, impl->backend);
        }
        if (tess_op_supports_backend(op, "cpu")) check_evaluator(op, &t, rng, first);
        char key[TESS_KEY_MAX];
        tess_task_key(&t, key, sizeof key);
        printf("%-10s %s checked\n", op->name, key);
    }
    CHECK_MSG(accepted > 0, "%s accepts neither f32 nor f64 on shapes up to %s", op->name, op->default_shape);
}

/* No built-in operator declares attributes yet: this copy of sum declares
 * one of each type, with defaults written as they may be given, not as keys
 * hold them (its callbacks ignore them). */
static const tess_attr_spec sum_attr_specs[] = {
    {.name = "block", .type = TESS_ATTR_INT, .dflt = "0128", .help = "an integer"},
    {.name = "causal", .type = TESS_ATTR_BOOL, .dflt = "false", .help = "a flag"},
    {.name = "eps", .type = TESS_ATTR_REAL, .dflt = "1e-5", .help = "a number"},
    {.name = "layout", .type = TESS_ATTR_WORD, .dflt = "nt", .choices = "nn,nt,tn,tt", .help = "a word"},
};

static tess_status register_sum_with_attrs(void) {
    static tess_op op;
    const tess_op *sum = tess_op_find("sum");
    if (!sum) return tess_error(TESS_ERR_NOTFOUND, "no operator sum");
    op = *sum;
    op.name = "sum_attrs";
    op.attrs = sum_attr_specs;
    op.nattrs = sizeof sum_attr_specs / sizeof sum_attr_specs[0];
    return tess_op_register(&op);
}

int main(void) {
    CHECK_OK(tess_register_builtin());
    CHECK_OK(register_sum_with_attrs());
    cpu = tess_backend_find("cpu");
    cuda = tess_backend_find("cuda");
    CHECK(cpu != NULL);
    if (!cpu) return check_finish("test_conformance");
    CHECK_OK(cpu->probe(&cpu_dev));
    if (!cuda) printf("built without the CUDA toolkit: CUDA sources emitted but not compiled\n");
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    int nops = tess_op_count();
    CHECK(nops > 0);
    /* First what forks (the evaluator's runner and compile workers): libgomp
     * does not survive a fork once this process has run OpenMP. */
    for (int i = 0; i < nops; i++) check_operator(tess_op_at(i), rng);
    for (int i = 0; i < nops; i++) {
        const tess_op *op = tess_op_at(i);
        for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0] && tess_op_supports_backend(op, "cpu"); d++) {
            tess_task t;
            if (small_task(op, dtypes[d], &t)) check_verification(op, &t);
        }
    }
    gsl_rng_free(rng);
    return check_finish("test_conformance");
}
