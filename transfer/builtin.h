/* builtin.h - registration of everything tessera ships: backends,
 * operators and strategies. */
#ifndef TESS_BUILTIN_H
#define TESS_BUILTIN_H

#include "core/tessera.h"

/* Registers the built-in backends, operators and strategies once per
 * process; later calls return the first call's status. */
tess_status tess_register_builtin(void);

#endif
