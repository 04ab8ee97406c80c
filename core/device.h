/* device.h - the hardware descriptor: the hardware input of every search and
 * part of every record's key. */
#ifndef TESS_DEVICE_H
#define TESS_DEVICE_H

#include <stddef.h>
#include <stdint.h>
#include "tessera.h"

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
    int64_t l2_bytes;          /* L2 on GPUs, last-level cache on CPUs */
    int64_t smem_per_block, smem_per_block_optin, smem_per_sm;
    int regs_per_block, regs_per_sm;
    int max_threads_per_block, max_threads_per_sm, warp_size;
    /* Calibrated ceilings (tessera calibrate); 0 when not measured yet. */
    double ceiling_gbps;       /* copy bandwidth, bytes read + written */
    double ceiling_gflops;     /* FMA rate of the device's native float */
} tess_device;

/* "cuda:NVIDIA H200:sm_90:132" - stable across runs on the same hardware. */
tess_status tess_device_key(const tess_device *d, char *buf, size_t len);

/* The descriptor of a typical GPU of a CUDA architecture ("sm_80", "sm_90";
 * "sm_90a" reads as sm_90), as its driver reports it, without ceilings:
 * code for it is generated and compiled without the GPU. TESS_ERR_ARG,
 * listing the known ones, for another. */
tess_status tess_device_preset(const char *arch, tess_device *out);

#endif
