/*
 * test_api_ops.c - the public API for driving an operator over many steps
 * (tessera.h only, as an application would): buffers of a task with their
 * roles and time levels, the ping-pong of levels, the float64 reference over
 * several steps against one step applied repeatedly, and the comparison,
 * which never passes over a NaN or an infinity.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "tessera.h"

static void check_buffers(void) {
    tess_buffer_info b[8];
    int n = 0;
    const int64_t shape[3] = {4, 8, 8};
    CHECK_OK(tess_op_list_buffers("hdiff", shape, 3, "f32", b, 8, &n));
    CHECK(n == 3);
    CHECK(strcmp(b[0].name, "u") == 0 && b[0].role == TESS_BUFFER_INPUT && b[0].advanced == 1);
    CHECK(strcmp(b[1].name, "coeff") == 0 && b[1].role == TESS_BUFFER_INPUT && b[1].advanced == 0);
    CHECK(b[1].lo == 0 && b[1].hi == 0.025);
    CHECK(strcmp(b[2].name, "u_out") == 0 && b[2].role == TESS_BUFFER_OUTPUT && b[2].advances == 0);
    CHECK(b[0].count == 256 && b[0].elem_bytes == 4 && strcmp(b[0].dtype, "f32") == 0 && b[0].rank == 3);
    CHECK(b[0].lo == -1 && b[0].hi == 1 && b[0].advances == -1);
    /* heat3d4 keeps a scratch level; the hand-written heat3d names its buffers as the stencil does */
    CHECK_OK(tess_op_list_buffers("heat3d4", shape, 3, "f64", b, 8, &n));
    CHECK(n == 3 && b[2].role == TESS_BUFFER_SCRATCH && b[2].advances == -1 && strcmp(b[2].dtype, "f64") == 0);
    CHECK_OK(tess_op_list_buffers("heat3d", shape, 3, "f32", b, 8, &n));
    CHECK(n == 2 && strcmp(b[0].name, "u") == 0 && b[1].advances == 0);
    /* a reduction has no time levels */
    const int64_t len[1] = {1000};
    CHECK_OK(tess_op_list_buffers("sum", len, 1, "f32", b, 8, &n));
    for (int i = 0; i < n; i++) CHECK(b[i].advances == -1 && b[i].advanced == 0);
    CHECK(tess_op_list_buffers("hdiff", shape, 3, "f32", b, 2, &n) == TESS_ERR_ARG && strstr(tess_errmsg(), "3 buffers"));
    CHECK(tess_op_list_buffers("nosuch", shape, 3, "f32", b, 8, &n) == TESS_ERR_ARG &&
          strstr(tess_errmsg(), "unknown operator 'nosuch'"));
    CHECK(tess_op_check("nosuch") == TESS_ERR_ARG && tess_op_check("hdiff") == TESS_OK);
    char dims[3][TESS_EXTENT_NAME_MAX];
    CHECK_OK(tess_op_extent_names("hdiff", shape, 3, dims));
    CHECK(strcmp(dims[0], "z") == 0 && strcmp(dims[1], "y") == 0 && strcmp(dims[2], "x") == 0);
    CHECK_OK(tess_op_extent_names("heat2d", shape + 1, 2, dims));
    CHECK(strcmp(dims[0], "y") == 0 && strcmp(dims[1], "x") == 0);
}

static void count_steps(long done, long steps, double elapsed_s, void *user) {
    (void)elapsed_s;
    long *calls = user;
    if (done == ++*calls && steps == 5) return;
    *calls = -1000;   /* out of order */
}

/* Five reference steps equal five single steps with the levels swapped by hand. */
static void check_reference_steps(void) {
    const int64_t shape[3] = {6, 7, 8};
    const int64_t n = 6 * 7 * 8;
    double *a[2], *b[2];
    for (int i = 0; i < 2; i++) {
        a[i] = calloc((size_t)n, sizeof(double));
        b[i] = calloc((size_t)n, sizeof(double));
    }
    for (int64_t i = 0; i < n; i++) a[0][i] = b[0][i] = sin(0.37 * (double)i);
    memcpy(a[1], a[0], (size_t)n * sizeof(double));   /* the fixed boundary values */
    memcpy(b[1], b[0], (size_t)n * sizeof(double));
    void *arrays[2] = {a[0], a[1]};
    long calls = 0;
    CHECK_OK(tess_reference_steps("heat3d", shape, 3, arrays, 2, 5, count_steps, &calls));
    CHECK(calls == 5);
    tess_buffer_info info[2];
    int nb;
    CHECK_OK(tess_op_list_buffers("heat3d", shape, 3, "f64", info, 2, &nb));
    void *by_hand[2] = {b[0], b[1]};
    for (int s = 0; s < 5; s++) {
        CHECK_OK(tess_reference_steps("heat3d", shape, 3, by_hand, 2, 1, NULL, NULL));
    }
    CHECK(memcmp(arrays[0], by_hand[0], (size_t)n * sizeof(double)) == 0);
    /* an odd number of swaps leaves the last level in the other array */
    CHECK(arrays[0] == a[1] && arrays[1] == a[0]);
    void *swap[2] = {a[0], a[1]};
    tess_op_advance(info, nb, swap);
    CHECK(swap[0] == a[1] && swap[1] == a[0]);
    CHECK(tess_reference_steps("heat3d", shape, 3, arrays, 1, 1, NULL, NULL) == TESS_ERR_ARG);
    for (int i = 0; i < 2; i++) {
        free(a[i]);
        free(b[i]);
    }
}

static void check_compare(void) {
    const double ref[4] = {1, -2, 3, 0.5};
    float got[4] = {1, -2, 3.0001f, 0.5};
    tess_comparison c;
    CHECK_OK(tess_reference_compare("f32", got, ref, 4, &c));
    CHECK(c.nonfinite == 0 && c.ref_nonfinite == 0 && c.worst == 2);
    CHECK_NEAR(c.max_diff, (3.0001f - 3.0) / 4, 1e-12);
    got[1] = NAN;   /* a NaN the reference does not have */
    CHECK_OK(tess_reference_compare("f32", got, ref, 4, &c));
    CHECK(isinf(c.max_diff) && c.nonfinite == 1 && c.ref_nonfinite == 0 && c.worst == 1);
    const double ref_nan[4] = {1, NAN, 3, INFINITY};   /* NaN in both, and an infinity in the reference */
    CHECK_OK(tess_reference_compare("f32", got, ref_nan, 4, &c));
    CHECK(isinf(c.max_diff) && c.nonfinite == 1 && c.ref_nonfinite == 2 && c.worst == 1);
    const double same[3] = {1, 2, 3};
    CHECK_OK(tess_reference_compare("f64", same, same, 3, &c));
    CHECK(c.max_diff == 0);
    CHECK(tess_reference_compare("i8", same, same, 3, &c) == TESS_ERR_ARG);
}

int main(void) {
    check_buffers();
    check_reference_steps();
    check_compare();
    return check_finish("test_api_ops");
}
