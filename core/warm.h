/*
 * warm.h - a warm start as the search takes it: configs of the new task's
 * space that the search loop evaluates first (after the template's default),
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

/* The configs a search evaluates before its strategy proposes: the
 * template's default (dflt; NULL when unknown, as in a recording that does
 * not name it), then the warm start's configs (w may be NULL). *seeds is
 * malloc'd (the caller frees it). */
tess_status tess_warm_seeds(const tess_config *dflt, const tess_warm_start *w, tess_config **seeds, int *n);

#endif
