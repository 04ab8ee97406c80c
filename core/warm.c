/* warm.c - what a search starts from: the default, then the warm start. */
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

tess_status tess_warm_seeds(const tess_config *dflt, const tess_warm_start *w, tess_config **seeds, int *n) {
    int nwarm = w ? w->n : 0, m = 0;
    *seeds = malloc((size_t)(nwarm + 1) * sizeof **seeds);
    if (!*seeds) return tess_error(TESS_ERR_NOMEM, "seeds");
    if (dflt) (*seeds)[m++] = *dflt;
    if (nwarm) memcpy(*seeds + m, w->configs, (size_t)nwarm * sizeof **seeds);
    *n = m + nwarm;
    return TESS_OK;
}
