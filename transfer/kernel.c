/*
 * kernel.c - a chosen kernel inside the caller's process: the best recorded
 * config for this device (else the template's default), compiled once
 * (the disk cache serves later processes) and run on the caller's arrays.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "session.h"

struct tess_kernel {
    tess_session s;
    tess_space *space;
    tess_kernel_source src;
    void *ctx;
    void *module;
    int nbuf;
    char config[1024];
    char origin[16];
};

tess_status tess_kernel_get(tess_context *ctx, const char *op, const int64_t *shape, int ndim,
                            const char *dtype, const char *backend, tess_kernel **out) {
    tess_kernel *k = calloc(1, sizeof *k);
    if (!k) return tess_error(TESS_ERR_NOMEM, "kernel");
    tess_status st = tess_session_resolve(op, shape, ndim, dtype, backend, &k->s);
    if (!st) st = k->s.op->space(&k->s.task, &k->s.device, &k->space);
    if (st) goto fail;
    tess_config c;
    tess_record_row best;
    st = tess_records_best(tess_context_records(ctx), k->s.task_key, k->s.device_key, &best);
    if (st == TESS_OK && tess_config_parse(k->space, best.config, &c) == TESS_OK) {
        strcpy(k->origin, "exact");
    } else if (st == TESS_OK || st == TESS_ERR_NOTFOUND) {
        /* No usable record: the template's default is always legal. */
        tess_space_default(k->space, &c);
        strcpy(k->origin, "default");
    } else {
        goto fail;
    }
    tess_config_format(k->space, &c, k->config, sizeof k->config);
    tess_buffer_spec specs[TESS_MAX_BUFFERS];
    st = k->s.op->buffers(&k->s.task, specs, &k->nbuf);
    if (!st) st = k->s.op->emit(&k->s.task, &k->s.device, k->space, &c, &k->src);
    if (st) goto fail;
    tess_blob bin = {0};
    char *log = NULL;
    st = k->s.be->compile(&k->s.device, &k->src, &bin, &log);
    if (st) {
        tess_error(st, "compiling %s (%s): %.400s", op, k->config, log ? log : tess_errmsg());
        free(log);
        goto fail;
    }
    free(log);
    tess_kernel_metrics m;
    st = k->s.be->open(&k->s.device, &k->ctx);
    if (!st) st = k->s.be->load(k->ctx, &bin, &k->src, &k->module, &m);
    tess_blob_free(&bin);
    if (st) goto fail;
    *out = k;
    return TESS_OK;
fail:
    tess_kernel_destroy(k);
    return st;
}

const char *tess_kernel_config(const tess_kernel *k) { return k->config; }
const char *tess_kernel_origin(const tess_kernel *k) { return k->origin; }

tess_status tess_kernel_run(tess_kernel *k, void *const *arrays, int narrays) {
    if (narrays != k->nbuf)
        return tess_error(TESS_ERR_ARG, "%s takes %d arrays, %d given", k->s.op->name, k->nbuf, narrays);
    for (int i = 0; i < narrays; i++)
        if (!arrays[i]) return tess_error(TESS_ERR_ARG, "%s: array %d is NULL", k->s.op->name, i);
    return k->s.be->run(k->ctx, k->module, arrays, narrays);
}

void tess_kernel_destroy(tess_kernel *k) {
    if (!k) return;
    if (k->module) k->s.be->unload(k->ctx, k->module);
    if (k->ctx) k->s.be->close(k->ctx);
    tess_kernel_source_free(&k->src);
    tess_space_destroy(k->space);
    free(k);
}
