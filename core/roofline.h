/*
 * roofline.h - the least time a task can take on a device, from its
 * compulsory bytes and flops and the device's calibrated ceilings (device.h).
 *
 * Two uses. The bound names the ceiling that limits a task, for the
 * fraction of ceiling a tuning run reports: the copy bandwidth for its
 * bytes or the rate of its compute unit for its flops, whichever gives the
 * longer time. The floor is a time no correct kernel can beat: a measured
 * time below it means the kernel skipped work (verification saw its
 * outputs once; a kernel that caches them, or works only on its first call,
 * passes that check), so the result is invalid rather than a best.
 */
#ifndef TESS_ROOFLINE_H
#define TESS_ROOFLINE_H

#include "device.h"
#include "op.h"

/* The floor's allowance for ceilings measured below the true peak: the
 * rates it uses are the calibrated ones plus this fraction. A GPU's
 * calibration runs on a device the runner owns and repeats within a few
 * percent; a CPU's is taken on a host other processes share, and a copy
 * bandwidth calibrated while another job ran was seen at half of what the
 * same host gives when quiet. A kernel that skips its work is faster than
 * that by far more than either allowance. */
#define TESS_FLOOR_SLACK_GPU 0.10
#define TESS_FLOOR_SLACK_CPU 1.00

/* The slack for a device (its backend decides which). */
double tess_floor_slack(const tess_device *d);

typedef struct tess_bound {
    tess_ceiling_kind ceiling;  /* the ceiling that gives the longer time */
    double rate;                /* its value (GB/s or GFLOP/s) as used, slack included for a floor */
    double amount;              /* bytes or flops that ran at it */
    double ms;                  /* amount / rate; 0 when no ceiling applies (not calibrated) */
} tess_bound;

/* The compute unit whose rate bounds the task's flops: the operator's
 * compute_unit, else the fp64 FMA rate for f64 tasks and the fp32 one for
 * every other dtype. */
tess_ceiling_kind tess_op_compute_unit(const tess_op *op, const tess_task *t);

/* The bound of a task that moves `bytes` and computes `flops` on unit:
 * bytes at the copy bandwidth, flops at the unit's rate. */
tess_bound tess_roofline_bound(double bytes, double flops, tess_ceiling_kind unit, const tess_device *d);

/* The floor: bytes at the faster of the copy and the read-only bandwidth,
 * flops at the unit's rate, each rate raised by tess_floor_slack(d). Of the
 * bytes, those the device's caches could hold are not counted: at the start
 * of a launch its caches hold at most l2_bytes of its inputs and at its end
 * at most l2_bytes of its outputs wait there to be written back, so at least
 * bytes - 2 * l2_bytes cross the memory bus, however the buffers were
 * rotated. A working set that fits in the caches therefore gets a floor
 * from its flops only. */
tess_bound tess_roofline_floor(double bytes, double flops, tess_ceiling_kind unit, const tess_device *d);

/* Whether a measured median is credible for the task on d: false, with a
 * message naming the time, the floor and the ceiling, when it is below the
 * floor. */
bool tess_time_credible(const tess_op *op, const tess_task *t, const tess_device *d, double time_ms,
                        char *why, size_t len);

#endif
