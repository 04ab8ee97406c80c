/* md_step_check.h - the kernels of the MD time-step operators
 * (reductions/pairs/md_step.h) verified on a backend: the tasks the unit
 * test (cpu) and the GPU test (cuda) both check, partial blocks, one cell
 * and both list layouts among them. */
#ifndef TESS_TEST_MD_STEP_CHECK_H
#define TESS_TEST_MD_STEP_CHECK_H

#include "rowwise_check.h"

static inline tess_task task_of(const char *op_name, tess_dtype d, const int64_t *shape, int nd, const char *attrs) {
    tess_task t;
    memset(&t, 0, sizeof t);
    CHECK_OK(tess_op_make_task(tess_op_find(op_name), d, TESS_DTYPE_COUNT, TESS_DTYPE_COUNT, shape, nd, attrs, &t));
    return t;
}

/* The default, the largest and `samples` random configs of each task. */
static inline void check_md_step_kernels(const tess_backend_ops *be, const tess_device *dev, int samples,
                                         gsl_rng *rng) {
    static const int64_t n[1] = {1001}, bin[2] = {4001, 5}, one[2] = {300, 1}, lst[3] = {4001, 112, 5},
                         lst1[3] = {300, 160, 1};
    static const struct {
        const char *op, *attrs;
        const int64_t *shape;
        int nd;
        tess_dtype d;
    } cases[] = {
        {"md_verlet", NULL, n, 1, TESS_F32},
        {"md_verlet", "thermostat=langevin", n, 1, TESS_F64},
        {"md_verlet", "half=second", n, 1, TESS_F32},
        {"md_displace", NULL, n, 1, TESS_F32},
        {"md_bin", NULL, bin, 2, TESS_F32},
        {"md_bin", "rc=3,density=0.776", one, 2, TESS_F32},
        {"md_list", NULL, lst, 3, TESS_F32},
        {"md_list", "layout=cols", lst, 3, TESS_F32},
        {"md_list", "rc=3,density=0.776", lst1, 3, TESS_F64},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tess_task t = task_of(cases[i].op, cases[i].d, cases[i].shape, cases[i].nd, cases[i].attrs);
        check_task_kernels(be, dev, tess_op_find(cases[i].op), &t, samples, rng);
    }
}

#endif
