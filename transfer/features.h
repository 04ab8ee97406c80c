/*
 * features.h - what a task looks like to the transfer module: a feature
 * vector (shape on a log scale, aspect ratios, element size, bytes and
 * FLOPs, the device's size and ceilings) and a similarity between tasks that
 * also weighs whether they share the operator, the family and the device.
 */
#ifndef TESS_FEATURES_H
#define TESS_FEATURES_H

#include "core/device.h"
#include "core/op.h"
#include "core/task.h"

#define TESS_TASK_NFEATURES 12
#define TESS_TASK_DEVICE_FEATURES 9   /* features from this index on describe the device */

typedef struct tess_task_profile {
    tess_task task;
    char family[32];
    char device_key[TESS_KEY_MAX];
    double f[TESS_TASK_NFEATURES];
} tess_task_profile;

/* Fills a profile; op may be NULL when the operator is not registered here
 * (then bytes and FLOPs are estimated from the shape). */
void tess_task_profile_init(tess_task_profile *p, const tess_task *t, const tess_op *op,
                            const tess_device *dev, const char *device_key);

/* 1 for the same task on the same device, falling towards 0 as shapes,
 * operators, families and devices differ. */
double tess_task_similarity(const tess_task_profile *a, const tess_task_profile *b);

#endif
