/* search.h - the built-in search strategies. */
#ifndef TESS_SEARCH_H
#define TESS_SEARCH_H

#include "core/strategy.h"

extern const tess_strategy_ops tess_search_exhaustive;
extern const tess_strategy_ops tess_search_random;
extern const tess_strategy_ops tess_search_anneal;
extern const tess_strategy_ops tess_search_genetic;
extern const tess_strategy_ops tess_search_bayes;
extern const tess_strategy_ops tess_search_model;
extern const tess_strategy_ops tess_search_agent;

/* Registers every built-in strategy (calling it again is harmless). */
tess_status tess_search_register(void);

#endif
