/* session.c - a tuning session: space, evaluator, search loop, records. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "roofline.h"
#include "session.h"
#include "tune.h"

tess_status tess_session_strategy(const tess_tune_options *opt, const tess_strategy_ops **out) {
    const char *name = opt->strategy ? opt->strategy : tess_strategy_default_name();
    *out = tess_strategy_find(name);
    if (!*out) return tess_error(TESS_ERR_ARG, "unknown strategy '%s' (see `tessera strategies`)", name);
    return TESS_OK;
}

/* What the search loop's results go through on their way to the database. */
typedef struct recorder {
    tess_records *db;
    const tess_space *space;
    int64_t run_id;
    const char *strategy;
    const tess_config *dflt;
    const tess_config *warm;        /* the warm start's configs, best first */
    int nwarm;
    const tess_tune_options *opt;
    tess_tune_report *report;
    int done;
    double best_ms, t0;
    tess_status db_error;
} recorder;

/* Where a config came from: "default", "transfer:K" (the K-th warm start)
 * or the strategy. Results arrive as their candidates finish, not in the
 * order proposed, so the config itself tells. */
static const char *origin_of(const recorder *rec, const tess_config *c, char *buf, size_t len) {
    if (tess_config_equal(c, rec->dflt)) return "default";
    for (int i = 0; i < rec->nwarm; i++)
        if (tess_config_equal(c, &rec->warm[i])) {
            snprintf(buf, len, "transfer:%d", i + 1);
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
    if (rec->report && r->status == TESS_RESULT_OK && r->time_ms < rec->report->best_exact_ms &&
        tess_space_config_exact(rec->space, &r->config)) {
        tess_config_format(rec->space, &r->config, rec->report->best_exact_config,
                           sizeof rec->report->best_exact_config);
        rec->report->best_exact_ms = r->time_ms;
        rec->report->best_exact_error = r->metrics.max_error;
    }
    if (tess_config_format(rec->space, &r->config, config, sizeof config) == TESS_OK) {
        tess_status st = tess_records_put_result(rec->db, rec->run_id, config, r, origin);
        if (st && !rec->db_error) rec->db_error = st;
    }
    if (rec->opt->progress)
        rec->opt->progress(rec->done, rec->opt->budget, rec->best_ms, tess_now() - rec->t0,
                           rec->opt->progress_user);
}

static void fill_report(const tess_session *s, const tess_space *space, const tess_warm_start *warm,
                        const tess_tune_outcome *out, tess_tune_report *report) {
    if (out->found) {
        tess_config_format(space, &out->best.config, report->best_config, sizeof report->best_config);
        report->best_ms = out->best.time_ms;
        report->best_gbps = out->best.gbps;
        report->best_gflops = out->best.gflops;
        report->best_spread = out->best.spread;
        report->best_error = out->best.metrics.max_error;
    } else {
        report->best_ms = INFINITY;
    }
    report->ceiling_gbps = s->device.ceiling[TESS_CEILING_COPY].value;
    if (s->op) {   /* a replay has no byte and flop counts */
        tess_ceiling_kind unit = tess_op_compute_unit(s->op, &s->task);
        tess_bound bound = tess_roofline_bound(s->op->bytes(s->op, &s->task), s->op->flops(s->op, &s->task),
                                               unit, &s->device);
        report->ceiling_gflops = s->device.ceiling[unit].value;
        if (bound.ms > 0) snprintf(report->bound, sizeof report->bound, "%s", tess_ceiling_label(bound.ceiling));
        report->bound_ms = bound.ms;
        report->fraction_of_ceiling = bound.ms > 0 && out->found ? bound.ms / out->best.time_ms : 0;
        report->working_set_bytes = s->op->bytes(s->op, &s->task);
    }
    report->cache_bytes = (double)s->device.l2_bytes;
    report->evaluations = out->evaluations;
    report->elapsed_s = out->elapsed_s;
    for (int i = 0; i < TESS_OUTCOME_COUNT && i < 6; i++) report->status_counts[i] = out->counts[i];
    snprintf(report->stop_reason, sizeof report->stop_reason, "%s", out->stop_reason);
    tess_device_key(&s->device, report->device, sizeof report->device);
    report->warm_configs = warm ? warm->n : 0;
    if (warm) tess_warm_start_describe(warm, report->transfer_from, sizeof report->transfer_from);
}

tess_status tess_session_search(const tess_session *s, const tess_space *space, tess_evaluator *ev,
                                const tess_warm_start *warm, const tess_tune_options *opt,
                                tess_tune_report *report) {
    const tess_strategy_ops *strategy;
    tess_status st = tess_session_strategy(opt, &strategy);
    if (st) return st;
    if (report) {
        memset(report, 0, sizeof *report);
        report->best_exact_ms = INFINITY;
        report->best_error = report->best_exact_error = -1;
    }
    /* The default first (the baseline of every speedup), then the warm start
     * (interleaved with the strategy's proposals). */
    tess_config dflt;
    tess_space_default(space, &dflt);
    int64_t device_id, task_id, run_id;
    st = tess_records_put_device(s->db, &s->device, &device_id);
    if (!st) st = tess_records_put_task(s->db, &s->task, s->op ? s->op->family : "replay", &task_id);
    if (!st)
        st = tess_records_begin_run(s->db, task_id, device_id, strategy->name, opt->seed, opt->budget, &run_id);
    if (st) return st;
    recorder rec = {.db = s->db, .space = space, .run_id = run_id, .strategy = strategy->name,
                    .dflt = &dflt, .warm = warm ? warm->configs : NULL, .nwarm = warm ? warm->n : 0,
                    .opt = opt, .report = report, .best_ms = INFINITY, .t0 = tess_now()};
    tess_tune_loop_options lo = {.strategy = strategy, .budget = opt->budget, .seconds = opt->seconds,
                                 .window = opt->window, .seed = opt->seed, .batch = opt->batch,
                                 .cancel = opt->cancel, .seeds = &dflt, .nseeds = 1,
                                 .warm = rec.warm, .nwarm = rec.nwarm,
                                 .priors = warm ? warm->priors : NULL, .npriors = warm ? warm->npriors : 0,
                                 .on_result = on_result, .user = &rec};
    tess_tune_outcome out;
    st = tess_tune_loop(ev, &lo, &out);
    if (!st && rec.db_error) st = tess_error(rec.db_error, "recording results: %s", tess_errmsg());
    tess_status end = tess_records_end_run(s->db, run_id, st ? "error" : out.stop_reason, out.evaluations);
    if (!st) st = end;
    if (!st && report) fill_report(s, space, warm, &out, report);
    return st;
}

tess_status tess_session_tune(const tess_session *s, const tess_tune_options *opt, tess_tune_report *report) {
    /* an unknown strategy fails before the evaluator starts its runner */
    const tess_strategy_ops *strategy;
    tess_status st = tess_session_strategy(opt, &strategy);
    if (st) return st;
    /* The space may keep a pointer to the task: s->task outlives it. */
    tess_space *space = NULL;
    st = tess_op_space(s->op, &s->task, &s->device, &space);
    if (st) return st;
    if (opt->fix && (st = tess_space_pin(space, opt->fix))) {
        tess_space_destroy(space);
        return tess_error_context(TESS_ERR_ARG, "the fixed parameters");   /* the caller's text */
    }
    tess_warm_start warm = {0};
    if (s->warm_start) st = s->warm_start(space, s->warm_user, &warm);
    tess_evaluator *ev = NULL;
    tess_hw_options hw = tess_hw_options_default();
    hw.seed = opt->seed;
    hw.compile_timeout_s = opt->compile_timeout_s;
    if (opt->full_timing) hw.race_factor = 0;
    if (!st) st = tess_evaluator_create_hw(s->op, &s->task, space, s->be, &s->device, &hw, &ev);
    if (!st) st = tess_session_search(s, space, ev, &warm, opt, report);
    tess_evaluator_destroy(ev);
    tess_warm_start_free(&warm);
    tess_space_destroy(space);
    return st;
}
