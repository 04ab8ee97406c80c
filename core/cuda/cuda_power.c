/*
 * cuda_power.c - board power while kernels are timed, through NVML
 * (libnvidia-ml.so.1, loaded with dlopen; the toolkit ships no NVML header,
 * so the few declarations used are written here).
 *
 * Over windows of at least ENERGY_MIN_WINDOW_S the total-energy counter
 * gives the average power exactly; over shorter ones the mean of power
 * samples taken while the GPU works is used. No NVML, no reading: -1.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_internal.h"
#include "types.h"

#define ENERGY_MIN_WINDOW_S 0.25

/* From NVML's API: status 0 is success; devices are opaque handles. */
typedef int nvml_return;
typedef struct nvml_device_st *nvml_device;
#define NVML_OK 0

struct tess_cuda_power {
    void *lib;
    nvml_return (*shutdown)(void);
    nvml_return (*power_usage)(nvml_device, unsigned int *);                 /* milliwatts */
    nvml_return (*total_energy)(nvml_device, unsigned long long *);          /* millijoules */
    nvml_device device;
    bool have_energy;
    unsigned long long energy0;
    double t0;
    double sample_sum_mw;
    int samples;
};

static void *symbol(void *lib, const char *name) { return dlsym(lib, name); }

tess_cuda_power *tess_cuda_power_open(const char *pci_bus_id) {
    if (!pci_bus_id || !*pci_bus_id) return NULL;
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return NULL;
    nvml_return (*init)(void);
    nvml_return (*by_bus)(const char *, nvml_device *);
    tess_cuda_power *p = calloc(1, sizeof *p);
    void *s_init = symbol(lib, "nvmlInit_v2"), *s_bus = symbol(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    void *s_shut = symbol(lib, "nvmlShutdown"), *s_pow = symbol(lib, "nvmlDeviceGetPowerUsage");
    void *s_energy = symbol(lib, "nvmlDeviceGetTotalEnergyConsumption");
    if (!p || !s_init || !s_bus || !s_shut || !s_pow) {
        free(p);
        dlclose(lib);
        return NULL;
    }
    memcpy(&init, &s_init, sizeof init);
    memcpy(&by_bus, &s_bus, sizeof by_bus);
    memcpy(&p->shutdown, &s_shut, sizeof p->shutdown);
    memcpy(&p->power_usage, &s_pow, sizeof p->power_usage);
    if (s_energy) memcpy(&p->total_energy, &s_energy, sizeof p->total_energy);
    p->lib = lib;
    if (init() != NVML_OK) {
        free(p);
        dlclose(lib);
        return NULL;
    }
    unsigned int mw;
    if (by_bus(pci_bus_id, &p->device) != NVML_OK || p->power_usage(p->device, &mw) != NVML_OK) {
        tess_cuda_power_close(p);
        return NULL;
    }
    return p;
}

void tess_cuda_power_close(tess_cuda_power *p) {
    if (!p) return;
    p->shutdown();
    dlclose(p->lib);
    free(p);
}

void tess_cuda_power_begin(tess_cuda_power *p) {
    p->have_energy = p->total_energy && p->total_energy(p->device, &p->energy0) == NVML_OK;
    p->t0 = tess_now();
    p->sample_sum_mw = 0;
    p->samples = 0;
}

void tess_cuda_power_sample(tess_cuda_power *p) {
    unsigned int mw;
    if (p->power_usage(p->device, &mw) == NVML_OK) {
        p->sample_sum_mw += mw;
        p->samples++;
    }
}

double tess_cuda_power_end(tess_cuda_power *p) {
    double window = tess_now() - p->t0;
    unsigned long long energy1;
    if (p->have_energy && window >= ENERGY_MIN_WINDOW_S &&
        p->total_energy(p->device, &energy1) == NVML_OK && energy1 > p->energy0)
        return (double)(energy1 - p->energy0) * 1e-3 / window;
    if (p->samples > 0) return p->sample_sum_mw * 1e-3 / p->samples;
    return -1;
}
