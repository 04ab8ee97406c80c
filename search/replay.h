/*
 * replay.h - a recorded space, and an evaluator that answers from it instead
 * of hardware (simulation mode), for developing and benchmarking strategies.
 *
 * Reads, gzip-compressed or plain (the kind is recognized from the content):
 *  - Kernel Tuner cache files: {"tune_params": {...}, "cache": {"1,2,..": {..., "time": ms | "error"}}}
 *  - T4 result files: {"results": [{"configuration": {...}, "invalidity": ..., "measurements": [...]}]}
 *  - tessera's record export, one JSON object per line:
 *    {"task": ..., "device": ..., "params": {"name": value, ...}, "status": "ok", "time_ms": ms,
 *     "strategy": "default" for the template's default}
 *
 * The space is the recorded configs (an explicit point list). Configs that
 * failed in the recording come back with their status; configs that were not
 * recorded come back as invalid.
 */
#ifndef TESS_SEARCH_REPLAY_H
#define TESS_SEARCH_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include "core/evaluator.h"

typedef struct tess_replay tess_replay;

/* Loads a recording; tess_replay_close frees it. */
tess_status tess_replay_open(const char *path, tess_replay **out);
void tess_replay_close(tess_replay *rp);
/* The recorded configs as a space (borrowed, valid until the replay is closed). */
const tess_space *tess_replay_space(const tess_replay *rp);
/* The task the recording names: a record export's task key, else the
 * kernel name and problem size; "replay" of shape 1 when neither reads as a task. */
const tess_task *tess_replay_task(const tess_replay *rp);
/* An evaluator answering from the recording (borrowed: it must outlive the
 * evaluator), in its space; its device backend is "replay". Freed by
 * tess_evaluator_destroy. */
tess_status tess_evaluator_create_replay(const tess_replay *rp, tess_evaluator **out);

/* The recorded points, in lexicographic order of their configs. */
size_t tess_replay_size(const tess_replay *rp);
void tess_replay_point(const tess_replay *rp, size_t i, tess_config *c, tess_outcome *status,
                       double *time_ms);
/* The recorded outcome of c; false if c was not recorded. */
bool tess_replay_lookup(const tess_replay *rp, const tess_config *c, tess_outcome *status,
                        double *time_ms);
/* Fastest recorded ok time (INFINITY if none). */
double tess_replay_best_time(const tess_replay *rp);
/* The template's default config (also the space's default), when the
 * recording marks it: a record export's line whose strategy is "default".
 * False for files that do not name one (Kernel Tuner caches, T4 files). */
bool tess_replay_default(const tess_replay *rp, tess_config *c);

#endif
