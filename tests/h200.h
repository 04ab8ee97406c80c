/*
 * h200.h - the descriptor of an NVIDIA H200 (132 SMs, sm_90) under a given
 * name, for tests and benchmarks that need a CUDA device without having one:
 * NVRTC compiles for it anywhere, and the records store it like a probed one.
 */
#ifndef TESS_TEST_H200_H
#define TESS_TEST_H200_H

#include <stdio.h>
#include <string.h>
#include "core/device.h"

static inline tess_device tess_test_h200(const char *name) {
    tess_device d;
    memset(&d, 0, sizeof d);
    strcpy(d.backend, "cuda");
    snprintf(d.name, sizeof d.name, "%s", name);
    strcpy(d.arch, "sm_90");
    d.units = 132;
    d.cc_major = 9;
    d.cc_minor = 0;
    d.clock_mhz = 1980;
    d.mem_clock_mhz = 2619;
    d.mem_bus_width = 5120;
    d.mem_bytes = 150000000000LL;
    d.l2_bytes = 52428800;
    d.smem_per_block = 49152;
    d.smem_per_block_optin = 232448;
    d.smem_per_sm = 233472;
    d.regs_per_block = 65536;
    d.regs_per_sm = 65536;
    d.max_threads_per_block = 1024;
    d.max_threads_per_sm = 2048;
    d.warp_size = 32;
    return d;
}

#endif
