/* device.h - the hardware descriptor: the hardware input of every search and
 * part of every record's key. */
#ifndef TESS_DEVICE_H
#define TESS_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tessera.h"

/* The calibrated ceilings of a device, one per unit: two memory bandwidths
 * and the peak rates of its compute units. Each is measured by one of the
 * backend's calibration kernels (`tessera calibrate`). */
typedef enum tess_ceiling_kind {
    TESS_CEILING_COPY,       /* GB/s, bytes read + written, by a copy kernel */
    TESS_CEILING_READ,       /* GB/s, bytes read, by a kernel that only reads */
    TESS_CEILING_FMA_F32,    /* GFLOP/s of fp32 FMA (2 flops each) on the vector units */
    TESS_CEILING_FMA_F64,    /* GFLOP/s of fp64 FMA */
    TESS_CEILING_MMA_BF16,   /* GFLOP/s of dense tensor-core matrix multiply-accumulate, */
    TESS_CEILING_MMA_F16,    /*   bf16, f16 or fp8 (e4m3) inputs, fp32 accumulation */
    TESS_CEILING_MMA_FP8,
    TESS_CEILING_COUNT
} tess_ceiling_kind;

typedef struct tess_ceiling {
    double value;            /* GB/s or GFLOP/s; 0: not measured, or the unit is not present */
    char calibrated_at[32];  /* when it was measured (ISO 8601, UTC); "" if never */
} tess_ceiling;

typedef struct tess_device {
    char backend[16];          /* "cpu", "cuda", "replay" */
    char name[128];            /* "NVIDIA H200", "AMD EPYC 9454 ..." */
    char arch[32];             /* "sm_90"; on CPUs the ISA ("x86_64") */
    int units;                 /* streaming multiprocessors, or logical CPU cores */
    int cc_major, cc_minor;    /* compute capability (0 on CPUs) */
    double clock_mhz;          /* core clock */
    double mem_clock_mhz;
    int mem_bus_width;         /* bits */
    int64_t mem_bytes;
    int64_t l2_bytes;          /* L2 on GPUs; on CPUs every cache of level 2 and up, all instances */
    int64_t smem_per_block, smem_per_block_optin, smem_per_sm;
    int regs_per_block, regs_per_sm;
    int max_threads_per_block, max_threads_per_sm, warp_size;
    tess_ceiling ceiling[TESS_CEILING_COUNT];   /* indexed by tess_ceiling_kind */
} tess_device;

/* The ceiling's column and JSON name ("copy_gbps", "mma_bf16_gflops") and
 * its description ("copy bandwidth", "bf16 tensor-core rate"). */
const char *tess_ceiling_name(tess_ceiling_kind k);
const char *tess_ceiling_label(tess_ceiling_kind k);
/* Whether k is a bandwidth (GB/s) rather than a compute rate (GFLOP/s). */
bool tess_ceiling_is_bandwidth(tess_ceiling_kind k);
/* A ceiling is measured when it has a value or a calibration time; measured
 * with the value 0, the unit is not present on the device. */
bool tess_ceiling_measured(const tess_ceiling *c);
/* Whether every ceiling of d is measured (else it needs a calibration). */
bool tess_device_calibrated(const tess_device *d);

/* "cuda:NVIDIA H200:sm_90:132" - stable across runs on the same hardware. */
tess_status tess_device_key(const tess_device *d, char *buf, size_t len);

/* The descriptor of a typical GPU of a CUDA architecture ("sm_80", "sm_90";
 * "sm_90a" reads as sm_90), as its driver reports it, without ceilings:
 * code for it is generated and compiled without the GPU. TESS_ERR_ARG,
 * listing the known ones, for another. */
tess_status tess_device_preset(const char *arch, tess_device *out);

#endif
