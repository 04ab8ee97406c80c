/* check.h - the test harness: CHECK macros that count and report failures.
 * A test program returns check_finish(): 0 when every check passed, 1 otherwise. */
#ifndef TESS_TEST_CHECK_H
#define TESS_TEST_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_failures_;
static int check_count_;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        check_count_++;                                                              \
        if (!(cond)) {                                                               \
            check_failures_++;                                                       \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

#define CHECK_MSG(cond, ...)                                                         \
    do {                                                                             \
        check_count_++;                                                              \
        if (!(cond)) {                                                               \
            check_failures_++;                                                       \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                     \
        }                                                                            \
    } while (0)

/* A call returning tess_status that must succeed; prints tess_errmsg() if not. */
#define CHECK_OK(call)                                                                  \
    do {                                                                                \
        int st_ = (call);                                                               \
        CHECK_MSG(st_ == 0, "%s returned %d (%s)", #call, st_, tess_errmsg());          \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                            \
    do {                                                                                 \
        double a_ = (a), b_ = (b);                                                       \
        CHECK_MSG(fabs(a_ - b_) <= (tol), "%s = %.10g, %s = %.10g", #a, a_, #b, b_);     \
    } while (0)

static inline int check_finish(const char *name) {
    printf("%s: %d checks, %d failed\n", name, check_count_, check_failures_);
    return check_failures_ ? 1 : 0;
}

#endif
