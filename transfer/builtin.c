/* builtin.c - registration of the built-in backends, operators and
 * strategies, once per process, through the generated module list. */
#include <pthread.h>
#include <stdio.h>
#include "builtin.h"
#include "core/error.h"

/* Generated from the module list (register_modules.c.in). */
tess_status tess_register_modules(void);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static tess_status status;
static char message[512];

static void register_all(void) {
    status = tess_register_modules();
    if (status) snprintf(message, sizeof message, "%s", tess_errmsg());
}

tess_status tess_register_builtin(void) {
    pthread_once(&once, register_all);
    if (status) return tess_error(status, "registering built-ins: %s", message);
    return TESS_OK;
}
