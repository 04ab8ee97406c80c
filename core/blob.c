/* blob.c - compiled kernels and generated sources: ownership helpers. */
#include <stdlib.h>
#include "backend.h"
#include "op.h"

void tess_blob_free(tess_blob *b) {
    free(b->data);
    b->data = NULL;
    b->size = 0;
}

void tess_kernel_source_free(tess_kernel_source *k) {
    free(k->code);
    k->code = NULL;
}
