/* registry.c - operators, backends and strategies registered by name. */
#include <stdio.h>
#include <string.h>
#include "backend.h"
#include "error.h"
#include "op.h"
#include "strategy.h"

#define REGISTRY_MAX 64

/* One table of named entries; the name is the first member of each entry. */
typedef struct registry {
    const char *kind;
    const void *entries[REGISTRY_MAX];
    const char *names[REGISTRY_MAX];
    int n;
} registry;

static registry ops_registry = {.kind = "operator"};
static registry backend_registry = {.kind = "backend"};
static registry strategy_registry = {.kind = "strategy"};

static tess_status registry_add(registry *r, const char *name, const void *entry) {
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->names[i], name) == 0) {
            if (r->entries[i] == entry) return TESS_OK;   /* registering twice is harmless */
            return tess_error(TESS_ERR_ARG, "%s '%s' is already registered", r->kind, name);
        }
    if (r->n == REGISTRY_MAX) return tess_error(TESS_ERR_NOMEM, "too many %s entries", r->kind);
    r->names[r->n] = name;
    r->entries[r->n++] = entry;
    return TESS_OK;
}

static const void *registry_find(const registry *r, const char *name) {
    if (!name) return NULL;
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->names[i], name) == 0) return r->entries[i];
    return NULL;
}

static const void *registry_at(const registry *r, int i) {
    return i >= 0 && i < r->n ? r->entries[i] : NULL;
}

tess_status tess_op_register(const tess_op *op) {
    tess_status st = tess_op_check_complete(op);
    return st ? st : registry_add(&ops_registry, op->name, op);
}
const tess_op *tess_op_find(const char *name) { return registry_find(&ops_registry, name); }
int tess_op_count(void) { return ops_registry.n; }
const tess_op *tess_op_at(int i) { return registry_at(&ops_registry, i); }

tess_status tess_backend_register(const tess_backend_ops *ops) {
    return registry_add(&backend_registry, ops->name, ops);
}
const tess_backend_ops *tess_backend_find(const char *name) {
    return registry_find(&backend_registry, name);
}
int tess_backend_count(void) { return backend_registry.n; }
const tess_backend_ops *tess_backend_at(int i) { return registry_at(&backend_registry, i); }

tess_status tess_strategy_register(const tess_strategy_ops *ops) {
    return registry_add(&strategy_registry, ops->name, ops);
}
const tess_strategy_ops *tess_strategy_find(const char *name) {
    return registry_find(&strategy_registry, name);
}
int tess_strategy_count(void) { return strategy_registry.n; }
const tess_strategy_ops *tess_strategy_at(int i) { return registry_at(&strategy_registry, i); }

const char *tess_strategy_default_name(void) {
    return tess_strategy_find("agent") ? "agent" : "random";
}

tess_status tess_backend_best(const tess_op *op, const tess_backend_ops **ops, tess_device *dev) {
    static const char *const preference[] = {"cuda", "cpu"};
    char reasons[1024] = "";
    for (size_t i = 0; i < sizeof preference / sizeof preference[0]; i++) {
        const tess_backend_ops *be = tess_backend_find(preference[i]);
        if (!be || !tess_op_supports_backend(op, be->name)) continue;
        if (be->probe(dev) == TESS_OK && tess_op_check_device(op, dev) == TESS_OK) {
            *ops = be;
            return TESS_OK;
        }
        size_t used = strlen(reasons);
        snprintf(reasons + used, sizeof reasons - used, "%s%s: %s", used ? "; " : "", be->name,
                 tess_errmsg());
    }
    return tess_error(TESS_ERR_UNAVAILABLE, "no backend can run %s here (%s)", op->name,
                      reasons[0] ? reasons : "none registered");
}
