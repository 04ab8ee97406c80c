/* bench.c - the search-efficiency benchmark on replayed spaces. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "core/tune.h"
#include "core/types.h"
#include "search/bench.h"

const int tess_bench_budgets[TESS_BENCH_NBUDGETS] = {20, 50, 100, 200};

tess_bench_options tess_bench_options_default(void) {
    return (tess_bench_options){.budget = 200, .repeats = 20, .batch = 8, .seed = 1};
}

double tess_bench_random_expectation(size_t n, size_t k) {
    return ((double)n + 1) / ((double)k + 1);
}

double tess_bench_random_median(size_t n, size_t k) {
    if (k == 0 || k > n) return INFINITY;
    /* P(T > t) = prod_{i<t} (N-K-i)/(N-i): the first t draws all miss */
    double miss = 1;
    for (size_t t = 1; t <= n - k; t++) {
        miss *= (double)(n - k - (t - 1)) / (double)(n - (t - 1));
        if (miss <= 0.5) return (double)t;
    }
    return (double)(n - k + 1);
}

/* "dir/gemm_RTX_3090.json.gz" -> "gemm_RTX_3090" */
static void space_name(const char *path, char *name, size_t len) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(name, len, "%s", base);
    char *dot = strchr(name, '.');
    if (dot && dot != name) *dot = '\0';
}

tess_status tess_bench_space_open(const char *path, tess_bench_space *out) {
    memset(out, 0, sizeof *out);
    tess_status st = tess_replay_open(path, &out->replay);
    if (!st) st = tess_evaluator_create_replay(out->replay, &out->ev);
    if (st) {
        tess_bench_space_close(out);
        return st;
    }
    out->space = tess_replay_space(out->replay);
    space_name(path, out->name, sizeof out->name);
    out->n = tess_replay_size(out->replay);
    out->best_ms = tess_replay_best_time(out->replay);
    for (size_t i = 0; i < out->n; i++) {
        tess_outcome status;
        double t;
        tess_replay_point(out->replay, i, NULL, &status, &t);
        if (status != TESS_RESULT_OK) continue;
        out->nok++;
        out->within_5pct += t <= 1.05 * out->best_ms;
        out->within_1pct += t <= 1.01 * out->best_ms;
    }
    if (out->nok == 0) {
        tess_bench_space_close(out);
        return tess_error(TESS_ERR_FORMAT, "%s: no successful config in the recording", path);
    }
    return TESS_OK;
}

void tess_bench_space_close(tess_bench_space *bs) {
    tess_evaluator_destroy(bs->ev);
    tess_replay_close(bs->replay);
    bs->ev = NULL;
    bs->replay = NULL;
    bs->space = NULL;
}

/* ---- one run ---------------------------------------------------------------- */

/* The best-so-far trace, one entry per evaluation. */
typedef struct trace {
    double *best_ms;
    int n;
    double best;
} trace;

static void trace_result(const tess_result *r, void *user) {
    trace *t = user;
    if (r->status == TESS_RESULT_OK && r->time_ms < t->best) t->best = r->time_ms;
    t->best_ms[t->n++] = t->best;
}

tess_status tess_bench_run(const tess_strategy_ops *ops, const tess_bench_space *bs, uint64_t seed,
                           int budget, int batch, double *best_ms, double *propose_ms_max) {
    if (budget < 1 || batch < 1) return tess_error(TESS_ERR_ARG, "bench: budget and batch must be positive");
    /* As in tuning, the template's default is evaluation 1 and reported to
     * the strategy, which must not propose it again. */
    tess_config dflt;
    bool has_default = tess_replay_default(bs->replay, &dflt);
    trace t = {.best_ms = best_ms, .best = INFINITY};
    tess_tune_loop_options lo = {.strategy = ops, .budget = budget, .seed = seed, .batch = batch,
                                 .seeds = &dflt, .nseeds = has_default, .strict = true,
                                 .on_result = trace_result, .user = &t};
    tess_tune_outcome out;
    tess_status st = tess_tune_loop(bs->ev, &lo, &out);
    if (propose_ms_max && out.propose_ms_max > *propose_ms_max) *propose_ms_max = out.propose_ms_max;
    for (int i = t.n; i < budget; i++) best_ms[i] = t.n ? best_ms[t.n - 1] : INFINITY;
    if (st) return tess_error_context(st, "bench run of '%s' (seed %llu)", ops->name, (unsigned long long)seed);
    return TESS_OK;
}

/* ---- repeated runs ------------------------------------------------------------ */

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, compare_double);
    if (n % 2) return v[n / 2];
    return 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* First evaluation (1-based) whose best is within `factor` of the optimum; INFINITY if none. */
static double evals_to(const double *best, int budget, double target) {
    for (int i = 0; i < budget; i++)
        if (best[i] <= target) return i + 1;
    return INFINITY;
}

tess_status tess_bench_strategy(const tess_strategy_ops *ops, const tess_bench_space *bs,
                                const tess_bench_options *o, tess_bench_result *r) {
    memset(r, 0, sizeof *r);
    if (o->repeats < 1) return tess_error(TESS_ERR_ARG, "bench: repeats must be positive");
    snprintf(r->space, sizeof r->space, "%s", bs->name);
    snprintf(r->strategy, sizeof r->strategy, "%s", ops->name);
    r->runs = o->repeats;
    r->budget = o->budget;
    r->random_expected_5pct = tess_bench_random_expectation(bs->n, bs->within_5pct);
    r->random_expected_1pct = tess_bench_random_expectation(bs->n, bs->within_1pct);
    r->random_median_5pct = tess_bench_random_median(bs->n, bs->within_5pct);
    r->random_median_1pct = tess_bench_random_median(bs->n, bs->within_1pct);
    r->curve = calloc((size_t)o->budget, sizeof *r->curve);
    double *best = malloc((size_t)o->budget * sizeof *best);
    double *e5 = malloc((size_t)o->repeats * sizeof *e5), *e1 = malloc((size_t)o->repeats * sizeof *e1);
    double score[TESS_BENCH_NBUDGETS] = {0};
    tess_status st = r->curve && best && e5 && e1 ? TESS_OK : tess_error(TESS_ERR_NOMEM, "bench: no memory");
    double t0 = tess_now();
    for (int k = 0; k < o->repeats && !st; k++) {
        st = tess_bench_run(ops, bs, o->seed + (uint64_t)k, o->budget, o->batch, best, &r->propose_ms_max);
        if (st) break;
        e5[k] = evals_to(best, o->budget, 1.05 * bs->best_ms);
        e1[k] = evals_to(best, o->budget, 1.01 * bs->best_ms);
        r->reached_5pct += isfinite(e5[k]);
        r->reached_1pct += isfinite(e1[k]);
        for (int i = 0; i < o->budget; i++) r->curve[i] += isfinite(best[i]) ? bs->best_ms / best[i] : 0;
        for (int b = 0; b < TESS_BENCH_NBUDGETS; b++) {
            int at = tess_bench_budgets[b];
            if (at <= o->budget) score[b] += isfinite(best[at - 1]) ? bs->best_ms / best[at - 1] : 0;
        }
    }
    r->seconds = tess_now() - t0;
    if (!st) {
        r->evals_to_5pct_median = median(e5, o->repeats);
        r->evals_to_1pct_median = median(e1, o->repeats);
        for (int i = 0; i < o->budget; i++) r->curve[i] /= o->repeats;
        for (int b = 0; b < TESS_BENCH_NBUDGETS; b++)
            r->score_at[b] = tess_bench_budgets[b] <= o->budget ? score[b] / o->repeats : NAN;
    }
    free(best);
    free(e5);
    free(e1);
    if (st) tess_bench_result_free(r);
    return st;
}

void tess_bench_result_free(tess_bench_result *r) {
    free(r->curve);
    r->curve = NULL;
}

/* ---- SVG plot ------------------------------------------------------------------ */

static void xml_escaped(FILE *f, const char *text) {
    for (; *text; text++) {
        if (*text == '<') fputs("&lt;", f);
        else if (*text == '>') fputs("&gt;", f);
        else if (*text == '&') fputs("&amp;", f);
        else fputc(*text, f);
    }
}

tess_status tess_bench_write_svg(const char *path, const char *title,
                                 const tess_bench_result *results, int n) {
    static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                         "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
    const int ncolors = (int)(sizeof colors / sizeof colors[0]);
    const double W = 720, H = 440, left = 60, right = 150, top = 40, bottom = 50;
    const double pw = W - left - right, ph = H - top - bottom;
    int budget = 1;
    for (int i = 0; i < n; i++)
        if (results[i].budget > budget) budget = results[i].budget;
    FILE *f = fopen(path, "w");
    if (!f) return tess_error(TESS_ERR_IO, "cannot write %s", path);
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n", W, H);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"%.0f\" y=\"24\" font-size=\"15\">", left);
    xml_escaped(f, title);
    fprintf(f, "</text>\n");
    /* axes with ticks: x evaluations (linear), y optimum/best in [0, 1] */
    fprintf(f, "<g stroke=\"#ccc\">\n");
    for (int t = 0; t <= 10; t += 2) {
        double y = top + ph * (1 - t / 10.0);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", left, y, left + pw, y);
    }
    fprintf(f, "</g>\n<g fill=\"#333\">\n");
    for (int t = 0; t <= 10; t += 2)
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.1f</text>\n", left - 6,
                top + ph * (1 - t / 10.0) + 4, t / 10.0);
    for (int t = 0; t <= 5; t++) {
        int ev = (int)lround(budget * t / 5.0);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d</text>\n", left + pw * t / 5.0,
                top + ph + 18, ev);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">evaluations</text>\n", left + pw / 2,
            H - 10);
    fprintf(f, "<text transform=\"translate(16 %.1f) rotate(-90)\" text-anchor=\"middle\">"
               "mean optimum / best found</text>\n</g>\n", top + ph / 2);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#333\"/>\n",
            left, top, pw, ph);
    for (int i = 0; i < n; i++) {
        const tess_bench_result *r = &results[i];
        const char *color = colors[i % ncolors];
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", color);
        for (int e = 0; e < r->budget; e++)
            fprintf(f, "%.1f,%.1f ", left + pw * (e + 1) / budget, top + ph * (1 - r->curve[e]));
        fprintf(f, "\"/>\n");
        double ly = top + 10 + 18 * i;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>\n",
                left + pw + 10, ly, left + pw + 30, ly, color);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", left + pw + 36, ly + 4);
        xml_escaped(f, r->strategy);
        fprintf(f, "</text>\n");
    }
    fprintf(f, "</svg>\n");
    if (fclose(f) != 0) return tess_error(TESS_ERR_IO, "cannot write %s", path);
    return TESS_OK;
}
