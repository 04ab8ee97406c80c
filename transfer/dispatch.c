/*
 * dispatch.c - kernels inside the caller's process: the config to run for a
 * task (exact record, transfer prediction, or the template's default),
 * compiled once and cached per context, verified on first use.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "core/problem.h"
#include "core/runner.h"
#include "dispatch.h"
#include "warmstart.h"

struct tess_kernel {
    tess_request s;
    tess_space *space;
    tess_kernel_source src;
    void *ctx;
    void *module;
    int nbuf;
    char config[1024];
    char origin[16];
    char note[600];
};

/* Compiles and loads config c of the request's task in this process. */
static tess_status kernel_build(const tess_request *s, const tess_config *c, const char *origin,
                                tess_kernel **out) {
    tess_kernel *k = calloc(1, sizeof *k);
    if (!k) return tess_error(TESS_ERR_NOMEM, "kernel");
    k->s = *s;
    snprintf(k->origin, sizeof k->origin, "%s", origin);
    tess_buffer_list buffers;
    tess_status st = tess_op_space(s->op, &k->s.task, &k->s.device, &k->space);
    if (!st) st = tess_config_format(k->space, c, k->config, sizeof k->config);
    if (!st && !(st = tess_op_buffers(s->op, &k->s.task, &buffers))) {
        k->nbuf = buffers.n;
        tess_buffer_list_free(&buffers);
    }
    if (!st) st = tess_op_emit(s->op, &k->s.task, &k->s.device, k->space, c, &k->src);
    tess_blob bin = {0};
    if (!st) {
        char *log = NULL;
        st = s->be->compile(&k->s.device, &k->src, &bin, &log);
        if (st) tess_error(st, "compiling %s (%s): %.400s", s->op->name, k->config, log ? log : tess_errmsg());
        free(log);
    }
    tess_kernel_metrics m;
    if (!st) {
        tess_note_in_process_kernels();
        st = s->be->open(&k->s.device, &k->ctx);
    }
    if (!st) st = s->be->load(k->ctx, &bin, &k->src, &k->module, &m);
    tess_blob_free(&bin);
    if (st) {
        tess_kernel_destroy(k);
        return st;
    }
    *out = k;
    return TESS_OK;
}

/* The config to run: the exact record, else the most similar tuned task's
 * best mapped into this space, else the default. */
static tess_status choose_config(tess_records *db, const tess_request *s, tess_config *c,
                                 const char **origin, char *note, size_t note_len) {
    tess_space *space;
    tess_status st = tess_op_space(s->op, &s->task, &s->device, &space);
    if (st) return st;
    tess_record_row best;
    st = tess_records_best(db, s->task_key, s->device_key, &best);
    if (st == TESS_OK && tess_config_parse(space, best.config, c) == TESS_OK) {
        *origin = "exact";
        snprintf(note, note_len, "tuned: %.4g ms", best.time_ms);
    } else if (st == TESS_OK || st == TESS_ERR_NOTFOUND) {
        tess_task_profile target;
        tess_task_profile_init(&target, &s->task, s->op, &s->device, s->device_key);
        tess_warm_start warm;
        st = tess_warm_start_build(db, &target, space, 1, 1, &warm);
        if (!st && warm.n > 0) {
            *c = warm.configs[0];
            *origin = "transfer";
            snprintf(note, note_len, "predicted from %.200s on %.200s (similarity %.2f)", warm.sources[0].task_key,
                     warm.sources[0].device_key, warm.sources[0].similarity);
        } else if (!st) {
            tess_space_default(space, c);
            *origin = "default";
            snprintf(note, note_len, "no tuned task to learn from");
        }
        tess_warm_start_free(&warm);
    }
    tess_space_destroy(space);
    return st;
}

/* Runs k once on random inputs and compares with the reference. */
static tess_status verify_kernel(tess_kernel *k, char *why, size_t len) {
    tess_problem *p;
    tess_status st = tess_problem_create(k->s.op, &k->s.task, 20260101, &p);
    if (st) return st;
    int nbuf = tess_problem_nbuf(p);
    const tess_backend_ops *be = k->s.be;
    void **dev = calloc((size_t)nbuf, sizeof *dev);
    void *check = malloc(tess_problem_largest_output(p) + 1);
    if (!dev || !check) st = tess_error(TESS_ERR_NOMEM, "verification");
    for (int b = 0; b < nbuf && !st; b++) st = be->alloc(k->ctx, tess_buffer_bytes(tess_problem_spec(p, b)) + 1, &dev[b]);
    if (!st) st = tess_problem_upload(p, be, k->ctx, dev);
    bool ok = false;
    tess_result r;
    tess_result_init(&r, NULL);
    if (!st) st = tess_problem_run_check(p, be, k->ctx, k->module, dev, NULL, check, &r, &ok);
    if (!st && !ok) snprintf(why, len, "%s", r.message);
    for (int b = 0; dev && b < nbuf; b++)
        if (dev[b]) be->release(k->ctx, dev[b]);
    free(dev);
    free(check);
    tess_problem_destroy(p);
    if (!st && !ok) return TESS_ERR_VERIFY;
    return st;
}

tess_status tess_kernel_create(tess_records *db, const tess_request *s, bool verify, tess_kernel **out) {
    tess_config c;
    const char *origin;
    char note[512];
    tess_status st = choose_config(db, s, &c, &origin, note, sizeof note);
    if (!st) st = kernel_build(s, &c, origin, out);
    if (st) return st;
    snprintf((*out)->note, sizeof (*out)->note, "%s", note);
    if (!verify) return TESS_OK;
    char why[512] = "";
    st = verify_kernel(*out, why, sizeof why);
    if (st == TESS_OK) return TESS_OK;
    tess_kernel_destroy(*out);
    *out = NULL;
    if (st != TESS_ERR_VERIFY) return st;
    /* The chosen config computes wrong values here: run the default instead. */
    tess_space *space;
    st = tess_op_space(s->op, &s->task, &s->device, &space);
    if (st) return st;
    tess_space_default(space, &c);
    tess_space_destroy(space);
    st = kernel_build(s, &c, "fallback", out);
    if (!st)
        snprintf((*out)->note, sizeof (*out)->note, "the %s config failed verification: %.500s", origin, why);
    return st;
}

const char *tess_kernel_config(const tess_kernel *k) { return k->config; }
const char *tess_kernel_origin(const tess_kernel *k) { return k->origin; }
const char *tess_kernel_note(const tess_kernel *k) { return k->note; }

static tess_status check_arrays(const tess_kernel *k, void *const *arrays, int narrays) {
    if (narrays != k->nbuf)
        return tess_error(TESS_ERR_ARG, "%s takes %d arrays, %d given", k->s.op->name, k->nbuf, narrays);
    for (int i = 0; i < narrays; i++)
        if (!arrays[i]) return tess_error(TESS_ERR_ARG, "%s: array %d is NULL", k->s.op->name, i);
    return TESS_OK;
}

tess_status tess_kernel_run(tess_kernel *k, void *const *arrays, int narrays) {
    tess_status st = check_arrays(k, arrays, narrays);
    return st ? st : k->s.be->run(k->ctx, k->module, arrays, narrays);
}

tess_status tess_kernel_run_on_stream(tess_kernel *k, void *const *arrays, int narrays, void *stream) {
    tess_status st = check_arrays(k, arrays, narrays);
    if (st) return st;
    if (k->s.be->run_async) return k->s.be->run_async(k->ctx, k->module, arrays, narrays, stream);
    if (stream)
        return tess_error(TESS_ERR_ARG, "%s: the %s backend runs synchronously and takes no stream (pass NULL)",
                          k->s.op->name, k->s.be->name);
    return k->s.be->run(k->ctx, k->module, arrays, narrays);
}

/* Hands the kernel's scalar i, with its new value, to the loaded module. */
static tess_status apply_scalar(tess_kernel *k, int i, const tess_scalar *value) {
    if (!k->s.be->set_scalar)
        return tess_error(TESS_ERR_UNAVAILABLE, "%s: the %s backend cannot change kernel arguments", k->s.op->name,
                          k->s.be->name);
    tess_status st = k->s.be->set_scalar(k->ctx, k->module, i, value);
    if (!st) k->src.scalar[i] = *value;
    return st;
}

/* "a, b" (or "none"). */
static void scalar_names(const tess_kernel_source *src, char *buf, size_t len) {
    snprintf(buf, len, "%s", src->nscalars ? "" : "none");
    for (int i = 0; i < src->nscalars; i++) {
        size_t n = strlen(buf);
        snprintf(buf + n, len - n, "%s%s", i ? ", " : "", src->scalar[i].name);
    }
}

tess_status tess_kernel_set_scalar(tess_kernel *k, const char *name, double value) {
    int i = name ? tess_kernel_source_find_scalar(&k->src, name) : -1;
    if (i < 0) {
        char names[TESS_MAX_SCALARS * 26];
        scalar_names(&k->src, names, sizeof names);
        return tess_error(TESS_ERR_ARG, "%s (%s) has no scalar argument '%s' (it takes: %s)", k->s.op->name,
                          k->config, name ? name : "(null)", names);
    }
    tess_scalar v = k->src.scalar[i];
    bool integer = v.type == TESS_SCALAR_I32 || v.type == TESS_SCALAR_I64;
    double lo = v.type == TESS_SCALAR_I32 ? (double)INT32_MIN : -0x1p63, hi = v.type == TESS_SCALAR_I32 ? 0x1p31 : 0x1p63;
    if (integer && !(value == trunc(value) && value >= lo && value < hi))
        return tess_error(TESS_ERR_ARG, "%s: scalar '%s' is a %d-bit integer; %.17g is not one", k->s.op->name, name,
                          v.type == TESS_SCALAR_I32 ? 32 : 64, value);
    tess_scalar_assign(&v, value);
    return apply_scalar(k, i, &v);
}

tess_status tess_kernel_set_extent(tess_kernel *k, const char *name, int64_t value) {
    const tess_task *t = &k->s.task;
    int e = -1;
    for (int d = 0; name && d < t->ndim; d++)
        if (strcmp(t->dim[d], name) == 0) e = d;
    if (e < 0)
        return tess_error(TESS_ERR_ARG, "%s has no extent '%s' (its extents: %s)", k->s.op->name,
                          name ? name : "(null)", k->s.op->extents ? k->s.op->extents : "unnamed");
    if (!(k->src.runtime_extents & (UINT32_C(1) << e)))
        return tess_error(TESS_ERR_ARG, "%s (%s): extent '%s' is compiled into the kernel; it cannot be set at run time",
                          k->s.op->name, k->config, name);
    if (value < 1 || value > t->shape[e])
        return tess_error(TESS_ERR_ARG,
                          "%s: extent '%s' = %lld, outside 1..%lld (the task the kernel was made for sizes its "
                          "buffers and tables: get a kernel for a larger task)",
                          k->s.op->name, name, (long long)value, (long long)t->shape[e]);
    int i = tess_kernel_source_find_scalar(&k->src, name);
    if (i < 0 || k->src.scalar[i].type != TESS_SCALAR_I64)
        return tess_error(TESS_ERR_INTERNAL, "%s (%s): run-time extent '%s' has no 64-bit integer scalar of its name",
                          k->s.op->name, k->config, name);
    tess_scalar v = k->src.scalar[i];
    v.value.i64 = value;
    return apply_scalar(k, i, &v);
}

void tess_kernel_destroy(tess_kernel *k) {
    if (!k) return;
    if (k->module) k->s.be->unload(k->ctx, k->module);
    if (k->ctx) k->s.be->close(k->ctx);
    tess_kernel_source_free(&k->src);
    tess_space_destroy(k->space);
    free(k);
}

tess_status tess_kernel_alloc(tess_kernel *k, size_t bytes, void **ptr) {
    *ptr = NULL;
    tess_status st = k->s.be->alloc(k->ctx, bytes, ptr);
    /* Fresh device memory may hold anything; NaN bytes on request make a
     * program that reads what it never wrote fail on every backend. */
    const char *poison = getenv("TESSERA_POISON");
    if (!st && poison && strcmp(poison, "1") == 0) st = k->s.be->poison(k->ctx, *ptr, bytes);
    if (st && *ptr) {
        k->s.be->release(k->ctx, *ptr);
        *ptr = NULL;
    }
    return st;
}

void tess_kernel_free(tess_kernel *k, void *ptr) {
    if (ptr) k->s.be->release(k->ctx, ptr);
}

tess_status tess_kernel_upload(tess_kernel *k, void *dst, const void *host, size_t bytes) {
    return k->s.be->upload(k->ctx, dst, host, bytes);
}

tess_status tess_kernel_download(tess_kernel *k, void *host, const void *src, size_t bytes) {
    return k->s.be->download(k->ctx, host, src, bytes);
}
