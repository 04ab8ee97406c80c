/*
 * halo.h - the transport that carries halos between the ranks of a split
 * run: messages posted together, then waited for, so the caller computes
 * what needs no halo while they are in flight.
 *
 * Two transports:
 *   local  the ranks live in this process on the CPU; posting fills every
 *          destination with NaN bytes and waiting copies the messages, so a
 *          kernel that reads a halo before the wait computes NaN, never a
 *          plausible stale value;
 *   nccl   one rank per GPU, one communicator per run (every GPU in this
 *          process: ncclCommInitAll; one rank per process: ncclCommInitRank)
 *          and ncclSend/ncclRecv pairs in one group on each rank's stream;
 *          libnccl.so.2 and libcuda.so.1 are loaded at run time, and NVLink
 *          multicast stays off (NCCL_NVLS_ENABLE=0) since on shared GPU
 *          hosts it can take the GPUs from others.
 */
#ifndef TESS_HALO_H
#define TESS_HALO_H

#include <stddef.h>
#include "tessera.h"

typedef struct tess_halo_msg {
    int from, to;      /* ranks */
    const void *src;   /* in the sender's memory (host for local, device for nccl) */
    void *dst;         /* in the receiver's memory */
    size_t bytes;
} tess_halo_msg;

typedef struct tess_halo_transport tess_halo_transport;

/* Starts the messages (copied: msgs may be reused after the call); their
 * sources must not change and their destinations must not be read until
 * tess_halo_wait returns. One post at a time. */
tess_status tess_halo_post(tess_halo_transport *t, const tess_halo_msg *msgs, int n);
/* Returns when every posted message has arrived. */
tess_status tess_halo_wait(tess_halo_transport *t);
const char *tess_halo_name(const tess_halo_transport *t);
void tess_halo_destroy(tess_halo_transport *t);   /* NULL-safe */

/* The in-process transport. */
tess_status tess_halo_local_create(tess_halo_transport **out);
/* The NCCL transport over `ranks` GPUs: devices[r] is rank r's CUDA device
 * ordinal, streams[r] the CUstream its messages go on (borrowed; waiting
 * synchronizes them).
 * TESS_ERR_UNAVAILABLE when libnccl.so.2 or libcuda.so.1 cannot be loaded,
 * TESS_ERR_RUNTIME when NCCL fails, with NCCL's message. */
tess_status tess_halo_nccl_create(int ranks, const int *devices, void *const *streams, tess_halo_transport **out);

/* One rank per process: rank 0 makes the communicator's id
 * (tess_halo_nccl_unique_id) and hands it to the others, then every rank
 * creates its transport with it (collectively: each call returns once all
 * ranks have joined). A rank's messages go on a stream the transport
 * creates in the calling thread's current CUDA context; it posts the sends
 * of messages from itself and the receives of those to itself (a message to
 * itself is a device-to-device copy), so the pointers of other ranks are
 * never read. */
#define TESS_HALO_NCCL_ID_BYTES 128
tess_status tess_halo_nccl_unique_id(unsigned char id[TESS_HALO_NCCL_ID_BYTES]);
tess_status tess_halo_nccl_create_rank(int ranks, int rank, const unsigned char id[TESS_HALO_NCCL_ID_BYTES],
                                       tess_halo_transport **out);

#endif
