/* result.h - what one evaluated candidate produced. */
#ifndef TESS_RESULT_H
#define TESS_RESULT_H

#include "backend.h"
#include "space.h"
#include "types.h"

typedef struct tess_result {
    tess_config config;
    tess_outcome status;
    char message[512];          /* why it failed; compiler log excerpt; "" when ok */
    double time_ms;             /* median; INFINITY unless ok */
    double min_ms, max_ms;
    double spread;              /* (p75 - p25) / median */
    int reps;
    double gbps, gflops;        /* achieved, from the operator's byte and FLOP counts */
    double compile_ms;
    tess_kernel_metrics metrics;
} tess_result;

void tess_result_init(tess_result *r, const tess_config *c);
/* Sets a failed status with a formatted message; time becomes INFINITY and
 * the error unknown. */
void tess_result_fail(tess_result *r, tess_outcome status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
