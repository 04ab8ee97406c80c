/*
 * accuracy.h - what the row-wise operators and the activations share about
 * storage and accuracy: one storage dtype (f32, bf16 or f16; 16-bit storage
 * is accumulated in f32), the accepted error of an output stored in it, and
 * the error budget that opens the spaces to shortcuts.
 *
 * Accepted error of an output: |out - ref| <= (exact + budget) * (scale +
 * |ref|), where `exact` covers rounding to the storage dtype on both sides
 * (the reference is stored in it too: one unit in the last place, 2^-7
 * relative for bf16, 2^-10 for f16) and f32 arithmetic, and `budget` is the
 * task's error_budget attribute: what the user accepts beyond an exact
 * kernel. A shortcut (a fast intrinsic, an approximation on a range, a
 * skipped max-subtraction) is searched only when the budget is above 0, and
 * kept only when it passes on random and on typical inputs.
 */
#ifndef TESS_REDUCTIONS_ACCURACY_H
#define TESS_REDUCTIONS_ACCURACY_H

#include <stdint.h>
#include <gsl/gsl_rng.h>
#include "core/op.h"
#include "core/space.h"
#include "core/strbuf.h"

/* The attribute declaration every operator with shortcuts carries. */
#define TESS_ERROR_BUDGET_ATTR                                                               \
    {.name = "error_budget", .type = TESS_ATTR_REAL, .dflt = "0",                            \
     .help = "extra error accepted relative to the float64 reference; > 0 searches shortcuts"}

/* TESS_OK when the task has one dtype, f32, bf16 or f16, and a budget in [0, 1). */
tess_status tess_storage_check(const tess_op *op, const tess_task *t);
/* The task's error_budget (0 when absent). */
double tess_error_budget(const tess_task *t);
/* Adds shortcut parameter `name` to a space, its values {exact, fast}
 * (max_sub: {1, 0}), the exact one the default and marked so
 * (tess_space_set_shortcut): a budget's report names the best config that
 * takes no shortcut beside the best one. */
tess_status tess_shortcut_add(tess_space *s, const char *name, double exact, double fast);
/* The accepted error of an output of the task's dtype: exact + budget. */
double tess_storage_tolerance(const tess_task *t);

/* The macro that selects the storage type and its conversions in the
 * generated sources (templates/storage.c, templates/storage.cuh):
 * "STORAGE_F32", "STORAGE_BF16" or "STORAGE_F16". */
const char *tess_storage_macro(const tess_task *t);
/* Appends the CUDA storage type, its conversions and its VEC-wide vector
 * (core/templates/storage.cuh, then templates/storage.cuh) to b. */
void tess_storage_cuda_put(tess_strbuf *b);
/* Bytes per element of the storage dtype. */
static inline int tess_storage_size(const tess_task *t) { return (int)tess_dtype_size(t->dtype); }

/* Random inputs: tess_uniform_fill (core/host_parallel.h). */

/* Typical inputs: the statistics real data has, in blocks that each hold
 * one kind. Fills n values of dtype d at host with kind k of the list
 * (block b holds kind b mod TESS_TYPICAL_KINDS). */
typedef enum tess_typical_kind {
    TESS_TYPICAL_LARGE,      /* magnitudes up to 100 (logits before a softmax) */
    TESS_TYPICAL_CONSTANT,   /* near-constant: an offset with a small spread */
    TESS_TYPICAL_OUTLIER,    /* uniform [-1, 1] with one huge value */
    TESS_TYPICAL_DENORMAL,   /* subnormal magnitudes of the dtype */
    TESS_TYPICAL_KINDS
} tess_typical_kind;

/* Fills `count` elements of block `block` (starting at element `first`)
 * with that block's kind of typical inputs. */
void tess_typical_fill_block(void *host, tess_dtype d, int64_t first, int64_t count, int64_t block, gsl_rng *rng);

#endif
