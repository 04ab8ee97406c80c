/* warm.c - a warm start, and where its configs go among a search's own proposals. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "warm.h"

void tess_warm_start_free(tess_warm_start *w) {
    free(w->configs);
    free(w->priors);
    w->configs = NULL;
    w->priors = NULL;
    w->n = w->npriors = 0;
}

void tess_warm_start_describe(const tess_warm_start *w, char *buf, size_t len) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < w->nsources && used < len; i++) {
        int k = snprintf(buf + used, len - used, "%s%s on %s (similarity %.2f)", i ? "; " : "",
                         w->sources[i].task_key, w->sources[i].device_key, w->sources[i].similarity);
        if (k < 0) break;
        used += (size_t)k;
    }
}

int tess_warm_due(int k, int first) {
    /* After `first` of the strategy's proposals the source's best, then the
     * others ever more sparsely (after 1, 3, 7, ... more): the first warm
     * configs are the likeliest to help, and a misfit costs a few
     * evaluations instead of as many as it has configs. */
    return k < 30 ? first + (1 << k) - 1 : INT_MAX;
}

int tess_warm_first(const tess_config *dflt, const tess_prior *priors, int npriors, int batch) {
    if (!dflt) return 0;
    /* On the H200 recordings the source's view of the default foretold the
     * target's: box3d27 and varcoef3d 256^3 measured it 1.20x and 1.26x
     * their best, each on the other, and the first batch around it found
     * nothing within 5% there (9 evaluations cold, the source's best 2);
     * the heat3d shapes measured it within 5%, and a neighbour of it hit. */
    for (int i = 0; i < npriors; i++)
        if (tess_config_equal(&priors[i].config, dflt))
            return priors[i].rel_log_time > log(TESS_WARM_DEFAULT_MISS) ? 0 : batch;
    return batch;
}

int tess_warm_plan(int own, int next, int nwarm, int first, int max, bool *warm_slot) {
    int nw = 0;
    for (int i = 0; i < max; i++) {
        /* one a batch: each is measured before the next is placed, so that a
         * misfit (see tess_tune_loop_options) stops the rest */
        warm_slot[i] = nw == 0 && next < nwarm && own >= tess_warm_due(next, first);
        if (warm_slot[i]) next++, nw++;
        else own++;
    }
    return nw;
}
