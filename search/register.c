/* register.c - registers the built-in strategies by name. */
#include "search/search.h"

tess_status tess_search_register(void) {
    static const tess_strategy_ops *const builtin[] = {
        &tess_search_exhaustive,
        &tess_search_random,
        &tess_search_bayes,
        &tess_search_model,
        &tess_search_genetic,
        &tess_search_anneal,
        &tess_search_agent,
    };
    for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++) {
        tess_status st = tess_strategy_register(builtin[i]);
        if (st) return st;
    }
    return TESS_OK;
}
