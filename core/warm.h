/*
 * warm.h - a warm start as the search takes it: configs of the new task's
 * space that the search loop interleaves with the strategy's own proposals,
 * priors that pre-train the strategy's cost model, and the sources they came
 * from. Built above core (transfer/: from the records of similar tasks, or
 * from a replayed recording in the transfer benchmark), taken by the tuning
 * session and the transfer benchmark alike.
 */
#ifndef TESS_WARM_H
#define TESS_WARM_H

#include "strategy.h"
#include "task.h"

#define TESS_WARM_MAX_SOURCES 8

/* A task whose measurements a warm start uses. */
typedef struct tess_warm_source {
    char task_key[TESS_KEY_MAX];
    char device_key[TESS_KEY_MAX];
    double similarity;          /* to the new task, 0..1 */
    double best_ms;
} tess_warm_source;

typedef struct tess_warm_start {
    tess_config *configs;       /* legal, distinct, most promising first (malloc'd) */
    int n;
    tess_prior *priors;         /* the sources' fastest measurements, mapped (malloc'd) */
    int npriors;
    tess_warm_source sources[TESS_WARM_MAX_SOURCES];
    int nsources;
} tess_warm_start;

/* Frees the arrays and empties w (NULL-safe for an empty warm start). */
void tess_warm_start_free(tess_warm_start *w);

/* "heat3d:f32:256x256x256 on cpu:... (similarity 0.82); ..." for reports. */
void tess_warm_start_describe(const tess_warm_start *w, char *buf, size_t len);

/* How many of the strategy's own proposals the search loop evaluates
 * before the k-th (0-based) warm-start config, `first` of them before the
 * first: the warm configs are interleaved with the strategy's proposals, not
 * evaluated ahead of them, so a source that does not fit the target costs
 * the search little. */
int tess_warm_due(int k, int first);

/* How many of the strategy's own proposals go before the first warm config
 * (`first` of tess_warm_due): none without a measured default (dflt NULL);
 * with one, the strategy's first batch (around it) goes first, unless the
 * warm start's priors say that the source measured the default more than
 * TESS_WARM_DEFAULT_MISS slower than its best: then the default's
 * neighbourhood is a poorer bet than the source's best. */
#define TESS_WARM_DEFAULT_MISS 1.1
int tess_warm_first(const tess_config *dflt, const tess_prior *priors, int npriors, int batch);

/* A source whose best config the target measures beaten by more than this
 * fraction (or failing) does not fit the target: the search drops its
 * remaining warm configs and its priors together. */
#define TESS_WARM_BEATEN 0.10

/* Plans the next batch of max slots: warm_slot[i] says whether slot i takes
 * the next warm config (own: the strategy's proposals placed so far, next:
 * the warm configs placed so far, of nwarm, first: as tess_warm_due), at
 * most one a batch. Returns how many slots are warm (0 or 1); the others
 * are the strategy's. */
int tess_warm_plan(int own, int next, int nwarm, int first, int max, bool *warm_slot);

#endif
