/* types.h - small value types shared by every module: dtypes and outcomes. */
#ifndef TESS_TYPES_H
#define TESS_TYPES_H

#include <stddef.h>
#include <stdint.h>
#include "tessera.h"

typedef enum tess_dtype {
    TESS_F16 = 0,
    TESS_BF16,
    TESS_F32,
    TESS_F64,
    TESS_I32,
    TESS_E4M3,   /* fp8: 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities, 448 at most */
    TESS_U8,     /* unsigned byte: small codes such as cell kinds */
    TESS_DTYPE_COUNT
} tess_dtype;

const char *tess_dtype_name(tess_dtype t);          /* "f32" */
size_t tess_dtype_size(tess_dtype t);                /* bytes per element */
/* Parses "f32", "fp32", "float32", "float"...; TESS_ERR_ARG on anything else. */
tess_status tess_dtype_parse(const char *text, tess_dtype *out);

/* The outcome of evaluating one candidate config. Failure is data: every
 * candidate ends with one of these and is recorded. */
typedef enum tess_outcome {
    TESS_RESULT_OK = 0,
    TESS_RESULT_COMPILE_ERROR,
    TESS_RESULT_RUNTIME_ERROR,
    TESS_RESULT_WRONG_RESULT,
    TESS_RESULT_TIMEOUT,
    TESS_RESULT_INVALID,
    TESS_OUTCOME_COUNT
} tess_outcome;

const char *tess_outcome_name(tess_outcome o);       /* "ok", "compile_error", ... */
tess_status tess_outcome_parse(const char *text, tess_outcome *out);

/* Element i of an array of dtype t, as a double (f16/bf16 converted). */
double tess_dtype_load(const void *base, tess_dtype t, int64_t i);
/* Stores v (rounded to nearest) as element i of an array of dtype t. */
void tess_dtype_store(void *base, tess_dtype t, int64_t i, double v);

/* Seconds since an arbitrary point, monotonic. */
double tess_now(void);

#endif
