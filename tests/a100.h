/*
 * a100.h - the descriptor of an NVIDIA A100 (108 SMs, sm_80), the oldest
 * architecture tessera's CUDA kernels claim, for tests that compile for it
 * without having one (see h200.h).
 */
#ifndef TESS_TEST_A100_H
#define TESS_TEST_A100_H

#include "h200.h"

static inline tess_device tess_test_a100(const char *name) {
    tess_device d = tess_test_h200(name);
    strcpy(d.arch, "sm_80");
    d.units = 108;
    d.cc_major = 8;
    d.cc_minor = 0;
    d.clock_mhz = 1410;
    d.mem_clock_mhz = 1593;
    d.mem_bytes = 85899345920LL;
    d.l2_bytes = 41943040;
    d.smem_per_block_optin = 166912;
    d.smem_per_sm = 167936;
    return d;
}

#endif
