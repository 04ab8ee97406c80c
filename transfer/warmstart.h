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
#include "core/warm.h"
#include "features.h"

/* Sources less similar than this are ignored. */
#define TESS_WARM_MIN_SIMILARITY 0.05
/* A source's configs slower than this times its best are no warm start. */
#define TESS_WARM_MAX_SLOWDOWN 1.25
/* Measurements per source task kept as cost-model priors. */
#define TESS_WARM_PRIORS_PER_SOURCE 64

/* One source's measurements, as a warm start takes them: its fastest ok
 * results, fastest first, configs in the source's own spelling
 * ("name=value,..."; only config and time_ms are read). */
typedef struct tess_warm_input {
    tess_warm_source source;
    const tess_record_row *rows;
    int n;
    /* the source's ok result for the target space's default config, however
     * slow (NULL: none): a prior that tells the search loop whether the
     * source found the default far from its best (tess_warm_first) */
    const tess_record_row *dflt;
} tess_warm_input;

/* Whether `row` is a measurement of config c of `space`: its config text
 * maps exactly onto c (tess_config_map). */
bool tess_warm_row_measures(const tess_space *space, const tess_record_row *row, const tess_config *c);

/* How many of a source's fastest results a warm start of per_source configs
 * reads (the configs, and the priors). */
int tess_warm_rows_wanted(int per_source);

/* The one way a warm start is made, whether its sources come from the
 * records (tess_warm_start_build) or from a replayed recording (the transfer
 * benchmark): up to nsrc * per_source configs mapped into `space`
 * (tess_config_map), shared among the sources in proportion to their
 * similarity, each source giving its fastest configs not yet taken, none
 * slower than TESS_WARM_MAX_SLOWDOWN times its best; and as priors, their
 * times relative to their source's best, weighted by the source's
 * similarity, the rows whose configs `space` holds exactly (once each, the
 * first: the most similar source's fastest), and each source's result for
 * the default config. Sources must be most similar first, at most
 * TESS_WARM_MAX_SOURCES. */
tess_status tess_warm_start_from(const tess_space *space, const tess_warm_input *in, int nsrc, int per_source,
                                 tess_warm_start *out);

/* Builds a warm start for `target` from the records in db, excluding the
 * target task on its own device: the at most max_sources most similar tasks
 * (no less similar than TESS_WARM_MIN_SIMILARITY), through
 * tess_warm_start_from. An empty result (n == 0) is not an error. */
tess_status tess_warm_start_build(tess_records *db, const tess_task_profile *target,
                                  const tess_space *space, int max_sources, int per_source,
                                  tess_warm_start *out);
/* Maps "name=value,..." from another space into this one: each parameter
 * takes the nearest legal value (log scale for positive numbers, the same
 * label for categories), missing ones the default; an illegal result is
 * repaired by the nearest legal neighbour. TESS_ERR_NOTFOUND if none.
 * *exact (when not NULL) tells whether the result is the config the text
 * names: every value found as written and no repair needed. */
tess_status tess_config_map(const tess_space *space, const char *text, tess_config *out, bool *exact);

#endif
