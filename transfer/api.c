/*
 * api.c - the public API (tessera.h): contexts, tuning with every result
 * recorded, and kernels chosen from the records for a caller's own arrays.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "builtin.h"
#include "core/backend.h"
#include "core/error.h"
#include "core/records.h"
#include "core/runner.h"
#include "core/session.h"
#include "dispatch.h"
#include "request.h"
#include "warmstart.h"

struct tess_context {
    tess_records *db;
    tess_kernel_cache *kernels;     /* dispatched kernels */
};

static tess_status open_context(tess_context **out, const char *db_path, bool readonly) {
    *out = NULL;
    tess_status st = tess_register_builtin();
    if (st) return st;
    tess_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return tess_error(TESS_ERR_NOMEM, "context");
    char default_path[4096];
    if (!db_path || !*db_path) {
        st = tess_records_default_path(default_path, sizeof default_path);
        if (st) {
            free(ctx);
            return st;
        }
        db_path = default_path;
    }
    st = readonly ? tess_records_open_readonly(db_path, &ctx->db) : tess_records_open(db_path, &ctx->db);
    if (!st && !(ctx->kernels = tess_kernel_cache_create())) st = tess_error(TESS_ERR_NOMEM, "context");
    if (st) {
        tess_close(ctx);
        return st;
    }
    *out = ctx;
    return TESS_OK;
}

tess_status tess_open(tess_context **out, const char *db_path) { return open_context(out, db_path, false); }

tess_status tess_open_readonly(tess_context **out, const char *db_path) {
    return open_context(out, db_path, true);
}

void tess_close(tess_context *ctx) {
    if (!ctx) return;
    tess_kernel_cache_destroy(ctx->kernels);
    tess_records_close(ctx->db);
    free(ctx);
}

tess_records *tess_context_records(tess_context *ctx) { return ctx->db; }

tess_tune_options tess_tune_options_default(void) {
    return (tess_tune_options){.strategy = NULL, .budget = 30, .seconds = 0, .seed = 1, .batch = 0,
                               .window = 0};
}

/* The request on dev, or (dev NULL) on the backend's probed device. */
static tess_status resolve(const char *op_name, const int64_t *shape, int ndim, const char *dtype_name,
                           const char *backend, const tess_device *dev, tess_request *s) {
    memset(s, 0, sizeof *s);
    tess_status st = tess_task_resolve(op_name, shape, ndim, dtype_name, &s->op, &s->task);
    if (st) return st;
    if (backend && *backend) {
        s->be = tess_backend_find(backend);
        if (!s->be) return tess_error(TESS_ERR_ARG, "unknown backend '%s' (cpu, cuda)", backend);
        if (!tess_op_supports_backend(s->op, backend))
            return tess_error(TESS_ERR_ARG, "operator %s has no %s code generator", s->op->name, backend);
        if (dev)
            s->device = *dev;
        else if ((st = s->be->probe(&s->device)))
            return tess_error_context(TESS_ERR_UNAVAILABLE, "backend %s is unavailable", backend);
    } else {
        st = tess_backend_best(s->op, &s->be, &s->device);
        if (st) return st;
    }
    st = tess_device_key(&s->device, s->device_key, sizeof s->device_key);
    if (!st) st = tess_task_key(&s->task, s->task_key, sizeof s->task_key);
    return st;
}

tess_status tess_request_resolve(const char *op, const int64_t *shape, int ndim, const char *dtype,
                                 const char *backend, tess_request *s) {
    return resolve(op, shape, ndim, dtype, backend, NULL, s);
}

tess_status tess_request_resolve_on(const char *op, const int64_t *shape, int ndim, const char *dtype,
                                    const tess_device *dev, tess_request *s) {
    return resolve(op, shape, ndim, dtype, dev->backend, dev, s);
}

tess_status tess_request_ceilings(tess_records *db, tess_request *s, bool *measured_now) {
    if (measured_now) *measured_now = false;
    int64_t id;
    tess_status st = tess_records_put_device(db, &s->device, &id);
    if (!st) st = tess_records_load_ceilings(db, &s->device);
    if (st || tess_device_calibrated(&s->device)) return st;
    double rates[TESS_CEILING_COUNT];
    st = tess_backend_calibrate_isolated(s->be, &s->device, rates);
    if (st) return st;
    if (measured_now) *measured_now = true;
    return tess_records_set_ceilings(db, &s->device, rates);
}

/* The warm start that opt->transfer asks for: from this context's records,
 * another records database, or an exported JSON-lines file. */
static tess_status warm_start(tess_context *ctx, const tess_tune_options *opt, const tess_request *s,
                              const tess_space *space, tess_warm_start *out) {
    memset(out, 0, sizeof *out);
    const char *source = opt->transfer ? opt->transfer : "auto";
    if (strcmp(source, "off") == 0) return TESS_OK;
    tess_task_profile target;
    tess_task_profile_init(&target, &s->task, s->op, &s->device, s->device_key);
    if (strcmp(source, "auto") == 0)
        return tess_warm_start_build(ctx->db, &target, space, 4, 3, out);
    size_t len = strlen(source);
    bool jsonl = len > 6 && strcmp(source + len - 6, ".jsonl") == 0;
    char tmp[] = "/tmp/tessera-transfer-XXXXXX";
    char db_path[64];
    tess_records *db = NULL;
    tess_status st;
    if (jsonl) {
        /* an exported file becomes a scratch database for the lookup */
        if (!mkdtemp(tmp)) return tess_error(TESS_ERR_IO, "cannot create a scratch directory in /tmp");
        snprintf(db_path, sizeof db_path, "%s/records.db", tmp);
        st = tess_records_open(db_path, &db);
        FILE *in = st ? NULL : fopen(source, "r");
        if (!st && !in) st = tess_error(TESS_ERR_IO, "cannot open %s: %s", source, strerror(errno));
        if (in) {
            int count;
            st = tess_records_import_jsonl(db, in, source, &count);
            fclose(in);
        }
    } else {
        st = tess_records_open_readonly(source, &db);
    }
    if (!st) st = tess_warm_start_build(db, &target, space, 4, 3, out);
    tess_records_close(db);
    if (jsonl) {
        char path[128];
        const char *const files[] = {"records.db", "records.db-wal", "records.db-shm"};
        for (int i = 0; i < 3; i++) {
            snprintf(path, sizeof path, "%s/%s", tmp, files[i]);
            unlink(path);
        }
        rmdir(tmp);
    }
    return st ? tess_error_context(st, "transfer from %s", source) : TESS_OK;
}

/* The session's warm-start provider: what opt->transfer asks for. */
typedef struct warm_request {
    tess_context *ctx;
    const tess_tune_options *opt;
    const tess_request *s;
} warm_request;

static tess_status provide_warm_start(const tess_space *space, void *user, tess_warm_start *out) {
    const warm_request *w = user;
    return warm_start(w->ctx, w->opt, w->s, space, out);
}

tess_status tess_tune(tess_context *ctx, const char *op, const int64_t *shape, int ndim,
                      const char *dtype, const char *backend, const tess_tune_options *opt_in,
                      tess_tune_report *report) {
    tess_tune_options opt = opt_in ? *opt_in : tess_tune_options_default();
    /* The budget is the task's attribute: shortcut results are another task's. */
    char op_budget[TESS_KEY_MAX];
    if (opt.error_budget < 0 || !(opt.error_budget == opt.error_budget))
        return tess_error(TESS_ERR_ARG, "error budget %g is not a number at least 0", opt.error_budget);
    if (opt.error_budget > 0 && op) {
        int n = snprintf(op_budget, sizeof op_budget, "%s%serror_budget=%.17g", op, strchr(op, ':') ? "," : ":",
                         opt.error_budget);
        if (n < 0 || (size_t)n >= sizeof op_budget) return tess_error(TESS_ERR_ARG, "operator text '%.64s' too long", op);
        op = op_budget;
    }
    tess_request s;
    const tess_strategy_ops *strategy;
    tess_status st = tess_request_resolve(op, shape, ndim, dtype, backend, &s);
    if (st && opt.error_budget > 0) return tess_error_context(st, "--error-budget %g", opt.error_budget);
    if (!st) st = tess_cache_check();
    if (!st) st = tess_session_strategy(&opt, &strategy);   /* before a calibration */
    if (!st) st = tess_request_ceilings(ctx->db, &s, NULL);
    if (st) return st;
    warm_request w = {.ctx = ctx, .opt = &opt, .s = &s};
    tess_session session = {.db = ctx->db, .op = s.op, .be = s.be, .task = s.task, .device = s.device,
                            .warm_start = provide_warm_start, .warm_user = &w};
    return tess_session_tune(&session, &opt, report);
}

tess_dispatch_options tess_dispatch_options_default(void) {
    return (tess_dispatch_options){.online_budget = 0, .online_seconds = 0, .verify = 1};
}

tess_status tess_kernel_get(tess_context *ctx, const char *op, const int64_t *shape, int ndim,
                            const char *dtype, const char *backend, tess_kernel **out) {
    tess_request s;
    tess_status st = tess_request_resolve(op, shape, ndim, dtype, backend, &s);
    return st ? st : tess_kernel_create(ctx->db, &s, false, out);
}

tess_status tess_dispatch(tess_context *ctx, const char *op, const int64_t *shape, int ndim,
                          const char *dtype, const char *backend, const tess_dispatch_options *opt,
                          tess_kernel **out) {
    tess_kernel *k = tess_kernel_cache_find(ctx->kernels, op, shape, ndim, dtype, backend);
    if (k) {
        *out = k;
        return TESS_OK;
    }
    tess_dispatch_options o = opt ? *opt : tess_dispatch_options_default();
    tess_request s;
    tess_status st = tess_request_resolve(op, shape, ndim, dtype, backend, &s);
    if (st) return st;
    if (o.online_budget > 0 || o.online_seconds > 0) {
        tess_record_row best;
        st = tess_records_best(ctx->db, s.task_key, s.device_key, &best);
        if (st == TESS_ERR_NOTFOUND) {
            tess_tune_options t = tess_tune_options_default();
            t.budget = o.online_budget;
            t.seconds = o.online_seconds;
            st = tess_tune(ctx, op, shape, ndim, dtype, s.be->name, &t, NULL);
        }
        if (st) return st;
    }
    st = tess_kernel_create(ctx->db, &s, o.verify != 0, &k);
    if (!st) st = tess_kernel_cache_add(ctx->kernels, op, shape, ndim, dtype, backend, k);
    if (st) {
        tess_kernel_destroy(k);
        return st;
    }
    *out = k;
    return TESS_OK;
}
