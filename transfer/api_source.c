/*
 * api_source.c - the public API's generated source (tessera.h): the config
 * tessera would run for a task (or a given one) and the exact source the
 * operator emits for it, optionally compiled, on the probed device or on a
 * typical device of a named CUDA architecture.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "core/records.h"
#include "request.h"

_Static_assert(sizeof(((tess_source *)0)->launch) / sizeof(((tess_source *)0)->launch[0]) == TESS_MAX_LAUNCHES,
               "tess_source holds every launch");

/* The config given (its errors are usage errors), else the best recorded,
 * else the default; says which in origin. */
static tess_status pick_config(tess_context *ctx, const tess_request *s, const tess_space *space,
                               const char *given, tess_config *c, char *origin, size_t len) {
    if (given) {
        tess_status st = tess_config_parse(space, given, c);
        if (st) return tess_error_context(TESS_ERR_ARG, "--config");
        snprintf(origin, len, "given");
        return TESS_OK;
    }
    tess_record_row best;
    tess_status found = ctx ? tess_records_best(tess_context_records(ctx), s->task_key, s->device_key, &best)
                            : TESS_ERR_NOTFOUND;
    if (found == TESS_OK && tess_config_parse(space, best.config, c) == TESS_OK) {
        snprintf(origin, len, "best recorded, %.4g ms", best.time_ms);
        return TESS_OK;
    }
    if (found != TESS_OK && found != TESS_ERR_NOTFOUND) return found;
    tess_space_default(space, c);
    snprintf(origin, len, found == TESS_OK ? "the template's default; the recorded best is not in this space"
                                           : "the template's default");
    return TESS_OK;
}

static void copy_out(const tess_request *s, const tess_kernel_source *src, tess_source *out) {
    snprintf(out->task, sizeof out->task, "%s", s->task_key);
    snprintf(out->device, sizeof out->device, "%s", s->device_key);
    snprintf(out->backend, sizeof out->backend, "%s", s->be->name);
    snprintf(out->options, sizeof out->options, "%s", src->options);
    out->nlaunches = src->nlaunches;
    for (int i = 0; i < src->nlaunches; i++) {
        const tess_launch *l = &src->launch[i];
        snprintf(out->launch[i].entry, sizeof out->launch[i].entry, "%s", l->entry);
        memcpy(out->launch[i].grid, l->grid, sizeof l->grid);
        memcpy(out->launch[i].block, l->block, sizeof l->block);
        out->launch[i].shared_bytes = l->shared_bytes;
    }
}

/* Compiles in this process: the CUDA compiler is NVRTC, which needs no GPU,
 * and the C compiler runs as a child. */
static void compile_source(const tess_request *s, const tess_kernel_source *src, tess_source *out) {
    tess_blob bin = {0};
    char *log = NULL;
    tess_status st = s->be->compile(&s->device, src, &bin, &log);
    out->compiled = st == TESS_OK;
    out->compile_log = log ? log : st ? strdup(tess_errmsg()) : NULL;
    tess_blob_free(&bin);
}

tess_status tess_source_get(tess_context *ctx, const char *op, const int64_t *shape, int ndim,
                            const char *dtype, const char *backend, const tess_source_options *opt,
                            tess_source *out) {
    memset(out, 0, sizeof *out);
    tess_source_options o = opt ? *opt : (tess_source_options){0};
    tess_status st = tess_init();
    tess_request s;
    tess_device typical;
    if (!st && o.arch) {
        if (backend && strcmp(backend, "cuda") != 0)
            return tess_error(TESS_ERR_ARG, "--arch names a CUDA architecture; the %s backend has none", backend);
        st = tess_device_preset(o.arch, &typical);
        if (!st) st = tess_request_resolve_on(op, shape, ndim, dtype, &typical, &s);
    } else if (!st) {
        st = tess_request_resolve(op, shape, ndim, dtype, backend, &s);
    }
    if (st) return st;
    tess_space *space = NULL;
    tess_kernel_source src = {0};
    tess_config c;
    st = tess_op_space(s.op, &s.task, &s.device, &space);
    if (!st) st = pick_config(ctx, &s, space, o.config, &c, out->origin, sizeof out->origin);
    if (!st) st = tess_config_format(space, &c, out->config, sizeof out->config);
    if (!st) st = tess_op_emit(s.op, &s.task, &s.device, space, &c, &src);
    if (!st) {
        copy_out(&s, &src, out);
        if (o.compile) compile_source(&s, &src, out);
        out->code = src.code;   /* handed over */
        src.code = NULL;
    }
    tess_kernel_source_free(&src);
    tess_space_destroy(space);
    return st;
}

void tess_source_free(tess_source *s) {
    if (!s) return;
    free(s->code);
    free(s->compile_log);
    s->code = s->compile_log = NULL;
}
