/* builtin.c - registration of the built-in backends, operators and strategies. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "builtin.h"
#include "core/backend_cpu.h"
#include "core/backend.h"
#include "core/error.h"
#include "reductions/sum.h"
#include "search/search.h"
#include "stencils/family.h"
#include "stencils/heat3d.h"
#ifdef TESS_HAVE_CUDA
#include "core/cuda/cuda_backend.h"
#endif

static pthread_once_t once = PTHREAD_ONCE_INIT;
static tess_status status;
static char message[512];

/* The *.stencil files of the directories in $TESSERA_STENCIL_PATH (separated
 * by ':', as in PATH: those that do not exist are passed over): a user's own
 * stencils, operators like the library's. A file that does not parse fails
 * registration with its file:line:col. */
static tess_status register_user_stencils(void) {
    const char *path = getenv("TESSERA_STENCIL_PATH");
    if (!path || !*path) return TESS_OK;
    char *copy = strdup(path);
    if (!copy) return tess_error(TESS_ERR_NOMEM, "out of memory reading TESSERA_STENCIL_PATH");
    tess_status st = TESS_OK;
    for (char *save = NULL, *dir = strtok_r(copy, ":", &save); dir && !st; dir = strtok_r(NULL, ":", &save)) {
        struct stat info;
        if (stat(dir, &info) != 0 && errno == ENOENT) continue;
        st = tess_stencils_register_library(dir);
    }
    free(copy);
    return st ? tess_error_context(st, "TESSERA_STENCIL_PATH") : TESS_OK;
}

static void register_all(void) {
    status = tess_cpu_register();
#ifdef TESS_HAVE_CUDA
    if (!status) status = tess_cuda_register();
#endif
    if (!status) status = tess_op_register(&tess_op_heat3d);
    if (!status) status = tess_op_register(&tess_op_sum);
    /* the stencil library; names registered above (heat3d) keep their operator */
    if (!status) status = tess_stencils_register_builtin();
    if (!status) status = register_user_stencils();
    if (!status) status = tess_search_register_builtin();
    if (status) snprintf(message, sizeof message, "%s", tess_errmsg());
}

tess_status tess_register_builtin(void) {
    pthread_once(&once, register_all);
    if (status) return tess_error(status, "registering built-ins: %s", message);
    return TESS_OK;
}
