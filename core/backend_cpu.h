/* backend_cpu.h - registration of the cpu backend. */
#ifndef TESS_BACKEND_CPU_H
#define TESS_BACKEND_CPU_H
#include "tessera.h"
tess_status tess_cpu_register(void);
#endif
