/*
 * api_info.c - the public API's view of what is registered and present
 * (tessera.h): operators, strategies, shapes, devices and their
 * calibration. Thin: each call reads a registry or a probe and copies it out.
 */
#include <stdio.h>
#include <string.h>
#include "builtin.h"
#include "core/backend.h"
#include "core/error.h"
#include "core/records.h"
#include "core/runner.h"
#include "core/strategy.h"
#include "core/types.h"
#include "request.h"

_Static_assert(TESS_KEY_LEN == TESS_KEY_MAX, "public and internal key lengths differ");
_Static_assert(TESS_SHAPE_MAX == TESS_MAX_DIMS, "public and internal ranks differ");
_Static_assert(TESS_DEVICE_CEILINGS == TESS_CEILING_COUNT, "public and internal ceilings differ");

tess_status tess_init(void) { return tess_register_builtin(); }

const char *tess_outcome_label(int i) {
    return i >= 0 && i < TESS_OUTCOME_COUNT ? tess_outcome_name((tess_outcome)i) : NULL;
}

static void op_info(const tess_op *op, tess_op_info *out) {
    memset(out, 0, sizeof *out);
    out->name = op->name;
    out->family = op->family;
    out->summary = op->summary;
    out->default_shape = op->default_shape;
    for (int b = 0; b < op->nimpl; b++) {
        size_t used = strlen(out->backends);
        snprintf(out->backends + used, sizeof out->backends - used, "%s%s", used ? "," : "", op->impl[b].backend);
    }
    out->extents = op->extents;
    for (int a = 0; a < op->nattrs; a++) {
        size_t used = strlen(out->attrs);
        snprintf(out->attrs + used, sizeof out->attrs - used, "%s%s=%s", used ? "," : "", op->attrs[a].name,
                 op->attrs[a].dflt);
    }
}

tess_status tess_op_info_at(int i, tess_op_info *out) {
    tess_status st = tess_init();
    if (st) return st;
    const tess_op *op = tess_op_at(i);
    if (!op) return tess_error(TESS_ERR_NOTFOUND, "no operator %d (%d registered)", i, tess_op_count());
    op_info(op, out);
    return TESS_OK;
}

tess_status tess_op_info_find(const char *name, tess_op_info *out) {
    tess_status st = tess_init();
    if (!st && !name) st = tess_error(TESS_ERR_ARG, "no operator named");
    char op_name[TESS_OP_NAME_MAX];
    if (!st) st = tess_op_check(name);   /* unknown, or a user stencil file that failed */
    if (!st) st = tess_op_spec_name(name, op_name, NULL);   /* "op:attrs" names op */
    if (st) return st;
    op_info(tess_op_find(op_name), out);
    return TESS_OK;
}

tess_status tess_strategy_info_at(int i, tess_strategy_info *out) {
    tess_status st = tess_init();
    if (st) return st;
    const tess_strategy_ops *s = tess_strategy_at(i);
    if (!s) return tess_error(TESS_ERR_NOTFOUND, "no strategy %d (%d registered)", i, tess_strategy_count());
    out->name = s->name;
    out->summary = s->summary;
    out->is_default = strcmp(s->name, tess_strategy_default_name()) == 0;
    return TESS_OK;
}

tess_status tess_shape_from_text(const char *text, int64_t *shape, int *ndim) {
    return tess_shape_parse(text, shape, ndim);
}

tess_status tess_shape_to_text(const int64_t *shape, int ndim, char *buf, size_t len) {
    return tess_shape_format(shape, ndim, buf, len);
}

static void device_info(const tess_device *d, tess_device_info *out) {
    snprintf(out->backend, sizeof out->backend, "%s", d->backend);
    out->available = 1;
    tess_device_key(d, out->key, sizeof out->key);
    snprintf(out->name, sizeof out->name, "%s", d->name);
    snprintf(out->arch, sizeof out->arch, "%s", d->arch);
    out->units = d->units;
    out->cc_major = d->cc_major;
    out->cc_minor = d->cc_minor;
    out->clock_mhz = d->clock_mhz;
    out->mem_clock_mhz = d->mem_clock_mhz;
    out->mem_bus_width = d->mem_bus_width;
    out->mem_bytes = d->mem_bytes;
    out->cache_bytes = d->l2_bytes;
    out->smem_per_block = d->smem_per_block;
    out->smem_per_block_optin = d->smem_per_block_optin;
    out->smem_per_sm = d->smem_per_sm;
    out->regs_per_block = d->regs_per_block;
    out->regs_per_sm = d->regs_per_sm;
    out->max_threads_per_block = d->max_threads_per_block;
    out->max_threads_per_sm = d->max_threads_per_sm;
    out->warp_size = d->warp_size;
    for (int k = 0; k < TESS_CEILING_COUNT; k++) {
        const tess_ceiling *c = &d->ceiling[k];
        out->ceiling[k].label = tess_ceiling_label((tess_ceiling_kind)k);
        out->ceiling[k].unit = tess_ceiling_is_bandwidth((tess_ceiling_kind)k) ? "GB/s" : "GFLOP/s";
        out->ceiling[k].value = c->value;
        out->ceiling[k].measured = tess_ceiling_measured(c);
        snprintf(out->ceiling[k].calibrated_at, sizeof out->ceiling[k].calibrated_at, "%s", c->calibrated_at);
    }
}

tess_status tess_device_info_at(tess_context *ctx, int i, tess_device_info *out) {
    tess_status st = tess_init();
    if (st) return st;
    const tess_backend_ops *be = tess_backend_at(i);
    if (!be) return tess_error(TESS_ERR_NOTFOUND, "no backend %d (%d registered)", i, tess_backend_count());
    memset(out, 0, sizeof *out);
    tess_device d;
    if (be->probe(&d) != TESS_OK) {
        snprintf(out->backend, sizeof out->backend, "%s", be->name);
        snprintf(out->why, sizeof out->why, "%s", tess_errmsg());
        return TESS_OK;
    }
    if (ctx && (st = tess_records_load_ceilings(tess_context_records(ctx), &d))) return st;
    device_info(&d, out);
    return TESS_OK;
}

tess_status tess_device_calibrate(tess_context *ctx, const char *backend, tess_device_info *out) {
    const tess_backend_ops *be = NULL;
    tess_device d;
    tess_status st;
    if (backend) {
        if (!(be = tess_backend_find(backend)))
            return tess_error(TESS_ERR_ARG, "unknown backend '%s' (cpu, cuda)", backend);
        st = be->probe(&d);
    } else {   /* registered cpu first, so the last one present is the best */
        st = tess_error(TESS_ERR_UNAVAILABLE, "no backend available");
        for (int i = tess_backend_count() - 1; i >= 0 && st; i--) st = (be = tess_backend_at(i))->probe(&d);
    }
    double rates[TESS_CEILING_COUNT];
    int64_t id;
    tess_records *db = tess_context_records(ctx);
    if (!st) st = tess_records_put_device(db, &d, &id);   /* fails first on a read-only database */
    if (!st) st = tess_cache_check();
    if (!st) st = tess_backend_calibrate_isolated(be, &d, rates);
    if (!st) st = tess_records_set_ceilings(db, &d, rates);
    if (st) return st;
    memset(out, 0, sizeof *out);
    device_info(&d, out);
    return TESS_OK;
}
