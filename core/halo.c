/*
 * halo.c - the common handle of the halo transports (halo.h), and the local
 * one: the ranks of a split run in this process.
 */
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "halo_impl.h"

tess_status tess_halo_wrap(const tess_halo_ops *ops, void *state, tess_halo_transport **out) {
    *out = calloc(1, sizeof **out);
    if (!*out) {
        ops->destroy(state);
        return tess_error(TESS_ERR_NOMEM, "halo transport");
    }
    (*out)->ops = ops;
    (*out)->state = state;
    return TESS_OK;
}

tess_status tess_halo_post(tess_halo_transport *t, const tess_halo_msg *msgs, int n) {
    if (t->posted) return tess_error(TESS_ERR_INTERNAL, "%s transport: a post before the last one was waited for", t->ops->name);
    if (n < 0 || (n > 0 && !msgs)) return tess_error(TESS_ERR_ARG, "%s transport: %d messages", t->ops->name, n);
    tess_status st = t->ops->post(t->state, msgs, n);
    t->posted = st == TESS_OK;
    return st;
}

tess_status tess_halo_wait(tess_halo_transport *t) {
    if (!t->posted) return TESS_OK;
    t->posted = 0;
    return t->ops->wait(t->state);
}

const char *tess_halo_name(const tess_halo_transport *t) { return t->ops->name; }

void tess_halo_destroy(tess_halo_transport *t) {
    if (!t) return;
    t->ops->destroy(t->state);
    free(t);
}

/* ---- local: deferred copies -------------------------------------------- */

typedef struct halo_local {
    tess_halo_msg *msg;
    int n, cap;
} halo_local;

static tess_status halo_local_post(void *state, const tess_halo_msg *msgs, int n) {
    halo_local *h = state;
    if (n > h->cap) {
        tess_halo_msg *m = realloc(h->msg, (size_t)n * sizeof *m);
        if (!m) return tess_error(TESS_ERR_NOMEM, "%d halo messages", n);
        h->msg = m;
        h->cap = n;
    }
    if (n > 0) memcpy(h->msg, msgs, (size_t)n * sizeof *msgs);
    h->n = n;
    /* all-ones bytes are a NaN in f32 and f64: a halo read too early shows */
    for (int i = 0; i < n; i++) memset(msgs[i].dst, 0xff, msgs[i].bytes);
    return TESS_OK;
}

static tess_status halo_local_wait(void *state) {
    halo_local *h = state;
    for (int i = 0; i < h->n; i++) memcpy(h->msg[i].dst, h->msg[i].src, h->msg[i].bytes);
    h->n = 0;
    return TESS_OK;
}

static void halo_local_destroy(void *state) {
    halo_local *h = state;
    if (h) free(h->msg);
    free(h);
}

static const tess_halo_ops halo_local_ops = {"local", halo_local_post, halo_local_wait, halo_local_destroy};

tess_status tess_halo_local_create(tess_halo_transport **out) {
    halo_local *h = calloc(1, sizeof *h);
    if (!h) return tess_error(TESS_ERR_NOMEM, "halo transport");
    return tess_halo_wrap(&halo_local_ops, h, out);
}
