/* halo_impl.h - what a halo transport implements (halo.h): its slots and
 * state, behind the common handle. */
#ifndef TESS_HALO_IMPL_H
#define TESS_HALO_IMPL_H

#include "halo.h"

typedef struct tess_halo_ops {
    const char *name;
    tess_status (*post)(void *state, const tess_halo_msg *msgs, int n);
    tess_status (*wait)(void *state);
    void (*destroy)(void *state);
} tess_halo_ops;

struct tess_halo_transport {
    const tess_halo_ops *ops;
    void *state;
    int posted;   /* a post not yet waited for */
};

/* A handle over ops and state (owned from here on, destroyed on failure). */
tess_status tess_halo_wrap(const tess_halo_ops *ops, void *state, tess_halo_transport **out);

#endif
