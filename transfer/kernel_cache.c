/* kernel_cache.c - the context's dispatched kernels, by request, in an
 * open-addressing hash table: a repeated dispatch is one hash and one probe. */
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "dispatch.h"

typedef struct entry {
    uint64_t hash;
    char op[TESS_KEY_MAX];        /* the name and any attributes ("gemm:layout=nt,...") */
    char dtype[16];
    char backend[16];
    int ndim;
    int64_t shape[TESS_MAX_DIMS];
    tess_kernel *kernel;          /* NULL: empty slot */
} entry;

struct tess_kernel_cache {
    entry *slots;
    size_t cap, n;                /* cap is a power of two */
};

static uint64_t mix_bytes(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

static uint64_t mix_text(uint64_t h, const char *s) {
    for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return (h ^ 0xff) * 0x100000001b3ULL;
}

static uint64_t request_hash(const char *op, const int64_t *shape, int ndim, const char *dtype,
                             const char *backend) {
    uint64_t h = mix_text(0xcbf29ce484222325ULL, op);
    h = mix_text(h, dtype);
    h = mix_text(h, backend);
    return mix_bytes(h, shape, (size_t)ndim * sizeof *shape);
}

static bool matches(const entry *e, uint64_t h, const char *op, const int64_t *shape, int ndim,
                    const char *dtype, const char *backend) {
    return e->hash == h && e->ndim == ndim && strcmp(e->op, op) == 0 &&
           strcmp(e->dtype, dtype ? dtype : "") == 0 && strcmp(e->backend, backend ? backend : "") == 0 &&
           memcmp(e->shape, shape, (size_t)ndim * sizeof *shape) == 0;
}

tess_kernel_cache *tess_kernel_cache_create(void) { return calloc(1, sizeof(tess_kernel_cache)); }

void tess_kernel_cache_destroy(tess_kernel_cache *c) {
    if (!c) return;
    for (size_t i = 0; i < c->cap; i++) tess_kernel_destroy(c->slots[i].kernel);
    free(c->slots);
    free(c);
}

tess_kernel *tess_kernel_cache_find(const tess_kernel_cache *c, const char *op, const int64_t *shape,
                                    int ndim, const char *dtype, const char *backend) {
    if (c->cap == 0 || ndim < 1 || ndim > TESS_MAX_DIMS) return NULL;
    uint64_t h = request_hash(op, shape, ndim, dtype, backend);
    for (size_t i = h & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
        const entry *e = &c->slots[i];
        if (!e->kernel) return NULL;
        if (matches(e, h, op, shape, ndim, dtype, backend)) return e->kernel;
    }
}

static void place(entry *slots, size_t cap, const entry *e) {
    size_t i = e->hash & (cap - 1);
    while (slots[i].kernel) i = (i + 1) & (cap - 1);
    slots[i] = *e;
}

tess_status tess_kernel_cache_add(tess_kernel_cache *c, const char *op, const int64_t *shape, int ndim,
                                  const char *dtype, const char *backend, tess_kernel *k) {
    if (strlen(op) >= TESS_KEY_MAX || (dtype && strlen(dtype) >= 16) || (backend && strlen(backend) >= 16) ||
        ndim < 1 || ndim > TESS_MAX_DIMS)
        return tess_error(TESS_ERR_ARG, "dispatch request too long to cache");
    if (2 * (c->n + 1) > c->cap) {   /* keep the table at most half full */
        size_t cap = c->cap ? 2 * c->cap : 16;
        entry *slots = calloc(cap, sizeof *slots);
        if (!slots) return tess_error(TESS_ERR_NOMEM, "kernel cache");
        for (size_t i = 0; i < c->cap; i++)
            if (c->slots[i].kernel) place(slots, cap, &c->slots[i]);
        free(c->slots);
        c->slots = slots;
        c->cap = cap;
    }
    entry e = {.hash = request_hash(op, shape, ndim, dtype, backend), .ndim = ndim, .kernel = k};
    strcpy(e.op, op);
    strcpy(e.dtype, dtype ? dtype : "");
    strcpy(e.backend, backend ? backend : "");
    memcpy(e.shape, shape, (size_t)ndim * sizeof *shape);
    place(c->slots, c->cap, &e);
    c->n++;
    return TESS_OK;
}
