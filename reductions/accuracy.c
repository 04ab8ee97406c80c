/* accuracy.c - storage dtypes, tolerances, error budgets and typical inputs
 * of the row-wise operators and the activations (accuracy.h). */
#include <math.h>
#include "core/error.h"
#include "accuracy.h"
#include "core/host_parallel.h"

tess_status tess_storage_check(const tess_op *op, const tess_task *t) {
    if (t->dtype != TESS_F32 && t->dtype != TESS_BF16 && t->dtype != TESS_F16)
        return tess_error(TESS_ERR_ARG, "%s supports f32, bf16 and f16, not %s", op->name, tess_dtype_name(t->dtype));
    if (t->acc_dtype != t->dtype || t->out_dtype != t->dtype)
        return tess_error(TESS_ERR_ARG, "%s takes one dtype (16-bit storage accumulates in f32), not %s,%s,%s",
                          op->name, tess_dtype_name(t->dtype), tess_dtype_name(t->acc_dtype),
                          tess_dtype_name(t->out_dtype));
    double budget;
    tess_status st = tess_task_attr_real(t, "error_budget", 0, &budget);
    if (st) return st;
    if (budget < 0 || budget >= 1)
        return tess_error(TESS_ERR_ARG, "%s: error_budget=%g must be at least 0 and below 1", op->name, budget);
    return TESS_OK;
}

double tess_error_budget(const tess_task *t) {
    double budget = 0;
    return tess_task_attr_real(t, "error_budget", 0, &budget) ? 0 : budget;
}

tess_status tess_shortcut_add(tess_space *s, const char *name, double exact, double fast) {
    const double values[] = {exact, fast};
    tess_status st = tess_space_add(s, name, 2, values, 0);
    return st ? st : tess_space_set_shortcut(s, name, exact);
}

double tess_storage_tolerance(const tess_task *t) {
    /* one unit in the last place of the storage (both sides are rounded to
     * it), and room for f32 arithmetic */
    double exact = t->dtype == TESS_BF16 ? 0x1p-7 + 1e-4 : t->dtype == TESS_F16 ? 0x1p-10 + 1e-4 : 2e-5;
    return exact + tess_error_budget(t);
}

const char *tess_storage_macro(const tess_task *t) {
    return t->dtype == TESS_BF16 ? "STORAGE_BF16" : t->dtype == TESS_F16 ? "STORAGE_F16" : "STORAGE_F32";
}

extern const char tess_src_core_templates_storage_cuh[];
extern const char tess_src_reductions_templates_storage_cuh[];

void tess_storage_cuda_put(tess_strbuf *b) {
    tess_strbuf_puts(b, tess_src_core_templates_storage_cuh);
    tess_strbuf_puts(b, tess_src_reductions_templates_storage_cuh);
}

void tess_typical_fill_block(void *host, tess_dtype d, int64_t first, int64_t count, int64_t block, gsl_rng *rng) {
    const double tiny = d == TESS_F16 ? 0x1p-20 : 0x1p-130;   /* below the smallest normal of the dtype */
    const tess_typical_kind kind = (tess_typical_kind)(block % TESS_TYPICAL_KINDS);
    const int64_t outlier = count > 0 ? (int64_t)gsl_rng_uniform_int(rng, (unsigned long)count) : 0;
    for (int64_t i = 0; i < count; i++) {
        double u = 2.0 * gsl_rng_uniform(rng) - 1.0, v = u;
        switch (kind) {
        case TESS_TYPICAL_LARGE: v = 100.0 * u; break;
        case TESS_TYPICAL_CONSTANT: v = 10.0 + u; break;
        case TESS_TYPICAL_OUTLIER: v = i == outlier ? 1e4 : u; break;
        case TESS_TYPICAL_DENORMAL: v = tiny * u; break;
        case TESS_TYPICAL_KINDS: break;
        }
        tess_dtype_store(host, d, first + i, v);
    }
}

