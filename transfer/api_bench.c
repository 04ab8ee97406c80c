/*
 * api_bench.c - the public face of the search benchmarks (tessera.h):
 * recorded spaces opened for replay and strategies run on them by name.
 * The benchmark itself is search/bench.c; this file only resolves names
 * and owns the handle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "core/strategy.h"
#include "search/bench.h"

struct tess_recording {
    tess_bench_space bs;
};

tess_status tess_recording_open(const char *path, tess_recording **out) {
    *out = NULL;
    tess_status st = tess_init();
    if (st) return st;
    if (!path || !*path) return tess_error(TESS_ERR_ARG, "no recording given");
    tess_recording *r = calloc(1, sizeof *r);
    if (!r) return tess_error(TESS_ERR_NOMEM, "out of memory opening %s", path);
    st = tess_bench_space_open(path, &r->bs);
    if (st) {
        free(r);
        return st;
    }
    *out = r;
    return TESS_OK;
}

void tess_recording_close(tess_recording *r) {
    if (!r) return;
    tess_bench_space_close(&r->bs);
    free(r);
}

void tess_recording_info_get(const tess_recording *r, tess_recording_info *out) {
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", r->bs.name);
    out->configs = r->bs.n;
    out->ok = r->bs.nok;
    out->best_ms = r->bs.best_ms;
    out->within_5pct = r->bs.within_5pct;
    out->within_1pct = r->bs.within_1pct;
}

tess_status tess_bench_recording(tess_recording *r, const char *strategy, const tess_bench_options *o,
                                 tess_bench_result *out) {
    memset(out, 0, sizeof *out);
    tess_status st = tess_init();
    if (st) return st;
    const tess_strategy_ops *ops = tess_strategy_find(strategy);
    if (!ops) {
        char names[512] = "";
        for (int i = 0; i < tess_strategy_count(); i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                     tess_strategy_at(i)->name);
        return tess_error(TESS_ERR_ARG, "unknown strategy '%s' (known: %s)", strategy ? strategy : "", names);
    }
    tess_bench_options defaults = tess_bench_options_default();
    return tess_bench_strategy(ops, &r->bs, o ? o : &defaults, out);
}
