/* features.c - task features and similarity. */
#include <math.h>
#include <string.h>
#include "features.h"

static double log2p(double v) { return v > 0 ? log2(v) : 0; }

void tess_task_profile_init(tess_task_profile *p, const tess_task *t, const tess_op *op,
                            const tess_device *dev, const char *device_key) {
    memset(p, 0, sizeof *p);
    p->task = *t;
    snprintf(p->family, sizeof p->family, "%s", op ? op->family : "");
    snprintf(p->device_key, sizeof p->device_key, "%s", device_key ? device_key : "");
    /* extents aligned to the fastest dimension: x, y, z, w */
    double ext[4] = {1, 1, 1, 1};
    for (int i = 0; i < t->ndim && i < 4; i++) ext[i] = (double)t->shape[t->ndim - 1 - i];
    double elements = (double)tess_shape_elements(t->shape, t->ndim);
    double size = (double)tess_dtype_size(t->dtype);
    double bytes = op ? op->bytes(op, t) : 2 * elements * size;
    double flops = op ? op->flops(op, t) : elements;
    /* no feature of its own for the point count or the bytes: both follow
     * from the extents (and the dtype), and a second and third term for them
     * counted a grid's size difference three times (a 1-degree x 30-level
     * grid against 0.25 degrees x 137 fell below TESS_WARM_MIN_SIMILARITY) */
    double *f = p->f;
    for (int i = 0; i < 4; i++) f[i] = log2p(ext[i]);
    f[4] = log2p(ext[0] / ext[1]);
    f[5] = log2p(ext[1] / ext[2]);
    f[6] = t->ndim;
    f[7] = log2p(size);
    f[8] = log2p(flops / (bytes > 0 ? bytes : 1));
    f[9] = dev ? log2p(dev->units) : 0;
    f[10] = dev ? log2p((double)dev->l2_bytes) : 0;
    f[11] = dev ? log2p(dev->ceiling[TESS_CEILING_COPY].value) : 0;
}

double tess_task_similarity(const tess_task_profile *a, const tess_task_profile *b) {
    /* weights per feature: shape matters most; device features are
     * compared through the device term below as well */
    static const double w[TESS_TASK_NFEATURES] = {1.0, 0.7, 0.5, 0.2, 0.3, 0.2,
                                                  2.0, 1.5, 0.5, 0.4, 0.3, 0.3};
    double d = 0;
    for (int i = 0; i < TESS_TASK_NFEATURES; i++) {
        double diff = a->f[i] - b->f[i];
        d += w[i] * diff * diff;
    }
    if (strcmp(a->task.op, b->task.op) != 0) d += strcmp(a->family, b->family) == 0 ? 4.0 : 25.0;
    if (strcmp(a->device_key, b->device_key) != 0) d += 3.0;
    return exp(-0.5 * d / 4.0);
}
