/*
 * user_stencils.c - a user's own stencils: the *.stencil files of the
 * directories listed in $TESSERA_STENCIL_PATH (separated by ':', as in PATH).
 * Each file becomes an operator like the library's. A directory that does
 * not exist, a file that does not parse and a stencil that takes a built-in's
 * name are failures kept here with the name they concern: the operator's
 * lookup reports them (tess_op_check), commands that need no stencil run.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "core/error.h"
#include "stencils/family.h"
#include "user_stencils.h"

#define MAX_FAILURES 32

typedef struct failure {
    char name[64];       /* the stencil (or the file's stem); "" for a directory */
    tess_status status;
    char message[1024];
} failure;

static failure failures[MAX_FAILURES];
static int nfailures;

static void remember(const char *name, tess_status st) {
    if (nfailures == MAX_FAILURES) return;
    failure *f = &failures[nfailures++];
    snprintf(f->name, sizeof f->name, "%s", name);
    f->status = st;
    snprintf(f->message, sizeof f->message, "TESSERA_STENCIL_PATH: %s", tess_errmsg());
}

static tess_status register_dir(const char *dir) {
    struct stat info;
    bool exists = stat(dir, &info) == 0;
    if (!exists || !S_ISDIR(info.st_mode)) {
        if (!exists && errno == ENOENT) tess_error(TESS_ERR_NOTFOUND, "directory %s does not exist", dir);
        else tess_error(TESS_ERR_NOTFOUND, "%s is not a directory", dir);
        remember("", TESS_ERR_NOTFOUND);
        return TESS_OK;
    }
    char **paths;
    size_t n;
    tess_status st = tess_stencils_library_files(dir, &paths, &n);
    if (st == TESS_ERR_NOMEM) return st;
    if (st) remember("", st);
    for (size_t i = 0; i < n; i++) {
        char name[64];
        st = tess_stencils_register_new_file(paths[i], name, sizeof name);
        if (st == TESS_ERR_NOMEM) break;
        if (st) remember(name, st);
        st = TESS_OK;
    }
    tess_stencils_free_paths(paths, n);
    return st;
}

tess_status tess_user_stencils_register(void) {
    const char *path = getenv("TESSERA_STENCIL_PATH");
    if (!path || !*path) return TESS_OK;
    char *copy = strdup(path);
    if (!copy) return tess_error(TESS_ERR_NOMEM, "out of memory reading TESSERA_STENCIL_PATH");
    tess_status st = TESS_OK;
    for (char *save = NULL, *dir = strtok_r(copy, ":", &save); dir && !st; dir = strtok_r(NULL, ":", &save))
        st = register_dir(dir);
    free(copy);
    return st;
}

tess_status tess_user_stencils_failure(const char *name) {
    for (int i = 0; i < nfailures; i++)
        if (!name || strcmp(failures[i].name, name) == 0)
            return tess_error(failures[i].status, "%s", failures[i].message);
    return TESS_OK;
}
