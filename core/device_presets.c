/*
 * device_presets.c - descriptors of typical GPUs of each architecture, for
 * generating and compiling CUDA code on a machine without the GPU (NVRTC
 * needs no device). Each is the descriptor the driver reports for that
 * board, so records tuned on it elsewhere and imported here match its key.
 */
#include <stdio.h>
#include <string.h>
#include "device.h"
#include "error.h"

typedef struct preset {
    const char *arch, *name;
    int units;
    double clock_mhz, mem_clock_mhz;
    int mem_bus_width;
    int64_t mem_bytes, l2_bytes, smem_per_block_optin, smem_per_sm;
    int max_threads_per_sm;
} preset;

static const preset presets[] = {
    {"sm_70", "Tesla V100-SXM2-32GB", 80, 1530, 877, 4096, 34089730048LL, 6291456, 98304, 98304, 2048},
    {"sm_75", "Tesla T4", 40, 1590, 5001, 256, 15655829504LL, 4194304, 65536, 65536, 1024},
    {"sm_80", "NVIDIA A100-SXM4-80GB", 108, 1410, 1593, 5120, 85198045184LL, 41943040, 166912, 167936, 2048},
    {"sm_86", "NVIDIA GeForce RTX 3090", 82, 1695, 9751, 384, 25438715904LL, 6291456, 101376, 102400, 1536},
    {"sm_89", "NVIDIA GeForce RTX 4090", 128, 2520, 10501, 384, 25393692672LL, 75497472, 101376, 102400, 1536},
    {"sm_90", "NVIDIA H200", 132, 1980, 2619, 5120, 150000000000LL, 52428800, 232448, 233472, 2048},
};

tess_status tess_device_preset(const char *arch, tess_device *out) {
    char known[128] = "";
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
        const preset *p = &presets[i];
        size_t used = strlen(known);
        snprintf(known + used, sizeof known - used, "%s%s", used ? ", " : "", p->arch);
        /* sm_90a is sm_90 with its architecture-specific features */
        if (!arch || strncmp(arch, p->arch, 5) != 0 || (arch[5] && strcmp(arch + 5, "a") != 0)) continue;
        memset(out, 0, sizeof *out);
        snprintf(out->backend, sizeof out->backend, "cuda");
        snprintf(out->name, sizeof out->name, "%s", p->name);
        snprintf(out->arch, sizeof out->arch, "%s", p->arch);
        out->units = p->units;
        out->cc_major = p->arch[3] - '0';
        out->cc_minor = p->arch[4] - '0';
        out->clock_mhz = p->clock_mhz;
        out->mem_clock_mhz = p->mem_clock_mhz;
        out->mem_bus_width = p->mem_bus_width;
        out->mem_bytes = p->mem_bytes;
        out->l2_bytes = p->l2_bytes;
        out->smem_per_block = 49152;
        out->smem_per_block_optin = p->smem_per_block_optin;
        out->smem_per_sm = p->smem_per_sm;
        out->regs_per_block = out->regs_per_sm = 65536;
        out->max_threads_per_block = 1024;
        out->max_threads_per_sm = p->max_threads_per_sm;
        out->warp_size = 32;
        return TESS_OK;
    }
    return tess_error(TESS_ERR_ARG, "no typical device for architecture '%s' (known: %s)", arch ? arch : "",
                      known);
}
