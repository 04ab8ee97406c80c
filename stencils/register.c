/* register.c - the stencil family's operators: the hand-written heat3d, the
 * library of stencil specs embedded in the binary, and a user's own stencils
 * from the directories in $TESSERA_STENCIL_PATH. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "core/error.h"
#include "family.h"
#include "heat3d.h"

/* A failure of TESSERA_STENCIL_PATH, kept for the operator it concerns. */
static void keep_failure(const char *name, tess_status st) {
    char message[1024];
    snprintf(message, sizeof message, "TESSERA_STENCIL_PATH: %s", tess_errmsg());
    tess_op_register_failure(name, st, message);
}

/* The stencil files of one directory; only running out of memory stops. */
static tess_status register_user_dir(const char *dir) {
    struct stat info;
    bool exists = stat(dir, &info) == 0;
    if (!exists || !S_ISDIR(info.st_mode)) {
        if (!exists && errno == ENOENT) tess_error(TESS_ERR_NOTFOUND, "directory %s does not exist", dir);
        else tess_error(TESS_ERR_NOTFOUND, "%s is not a directory", dir);
        keep_failure("", TESS_ERR_NOTFOUND);
        return TESS_OK;
    }
    char **paths;
    size_t n;
    tess_status st = tess_stencils_library_files(dir, &paths, &n);
    if (st == TESS_ERR_NOMEM) return st;
    if (st) keep_failure("", st);
    for (size_t i = 0; i < n; i++) {
        char name[TESS_SPEC_NAME_MAX + 8];
        st = tess_stencils_register_new_file(paths[i], name, sizeof name);
        if (st == TESS_ERR_NOMEM) break;
        if (st) keep_failure(name, st);
        st = TESS_OK;
    }
    tess_stencils_free_paths(paths, n);
    return st;
}

/* The *.stencil files of the directories in $TESSERA_STENCIL_PATH (separated
 * by ':', as in PATH): a user's own stencils, operators like the library's.
 * A file that does not parse, a stencil with a built-in's name and a
 * directory that does not exist are kept as failures of the operator they
 * concern (tess_op_failure), so that one bad file breaks only the commands
 * that need its stencil or the list of operators. */
static tess_status register_user_stencils(void) {
    const char *path = getenv("TESSERA_STENCIL_PATH");
    if (!path || !*path) return TESS_OK;
    char *copy = strdup(path);
    if (!copy) return tess_error(TESS_ERR_NOMEM, "out of memory reading TESSERA_STENCIL_PATH");
    tess_status st = TESS_OK;
    for (char *save = NULL, *dir = strtok_r(copy, ":", &save); dir && !st; dir = strtok_r(NULL, ":", &save))
        st = register_user_dir(dir);
    free(copy);
    return st;
}

tess_status tess_stencils_register(void) {
    tess_status st = tess_op_register(&tess_op_heat3d);
    /* the library; names registered above (heat3d) keep their operator */
    if (!st) st = tess_stencils_register_builtin();
    return st ? st : register_user_stencils();
}
