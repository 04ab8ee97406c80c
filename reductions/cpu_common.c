/* cpu_common.c - thread counts and fast math of the family's C generators (cpu_common.h). */
#include <stdio.h>
#include "cpu_common.h"

tess_status tess_cpu_add_threads(tess_space *s, const tess_device *dev) {
    double threads[16];
    int n = 0;
    int cores = dev->units > 0 ? dev->units : 1;
    for (int v = 1; v < cores && n < 15; v *= 2) threads[n++] = v;
    threads[n++] = cores;
    return tess_space_add(s, "threads", n, threads, n - 1);
}

void tess_cpu_set_fast_math(tess_kernel_source *src) {
    src->fast_math = true;
    /* before the source on the command line: kept even where the linker drops unused libraries */
    snprintf(src->options, sizeof src->options, "-Wl,--no-as-needed -lmvec");
}
