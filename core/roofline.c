/* roofline.c - the bound and the floor of a task's time from the device's ceilings. */
#include <stdio.h>
#include <string.h>
#include "roofline.h"

double tess_floor_slack(const tess_device *d) {
    return strcmp(d->backend, "cpu") == 0 ? TESS_FLOOR_SLACK_CPU : TESS_FLOOR_SLACK_GPU;
}

tess_ceiling_kind tess_op_compute_unit(const tess_op *op, const tess_task *t) {
    if (op->compute_unit) return op->compute_unit(op, t);
    return t->dtype == TESS_F64 ? TESS_CEILING_FMA_F64 : TESS_CEILING_FMA_F32;
}

/* The longer of the two times; a ceiling not measured (0) gives none. */
static tess_bound longer(double bytes, tess_ceiling_kind memory, double gbps, double flops,
                         tess_ceiling_kind unit, double gflops) {
    tess_bound by_bytes = {memory, gbps, bytes, gbps > 0 && bytes > 0 ? bytes / (gbps * 1e9) * 1e3 : 0};
    tess_bound by_flops = {unit, gflops, flops, gflops > 0 && flops > 0 ? flops / (gflops * 1e9) * 1e3 : 0};
    return by_flops.ms > by_bytes.ms ? by_flops : by_bytes;
}

tess_bound tess_roofline_bound(double bytes, double flops, tess_ceiling_kind unit, const tess_device *d) {
    return longer(bytes, TESS_CEILING_COPY, d->ceiling[TESS_CEILING_COPY].value, flops, unit,
                  d->ceiling[unit].value);
}

tess_bound tess_roofline_floor(double bytes, double flops, tess_ceiling_kind unit, const tess_device *d) {
    const double copy = d->ceiling[TESS_CEILING_COPY].value, read = d->ceiling[TESS_CEILING_READ].value;
    const tess_ceiling_kind memory = read > copy ? TESS_CEILING_READ : TESS_CEILING_COPY;
    const double slack = tess_floor_slack(d);
    double uncached = bytes - 2.0 * (double)(d->l2_bytes > 0 ? d->l2_bytes : 0);
    return longer(uncached > 0 ? uncached : 0, memory, (read > copy ? read : copy) * (1 + slack), flops, unit,
                  d->ceiling[unit].value * (1 + slack));
}

bool tess_time_credible(const tess_op *op, const tess_task *t, const tess_device *d, double time_ms,
                        char *why, size_t len) {
    tess_bound f = tess_roofline_floor(op->bytes(op, t), op->flops(op, t), tess_op_compute_unit(op, t), d);
    if (!(time_ms < f.ms)) return true;
    bool bytes = tess_ceiling_is_bandwidth(f.ceiling);
    snprintf(why, len,
             "time %.4g ms is below the floor of %.4g ms that the %s allows (%.4g %s with %.0f%% slack, "
             "for %.4g %s%s): the kernel cannot have done all its work",
             time_ms, f.ms, tess_ceiling_label(f.ceiling), f.rate / (1 + tess_floor_slack(d)),
             bytes ? "GB/s" : "GFLOP/s", 100 * tess_floor_slack(d), f.amount / 1e9,
             bytes ? "GB" : "GFLOP", bytes ? " that the caches cannot hold" : "");
    return false;
}
