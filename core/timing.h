/* timing.h - repeated timing until the median is stable, and its statistics. */
#ifndef TESS_TIMING_H
#define TESS_TIMING_H

#include "backend.h"

typedef struct tess_timing_options {
    double min_time_s;   /* keep timing at least this long in total */
    int min_reps;        /* and at least this many repetitions */
    int max_reps;        /* never more than this many */
    /* > 0: stop after 3 runs when their median is above this (ms): the
     * candidate is clearly slower than the best so far, and a precise time
     * would not change what the search does with it. */
    double cutoff_ms;
} tess_timing_options;

typedef struct tess_timing {
    double median_ms, min_ms, max_ms;
    double spread;       /* interquartile range / median */
    int reps;            /* samples (of one or more launches; the times are per launch) */
    bool cut;            /* stopped early at the cutoff */
} tess_timing;

/* Summarizes n samples (sorted in place). */
void tess_timing_summarize(double *ms, int n, tess_timing *out);

/* One warm-up run, then rounds of timed samples (one launch each, or for
 * kernels under 1 ms as many back-to-back launches as last about 1 ms)
 * until at least min_time_s and min_reps have passed and the median moved by less than 1% over the last
 * round, or max_reps is reached. With a cutoff the first round is 3 runs
 * long, and timing ends there when its median exceeds the cutoff. */
tess_status tess_time_kernel(const tess_backend_ops *be, void *ctx, void *module,
                             void *const *const *sets, int nsets, int nbufs,
                             const tess_timing_options *o, tess_timing *out,
                             tess_kernel_metrics *metrics);

#endif
