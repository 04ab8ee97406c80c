/*
 * api.c - the public API (tessera.h): contexts, tuning with every result
 * recorded, and kernels chosen from the records for a caller's own arrays.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "builtin.h"
#include "core/backend.h"
#include "core/error.h"
#include "core/records.h"
#include "core/runner.h"
#include "core/tune.h"
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
    /* "op" or "op:name=value,...": the operator and its attributes */
    char name[TESS_OP_NAME_MAX];
    const char *colon = op_name ? strchr(op_name, ':') : NULL;
    size_t len = colon ? (size_t)(colon - op_name) : (op_name ? strlen(op_name) : 0);
    if (!op_name || len == 0 || len >= sizeof name) return tess_error(TESS_ERR_ARG, "bad operator name '%s'", op_name ? op_name : "");
    memcpy(name, op_name, len);
    name[len] = '\0';
    s->op = tess_op_find(name);
    if (!s->op) return tess_error(TESS_ERR_ARG, "unknown operator '%s' (see `tessera ops`)", name);
    tess_dtype dt[TESS_ROLE_COUNT];
    tess_status st = tess_task_dtypes_parse(dtype_name ? dtype_name : "f32", dt);
    if (!st) st = tess_op_make_task(s->op, dt[0], dt[1], dt[2], shape, ndim, colon ? colon + 1 : NULL, &s->task);
    if (st) return st;
    if (backend && *backend) {
        s->be = tess_backend_find(backend);
        if (!s->be) return tess_error(TESS_ERR_ARG, "unknown backend '%s' (cpu, cuda)", backend);
        if (!tess_op_supports_backend(s->op, backend))
            return tess_error(TESS_ERR_ARG, "operator %s has no %s code generator", op_name, backend);
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
    if (st || s->device.ceiling_gbps > 0) return st;
    double gbps, gflops;
    st = tess_backend_calibrate_isolated(s->be, &s->device, &gbps, &gflops);
    if (st) return st;
    s->device.ceiling_gbps = gbps;
    s->device.ceiling_gflops = gflops;
    if (measured_now) *measured_now = true;
    return tess_records_set_ceilings(db, &s->device, gbps, gflops);
}

/* What the search loop's results go through on their way to the database. */
typedef struct recorder {
    tess_records *db;
    const tess_space *space;
    int64_t run_id;
    const char *strategy;
    const tess_config *seeds;       /* the default, then the warm start, best first */
    int nseeds;
    const tess_tune_options *opt;
    tess_tune_report *report;
    int done, budget;
    double best_ms, t0;
    tess_status db_error;
} recorder;

/* Where a config came from: "default", "transfer:K" (the K-th warm start)
 * or the strategy. Results arrive as their candidates finish, not in the
 * order proposed, so the config itself tells. */
static const char *origin_of(const recorder *rec, const tess_config *c, char *buf, size_t len) {
    if (tess_config_equal(c, &rec->seeds[0])) return "default";
    for (int i = 1; i < rec->nseeds; i++)
        if (tess_config_equal(c, &rec->seeds[i])) {
            snprintf(buf, len, "transfer:%d", i);
            return buf;
        }
    return rec->strategy;
}

static void on_result(const tess_result *r, void *user) {
    recorder *rec = user;
    char config[1024], label[32];
    const char *origin = origin_of(rec, &r->config, label, sizeof label);
    rec->done++;
    if (r->status == TESS_RESULT_OK && r->time_ms < rec->best_ms) rec->best_ms = r->time_ms;
    if (rec->report && r->status == TESS_RESULT_OK && strcmp(origin, "default") == 0) {
        rec->report->default_ms = r->time_ms;
        rec->report->default_spread = r->spread;
    }
    if (tess_config_format(rec->space, &r->config, config, sizeof config) == TESS_OK) {
        tess_status st = tess_records_put_result(rec->db, rec->run_id, config, r, origin);
        if (st && !rec->db_error) rec->db_error = st;
    }
    if (rec->opt->progress)
        rec->opt->progress(rec->done, rec->budget, rec->best_ms, tess_now() - rec->t0,
                           rec->opt->progress_user);
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

tess_status tess_tune(tess_context *ctx, const char *op, const int64_t *shape, int ndim,
                      const char *dtype, const char *backend, const tess_tune_options *opt_in,
                      tess_tune_report *report) {
    tess_tune_options opt = opt_in ? *opt_in : tess_tune_options_default();
    tess_request s;
    tess_status st = tess_request_resolve(op, shape, ndim, dtype, backend, &s);
    if (!st) st = tess_cache_check();
    if (st) return st;
    const char *strategy_name = opt.strategy ? opt.strategy : tess_strategy_default_name();
    const tess_strategy_ops *strategy = tess_strategy_find(strategy_name);
    if (!strategy)
        return tess_error(TESS_ERR_ARG, "unknown strategy '%s' (see `tessera strategies`)",
                          strategy_name);
    st = tess_request_ceilings(ctx->db, &s, NULL);
    if (st) return st;
    int64_t device_id, task_id, run_id;
    st = tess_records_put_device(ctx->db, &s.device, &device_id);
    if (!st) st = tess_records_put_task(ctx->db, &s.task, s.op->family, &task_id);
    if (st) return st;
    tess_evaluator *ev;
    tess_hw_options hw = tess_hw_options_default();
    hw.seed = opt.seed;
    hw.compile_timeout_s = opt.compile_timeout_s;
    if (opt.full_timing) hw.race_factor = 0;
    st = tess_evaluator_create_hw(s.op, &s.task, s.be, &s.device, &hw, &ev);
    if (st) return st;
    if (opt.fix && (st = tess_space_pin(ev->space, opt.fix))) {
        tess_evaluator_destroy(ev);
        return tess_error_context(TESS_ERR_ARG, "the fixed parameters");   /* the caller's text */
    }
    tess_warm_start warm = {0};
    st = warm_start(ctx, &opt, &s, ev->space, &warm);
    if (!st) st = tess_records_begin_run(ctx->db, task_id, device_id, strategy_name, opt.seed, opt.budget, &run_id);
    if (st) {
        tess_warm_start_free(&warm);
        tess_evaluator_destroy(ev);
        return st;
    }
    if (report) memset(report, 0, sizeof *report);
    /* The default first (the baseline of every speedup), then the warm start. */
    tess_config *seeds = malloc((size_t)(warm.n + 1) * sizeof *seeds);
    if (!seeds) {
        tess_warm_start_free(&warm);
        tess_evaluator_destroy(ev);
        return tess_error(TESS_ERR_NOMEM, "seeds");
    }
    tess_space_default(ev->space, &seeds[0]);
    if (warm.n) memcpy(seeds + 1, warm.configs, (size_t)warm.n * sizeof *seeds);   /* NULL without a warm start */
    recorder rec = {.db = ctx->db, .space = ev->space, .run_id = run_id, .strategy = strategy_name,
                    .seeds = seeds, .nseeds = warm.n + 1,
                    .opt = &opt, .report = report, .budget = opt.budget, .best_ms = INFINITY,
                    .t0 = tess_now()};
    tess_tune_loop_options lo = {.strategy = strategy, .budget = opt.budget, .seconds = opt.seconds,
                                 .window = opt.window, .seed = opt.seed, .batch = opt.batch, .cancel = opt.cancel,
                                 .seeds = seeds, .nseeds = warm.n + 1,
                                 .priors = warm.priors, .npriors = warm.npriors, .on_result = on_result, .user = &rec};
    tess_tune_outcome out;
    st = tess_tune_loop(ev, &lo, &out);
    if (!st && rec.db_error) st = tess_error(rec.db_error, "recording results: %s", tess_errmsg());
    tess_status end = tess_records_end_run(ctx->db, run_id, st ? "error" : out.stop_reason, out.evaluations);
    if (!st) st = end;
    if (!st && report) {
        if (out.found) {
            tess_config_format(ev->space, &out.best.config, report->best_config, sizeof report->best_config);
            report->best_ms = out.best.time_ms;
            report->best_gbps = out.best.gbps;
            report->best_gflops = out.best.gflops;
            report->best_spread = out.best.spread;
        } else {
            report->best_ms = INFINITY;
        }
        report->ceiling_gbps = s.device.ceiling_gbps;
        report->ceiling_gflops = s.device.ceiling_gflops;
        report->working_set_bytes = s.op->bytes(s.op, &s.task);
        report->cache_bytes = (double)s.device.l2_bytes;
        report->evaluations = out.evaluations;
        report->elapsed_s = out.elapsed_s;
        for (int i = 0; i < TESS_OUTCOME_COUNT && i < 6; i++) report->status_counts[i] = out.counts[i];
        snprintf(report->stop_reason, sizeof report->stop_reason, "%s", out.stop_reason);
        snprintf(report->device, sizeof report->device, "%s", s.device_key);
        report->warm_configs = warm.n;
        tess_warm_start_describe(&warm, report->transfer_from, sizeof report->transfer_from);
    }
    free(seeds);
    tess_warm_start_free(&warm);
    tess_evaluator_destroy(ev);
    return st;
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
