/* builtin.c - registration of the built-in backends, operators and strategies. */
#include <pthread.h>
#include <stdio.h>
#include "builtin.h"
#include "core/backend_cpu.h"
#include "core/backend.h"
#include "core/error.h"
#include "reductions/sum.h"
#include "search/search.h"
#include "stencils/family.h"
#include "stencils/heat3d.h"
#include "user_stencils.h"
#ifdef TESS_HAVE_CUDA
#include "core/cuda/cuda_backend.h"
#endif

static pthread_once_t once = PTHREAD_ONCE_INIT;
static tess_status status;
static char message[512];

static void register_all(void) {
    status = tess_cpu_register();
#ifdef TESS_HAVE_CUDA
    if (!status) status = tess_cuda_register();
#endif
    if (!status) status = tess_op_register(&tess_op_heat3d);
    if (!status) status = tess_op_register(&tess_op_sum);
    /* the stencil library; names registered above (heat3d) keep their operator */
    if (!status) status = tess_stencils_register_builtin();
    if (!status) status = tess_user_stencils_register();   /* failures are kept for tess_op_check */
    if (!status) status = tess_search_register_builtin();
    if (status) snprintf(message, sizeof message, "%s", tess_errmsg());
}

tess_status tess_register_builtin(void) {
    pthread_once(&once, register_all);
    if (status) return tess_error(status, "registering built-ins: %s", message);
    return TESS_OK;
}
