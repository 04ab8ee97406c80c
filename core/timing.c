/* timing.c - repeated timing until the median is stable. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "timing.h"

/* Runs after which a candidate above the cutoff stops being timed. */
#define CUT_REPS 3
/* A sample of a kernel shorter than this (ms) holds several launches back to
 * back, as a multi-step run makes them: a sample per launch would also time
 * the gap its events leave (about 1.7 us on an H200), a sizeable part of a
 * kernel of a few microseconds. At this length the gap is under 0.2% of a
 * sample, so kernels either side of it rank alike. */
#define SAMPLE_MS 1.0
#define MAX_LAUNCHES_PER_SAMPLE 256

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile_sorted(const double *v, int n, double q) {
    double pos = q * (n - 1);
    int lo = (int)floor(pos);
    int hi = lo + 1 < n ? lo + 1 : lo;
    return v[lo] + (pos - lo) * (v[hi] - v[lo]);
}

void tess_timing_summarize(double *ms, int n, tess_timing *out) {
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    out->reps = n;
    out->min_ms = ms[0];
    out->max_ms = ms[n - 1];
    out->median_ms = quantile_sorted(ms, n, 0.5);
    out->spread = out->median_ms > 0
                      ? (quantile_sorted(ms, n, 0.75) - quantile_sorted(ms, n, 0.25)) / out->median_ms
                      : 0;
}

tess_status tess_time_kernel(const tess_backend_ops *be, void *ctx, void *module,
                             void *const *const *sets, int nsets, int nbufs,
                             const tess_timing_options *o, tess_timing *out,
                             tess_kernel_metrics *metrics) {
    int max_reps = o->max_reps > 0 ? o->max_reps : 1000;
    int min_reps = o->min_reps > 0 ? o->min_reps : 5;
    if (min_reps > max_reps) min_reps = max_reps;
    double *ms = malloc((size_t)max_reps * sizeof *ms);
    double *sorted = malloc((size_t)max_reps * sizeof *sorted);
    if (!ms || !sorted) {
        free(ms), free(sorted);
        return tess_error(TESS_ERR_NOMEM, "timing samples");
    }
    double warm = 0;
    /* Power is read only in the rounds of a full timing: the warm-up and a
     * racing round are too short to read, and reading costs milliseconds. */
    tess_status st = be->time(ctx, module, sets, nsets, nbufs, 1, 1, &warm, NULL);
    double want = warm > 0 ? ceil(SAMPLE_MS / warm) : 1;
    int launches = want < 1 ? 1 : want > MAX_LAUNCHES_PER_SAMPLE ? MAX_LAUNCHES_PER_SAMPLE : (int)want;
    /* Rounds of about a quarter of the time budget each. */
    int per_round = warm > 0 ? (int)ceil(250.0 * o->min_time_s / (warm * launches)) : min_reps;
    if (per_round < 1) per_round = 1;
    if (per_round > max_reps) per_round = max_reps;
    int first_round = o->cutoff_ms > 0 && CUT_REPS < per_round ? CUT_REPS : per_round;
    bool cut = false;
    int n = 0;
    double total_s = 0, prev_median = NAN;
    while (!st && n < max_reps) {
        int round = n == 0 ? first_round : per_round;
        int k = round < max_reps - n ? round : max_reps - n;
        bool racing_round = n == 0 && o->cutoff_ms > 0;
        st = be->time(ctx, module, sets, nsets, nbufs, k, launches, ms + n, racing_round ? NULL : metrics);
        if (st) break;
        for (int i = 0; i < k; i++) total_s += ms[n + i] * launches * 1e-3;
        n += k;
        memcpy(sorted, ms, (size_t)n * sizeof *ms);
        tess_timing t;
        tess_timing_summarize(sorted, n, &t);
        bool stable = fabs(t.median_ms - prev_median) <= 0.01 * t.median_ms;
        prev_median = t.median_ms;
        if (o->cutoff_ms > 0 && t.median_ms > o->cutoff_ms) {
            cut = true;
            break;
        }
        if (n >= min_reps && total_s >= o->min_time_s && stable) break;
    }
    if (!st) {
        tess_timing_summarize(ms, n, out);
        out->cut = cut;
    }
    free(ms);
    free(sorted);
    return st;
}
