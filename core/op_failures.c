/*
 * op_failures.c - operators that could not be registered (a user's stencil
 * file that does not parse, a directory of them that does not exist), kept
 * with the name they concern: looking that operator up reports why
 * (tess_op_check in the public API), and commands that need none of them
 * run. Filled at start-up, like the registry.
 */
#include <stdio.h>
#include <string.h>
#include "error.h"
#include "op.h"

#define MAX_FAILURES 32

typedef struct failure {
    char name[TESS_OP_NAME_MAX];
    tess_status status;
    char message[1024];
} failure;

static failure failures[MAX_FAILURES];
static int nfailures;

void tess_op_register_failure(const char *name, tess_status st, const char *message) {
    if (nfailures == MAX_FAILURES) return;
    failure *f = &failures[nfailures++];
    snprintf(f->name, sizeof f->name, "%s", name ? name : "");
    f->status = st;
    snprintf(f->message, sizeof f->message, "%s", message);
}

tess_status tess_op_failure(const char *name) {
    for (int i = 0; i < nfailures; i++)
        if (!name || strcmp(failures[i].name, name) == 0)
            return tess_error(failures[i].status, "%s", failures[i].message);
    return TESS_OK;
}
