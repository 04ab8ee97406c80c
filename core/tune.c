/* tune.c - the search loop. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "tune.h"
#include "warm.h"

typedef struct loop_state {
    const tess_tune_loop_options *o;
    void *strategy_state;
    tess_tune_outcome *out;
    int since_improvement;
    bool stopped;               /* the caller's stop condition held */
    tess_status observe_error;
    /* A warm config measured slower than the best so far, or the first
     * (the source's best) beaten by more than TESS_WARM_BEATEN: the source
     * does not fit the target, and the rest of its configs are not
     * evaluated (a strategy drops its priors by the same rule). */
    bool warm_misfit;
    double warm_first_ms;       /* the first warm config's time; NAN before, INFINITY if it failed */
} loop_state;

static bool is_warm(const tess_tune_loop_options *o, const tess_config *c) {
    for (int i = 0; i < o->nwarm; i++)
        if (tess_config_equal(&o->warm[i], c)) return true;
    return false;
}

static void record(const tess_result *r, void *user) {
    loop_state *ls = user;
    tess_tune_outcome *out = ls->out;
    out->evaluations++;
    if ((unsigned)r->status < TESS_OUTCOME_COUNT) out->counts[r->status]++;
    bool ok = r->status == TESS_RESULT_OK;
    if (is_warm(ls->o, &r->config) && !(ok && (!out->found || r->time_ms < out->best.time_ms)))
        ls->warm_misfit = true;
    if (ok && (!out->found || r->time_ms < 0.99 * out->best.time_ms)) ls->since_improvement = 0;
    else ls->since_improvement++;
    if (ok && (!out->found || r->time_ms < out->best.time_ms)) {
        out->best = *r;
        out->found = true;
    }
    if (ls->o->nwarm > 0 && isnan(ls->warm_first_ms) && tess_config_equal(&r->config, &ls->o->warm[0]))
        ls->warm_first_ms = ok ? r->time_ms : INFINITY;
    if (out->found && out->best.time_ms * (1 + TESS_WARM_BEATEN) < ls->warm_first_ms) ls->warm_misfit = true;
    tess_status st = ls->o->strategy->observe(ls->strategy_state, &r->config, r->status,
                                              ok ? r->time_ms : INFINITY);
    if (st && !ls->observe_error) ls->observe_error = st;
    if (ls->o->on_result) ls->o->on_result(r, ls->o->user);
    if (ls->o->stop && ls->o->stop(r, ls->o->user)) ls->stopped = true;
}

/* Removes c from the proposals not yet placed (rest[0 .. *m - placed)),
 * keeping their order; returns whether it was there. */
static bool take_proposal(tess_config *rest, int *m, int placed, const tess_config *c) {
    for (int i = 0; i < *m - placed; i++)
        if (tess_config_equal(&rest[i], c)) {
            memmove(rest + i, rest + i + 1, (size_t)(*m - placed - i - 1) * sizeof *rest);
            (*m)--;
            return true;
        }
    return false;
}

/* Why the loop must stop now, or NULL. */
static const char *stop_reason(const tess_tune_loop_options *o, const loop_state *ls, double t0,
                               char *buf, size_t len) {
    if (o->cancel && *o->cancel) {
        snprintf(buf, len, "interrupted");
        return buf;
    }
    if (ls->stopped) {
        snprintf(buf, len, "the caller's stop condition was met");
        return buf;
    }
    if (o->budget > 0 && ls->out->evaluations >= o->budget) {
        snprintf(buf, len, "budget of %d evaluations reached", o->budget);
        return buf;
    }
    if (o->seconds > 0 && tess_now() - t0 >= o->seconds) {
        snprintf(buf, len, "time limit of %g s reached", o->seconds);
        return buf;
    }
    if (o->window > 0 && ls->since_improvement >= o->window) {
        snprintf(buf, len, "converged: no gain over %d evaluations", o->window);
        return buf;
    }
    return NULL;
}

tess_status tess_tune_loop(tess_evaluator *ev, const tess_tune_loop_options *o, tess_tune_outcome *out) {
    memset(out, 0, sizeof *out);
    out->best.time_ms = INFINITY;
    if (o->budget <= 0 && o->seconds <= 0 && o->window <= 0)
        return tess_error(TESS_ERR_ARG, "a search needs a budget, a time limit or a convergence window");
    int batch = o->batch > 0 ? o->batch : (ev->batch > 0 ? ev->batch : 8);
    tess_strategy_options so = {.seed = o->seed, .batch = batch, .budget = o->budget,
                                .priors = o->priors, .npriors = o->npriors};
    loop_state ls = {.o = o, .out = out, .warm_first_ms = NAN};
    tess_status st = o->strategy->create(ev->space, &so, &ls.strategy_state);
    if (st) return st;
    tess_config_set *seen = tess_config_set_create();
    tess_config *proposal = malloc((size_t)batch * sizeof *proposal);
    /* holds a filtered batch, or all the seed configs */
    tess_config *keep = malloc((size_t)(batch > o->nseeds ? batch : o->nseeds) * sizeof *keep);
    bool *warm_slot = malloc((size_t)batch * sizeof *warm_slot);
    if (!seen || !proposal || !keep || !warm_slot) {
        st = tess_error(TESS_ERR_NOMEM, "search loop");
        goto done;
    }
    double t0 = tess_now();
    char why[96] = "";
    /* Seed configs first: the default (the baseline every speedup refers to). */
    int nseed = 0;
    for (int i = 0; i < o->nseeds; i++)
        if (tess_space_valid(ev->space, &o->seeds[i]) && tess_config_set_add(seen, &o->seeds[i]))
            keep[nseed++] = o->seeds[i];
    for (int i = 0; i < nseed && !st && !ls.stopped && !(o->cancel && *o->cancel); i += batch) {
        int k = nseed - i < batch ? nseed - i : batch;
        if (o->budget > 0 && out->evaluations + k > o->budget) k = o->budget - out->evaluations;
        if (k <= 0) break;
        st = ev->ops->evaluate(ev, keep + i, k, record, &ls);
    }
    int stalls = 0, own = 0, next_warm = 0;
    int first = tess_warm_first(nseed > 0 ? &keep[0] : NULL, o->priors, o->npriors, batch);
    while (!st && !ls.observe_error) {
        if (stop_reason(o, &ls, t0, why, sizeof why)) break;
        int max = batch;
        if (o->budget > 0 && o->budget - out->evaluations < max) max = o->budget - out->evaluations;
        if (ls.warm_misfit) next_warm = o->nwarm;
        /* With the default measured, the strategy's first batch (around it)
         * goes before any transferred config: a measured config's
         * neighbourhood is evidence about this target, a transferred one a
         * guess (on the H200 recordings, sources whose best reached 85-90%
         * of the target's optimum delayed the hit that the cold search found
         * there). Without a measured seed the source's best goes first,
         * and right after it when the source measured it far from its best
         * (tess_warm_first). */
        int nwarm = tess_warm_plan(own, next_warm, o->nwarm, first, max, warm_slot);
        int n = 0;
        if (nwarm < max) {
            double p0 = tess_now();
            st = o->strategy->propose(ls.strategy_state, proposal, max - nwarm, &n);
            double ms = 1e3 * (tess_now() - p0);
            if (ms > out->propose_ms_max) out->propose_ms_max = ms;
            if (st) break;
            if (n > max - nwarm) {
                if (o->strict) {
                    st = tess_error(TESS_ERR_INTERNAL, "strategy '%s' proposed %d configs when asked for %d",
                                    o->strategy->name, n, max - nwarm);
                    break;
                }
                out->skipped += n - (max - nwarm);
                n = max - nwarm;
            }
        }
        /* The loop guards what every strategy promises: nothing twice, nothing illegal. */
        int m = 0;
        for (int i = 0; i < n && !st; i++) {
            const char *fault = !tess_space_valid(ev->space, &proposal[i]) ? "an illegal config"
                                : !tess_config_set_add(seen, &proposal[i]) ? "a config twice"
                                                                           : NULL;
            if (!fault)
                proposal[m++] = proposal[i];
            else if (!o->strict)
                out->skipped++;
            else {
                char text[512] = "";
                tess_config_format(ev->space, &proposal[i], text, sizeof text);
                st = tess_error(TESS_ERR_INTERNAL, "strategy '%s' proposed %s: %s", o->strategy->name, fault,
                                text);
            }
        }
        if (st) break;
        /* the batch in the planned order; once the strategy has nothing left, warm configs only */
        int k = 0;
        for (int i = 0, p = 0; i < max; i++) {
            if (warm_slot[i] || n == 0) {
                /* a warm config the strategy proposed in this batch too
                 * keeps its warm slot (a strategy whose priors came from the
                 * same source is likely to propose the source's best) */
                while (next_warm < o->nwarm && !(tess_space_valid(ev->space, &o->warm[next_warm]) &&
                                                 (tess_config_set_add(seen, &o->warm[next_warm]) ||
                                                  take_proposal(proposal + p, &m, p, &o->warm[next_warm]))))
                    next_warm++;
                if (next_warm < o->nwarm) keep[k++] = o->warm[next_warm++];
            } else if (p < m) {
                keep[k++] = proposal[p++];
                own++;
            }
        }
        if (k == 0 && n == 0 && nwarm < max) {
            snprintf(why, sizeof why, "search space exhausted");
            break;
        }
        if (k == 0) {
            if (++stalls == 3) {
                snprintf(why, sizeof why, "strategy proposed nothing new");
                break;
            }
            continue;
        }
        stalls = 0;
        st = ev->ops->evaluate(ev, keep, k, record, &ls);
    }
    if (!st && ls.observe_error) st = ls.observe_error;
    if (!st && !why[0]) stop_reason(o, &ls, t0, why, sizeof why);
    snprintf(out->stop_reason, sizeof out->stop_reason, "%s", st ? tess_errmsg() : why);
    out->elapsed_s = tess_now() - t0;
done:
    o->strategy->destroy(ls.strategy_state);
    tess_config_set_destroy(seen);
    free(proposal);
    free(keep);
    free(warm_slot);
    return st;
}
