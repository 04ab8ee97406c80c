/* register.c - the stencil family's operators: the hand-written heat3d, the
 * library of stencil specs embedded in the binary, and a user's own stencils
 * from the directories in $TESSERA_STENCIL_PATH. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "core/error.h"
#include "family.h"
#include "heat3d.h"

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

tess_status tess_stencils_register(void) {
    tess_status st = tess_op_register(&tess_op_heat3d);
    /* the library; names registered above (heat3d) keep their operator */
    if (!st) st = tess_stencils_register_builtin();
    return st ? st : register_user_stencils();
}
