/* types.c - dtype and outcome names, the monotonic clock. */
#include <strings.h>
#include <time.h>
#include "error.h"
#include "types.h"

static const struct {
    const char *name;
    size_t size;
} dtype_info[TESS_DTYPE_COUNT] = {
    [TESS_F16] = {"f16", 2}, [TESS_BF16] = {"bf16", 2}, [TESS_F32] = {"f32", 4},
    [TESS_F64] = {"f64", 8}, [TESS_I32] = {"i32", 4},
};

const char *tess_dtype_name(tess_dtype t) {
    return (unsigned)t < TESS_DTYPE_COUNT ? dtype_info[t].name : "?";
}

size_t tess_dtype_size(tess_dtype t) {
    return (unsigned)t < TESS_DTYPE_COUNT ? dtype_info[t].size : 0;
}

tess_status tess_dtype_parse(const char *text, tess_dtype *out) {
    static const struct {
        const char *alias;
        tess_dtype t;
    } aliases[] = {
        {"f16", TESS_F16},     {"fp16", TESS_F16},    {"half", TESS_F16},   {"float16", TESS_F16},
        {"bf16", TESS_BF16},   {"bfloat16", TESS_BF16}, {"f32", TESS_F32},  {"fp32", TESS_F32},
        {"float", TESS_F32},   {"float32", TESS_F32}, {"f64", TESS_F64},    {"fp64", TESS_F64},
        {"double", TESS_F64},  {"float64", TESS_F64}, {"i32", TESS_I32},    {"int32", TESS_I32},
    };
    if (!text) return tess_error(TESS_ERR_ARG, "missing dtype");
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcasecmp(text, aliases[i].alias) == 0) {
            *out = aliases[i].t;
            return TESS_OK;
        }
    return tess_error(TESS_ERR_ARG, "unknown dtype '%s' (expected f16, bf16, f32, f64 or i32)", text);
}

static const char *const outcome_names[TESS_OUTCOME_COUNT] = {
    [TESS_RESULT_OK] = "ok",
    [TESS_RESULT_COMPILE_ERROR] = "compile_error",
    [TESS_RESULT_RUNTIME_ERROR] = "runtime_error",
    [TESS_RESULT_WRONG_RESULT] = "wrong_result",
    [TESS_RESULT_TIMEOUT] = "timeout",
    [TESS_RESULT_INVALID] = "invalid",
};

const char *tess_outcome_name(tess_outcome o) {
    return (unsigned)o < TESS_OUTCOME_COUNT ? outcome_names[o] : "?";
}

tess_status tess_outcome_parse(const char *text, tess_outcome *out) {
    for (int i = 0; i < TESS_OUTCOME_COUNT; i++)
        if (text && strcasecmp(text, outcome_names[i]) == 0) {
            *out = (tess_outcome)i;
            return TESS_OK;
        }
    return tess_error(TESS_ERR_FORMAT, "unknown result status '%s'", text ? text : "(null)");
}

double tess_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
