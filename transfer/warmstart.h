/*
 * warmstart.h - starting a search from what the records already know: the
 * best configs of the most similar tuned tasks (the same operator on other
 * shapes, related operators, other devices), mapped into the new task's
 * space with values snapped to the nearest legal ones.
 */
#ifndef TESS_WARMSTART_H
#define TESS_WARMSTART_H

#include "core/records.h"
#include "core/space.h"
#include "core/strategy.h"
#include "features.h"

#define TESS_WARM_MAX_SOURCES 8
/* Sources less similar than this are ignored. */
#define TESS_WARM_MIN_SIMILARITY 0.05

typedef struct tess_warm_source {
    char task_key[TESS_KEY_MAX];
    char device_key[TESS_KEY_MAX];
    double similarity;
    double best_ms;
} tess_warm_source;

/* A source's configs slower than this times its best are no warm start. */
#define TESS_WARM_MAX_SLOWDOWN 1.25
/* Measurements per source task kept as cost-model priors. */
#define TESS_WARM_PRIORS_PER_SOURCE 64

typedef struct tess_warm_start {
    tess_config *configs;       /* legal, distinct, most promising first (malloc'd) */
    int n;
    tess_prior *priors;         /* the sources' fastest measurements, mapped (malloc'd) */
    int npriors;
    tess_warm_source sources[TESS_WARM_MAX_SOURCES];
    int nsources;
} tess_warm_start;

/* Builds a warm start for `target` from the records in db, excluding the
 * target task on its own device. At most max_sources tasks and
 * max_sources * per_source warm-start configs, shared among the sources in
 * proportion to their similarity, and up to TESS_WARM_PRIORS_PER_SOURCE
 * measurements from each as priors. An empty result (n == 0) is not an error. */
tess_status tess_warm_start_build(tess_records *db, const tess_task_profile *target,
                                  const tess_space *space, int max_sources, int per_source,
                                  tess_warm_start *out);
void tess_warm_start_free(tess_warm_start *w);

/* Maps "name=value,..." from another space into this one: each parameter
 * takes the nearest legal value (log scale for positive numbers, the same
 * label for categories), missing ones the default; an illegal result is
 * repaired by the nearest legal neighbour. TESS_ERR_NOTFOUND if none. */
tess_status tess_config_map(const tess_space *space, const char *text, tess_config *out);

/* "heat3d:f32:256x256x256 (0.82), ..." for reports. */
void tess_warm_start_describe(const tess_warm_start *w, char *buf, size_t len);

#endif
