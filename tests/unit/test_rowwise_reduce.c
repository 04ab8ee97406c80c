/*
 * test_rowwise_reduce.c - `reduce`, the sum, max and mean of a 3D array
 * along one axis, on the cpu:
 *   - the float64 reference against values worked out by hand, along each
 *     axis, and the output's shape (the input's without that axis);
 *   - tasks that are not 3D, an axis outside 0..2 and an unknown kind
 *     refused with a message; errors of a sum measured against n / 2;
 *   - the cpu kernels: the default, the largest and random configs of each
 *     kind along each axis, in f32 and bf16 on small shapes with
 *     remainders, verified by the hardware evaluator.
 */
#include "reductions/axis_reduce.h"
#include "rowwise_check.h"
#include "transfer/builtin.h"

static tess_task reduce_task(tess_dtype d, const int64_t shape[3], const char *attrs) {
    tess_task t;
    memset(&t, 0, sizeof t);
    CHECK_OK(tess_op_make_task(&tess_op_reduce, d, d, d, shape, 3, attrs, &t));
    return t;
}

/* x[z][y][x] = 100 z + 10 y + x over 2x3x4. */
static void check_references(void) {
    const int64_t shape[3] = {2, 3, 4};
    float x[24], y[12];
    for (int i = 0; i < 24; i++) x[i] = (float)(100 * (i / 12) + 10 * (i / 4 % 3) + i % 4);
    void *bufs[2] = {x, y};
    tess_task t = reduce_task(TESS_F32, shape, "kind=sum,axis=0");
    tess_buffer_list b = {0};
    CHECK_OK(tess_op_buffers(&tess_op_reduce, &t, &b));
    CHECK(b.n == 2 && b.spec[0].count == 24 && b.spec[1].count == 12);
    tess_buffer_list_free(&b);
    CHECK_OK(tess_op_reduce.reference(&tess_op_reduce, &t, bufs));
    for (int i = 0; i < 12; i++) CHECK_NEAR(y[i], 100 + 2 * (10 * (i / 4) + i % 4), 0);   /* (0 + 100) + 2 (10 y + x) */
    t = reduce_task(TESS_F32, shape, "kind=max,axis=1");
    CHECK_OK(tess_op_reduce.reference(&tess_op_reduce, &t, bufs));
    for (int i = 0; i < 8; i++) CHECK_NEAR(y[i], 100 * (i / 4) + 20 + i % 4, 0);
    t = reduce_task(TESS_F32, shape, "kind=mean");   /* the last axis by default */
    CHECK_OK(tess_op_reduce.reference(&tess_op_reduce, &t, bufs));
    for (int i = 0; i < 6; i++) CHECK_NEAR(y[i], 100 * (i / 3) + 10 * (i % 3) + 1.5, 1e-6);
    CHECK_NEAR(tess_op_reduce.verify_scale(&tess_op_reduce, &t, bufs), 1, 0);
    t = reduce_task(TESS_F32, shape, "kind=sum,axis=1");
    CHECK_NEAR(tess_op_reduce.verify_scale(&tess_op_reduce, &t, bufs), 1.5, 0);
    CHECK_NEAR(tess_op_reduce.bytes(&tess_op_reduce, &t), 4.0 * (24 + 8), 0);

    tess_task bad;
    const int64_t flat[2] = {4, 8};
    CHECK(tess_op_make_task(&tess_op_reduce, TESS_F32, TESS_F32, TESS_F32, flat, 2, NULL, &bad) == TESS_ERR_ARG &&
          strstr(tess_errmsg(), "3D"));
    CHECK(tess_op_make_task(&tess_op_reduce, TESS_F32, TESS_F32, TESS_F32, shape, 3, "axis=3", &bad) == TESS_ERR_ARG &&
          strstr(tess_errmsg(), "axis=3"));
    CHECK(tess_op_make_task(&tess_op_reduce, TESS_F32, TESS_F32, TESS_F32, shape, 3, "kind=min", &bad) ==
          TESS_ERR_ARG);
}

int main(void) {
    CHECK_OK(tess_register_builtin());
    const tess_backend_ops *cpu = tess_backend_find("cpu");
    CHECK(cpu != NULL);
    if (!cpu) return check_finish("test_rowwise_reduce");
    tess_device dev;
    CHECK_OK(cpu->probe(&dev));
    check_references();
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 5);
    static const char *const kinds[] = {"sum", "max", "mean"};
    const int64_t shape[3] = {7, 33, 301};
    for (int k = 0; k < 3; k++)
        for (int axis = 0; axis < 3; axis++) {
            char attrs[64];
            snprintf(attrs, sizeof attrs, "kind=%s,axis=%d", kinds[k], axis);
            tess_task t = reduce_task(axis == 1 ? TESS_BF16 : TESS_F32, shape, attrs);
            check_task_kernels(cpu, &dev, &tess_op_reduce, &t, 2, rng);
        }
    gsl_rng_free(rng);
    return check_finish("test_rowwise_reduce");
}
