/*
 * halo_nccl.c - the NCCL halo transport (halo.h): one communicator per run,
 * each post one group of ncclSend and ncclRecv pairs. Either every rank is
 * a GPU of this process (ncclCommInitAll, the caller's streams), or this
 * process is one rank (ncclCommInitRank, a stream of its own): it then
 * sends the messages from itself and receives those to itself.
 *
 * libnccl.so.2 and libcuda.so.1 are loaded at run time, as the cuda backend
 * loads the driver, so the library builds and runs without them. The few
 * declarations used are NCCL's and the driver's C ABI (nccl.h, cuda.h):
 * handles are pointers, results and data types ints, the unique id 128
 * bytes passed by value.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "halo_impl.h"

typedef void *nccl_comm;
typedef struct nccl_id { char internal[TESS_HALO_NCCL_ID_BYTES]; } nccl_id;
enum { NCCL_SUCCESS = 0, NCCL_INT8 = 0, CU_STREAM_NON_BLOCKING_FLAG = 1 };

typedef struct halo_nccl {
    void *lib, *cuda;
    int (*get_unique_id)(nccl_id *id);
    int (*comm_init_all)(nccl_comm *comms, int ndev, const int *devices);
    int (*comm_init_rank)(nccl_comm *comm, int nranks, nccl_id id, int rank);
    int (*comm_destroy)(nccl_comm comm);
    int (*send)(const void *buf, size_t count, int type, int peer, nccl_comm comm, void *stream);
    int (*recv)(void *buf, size_t count, int type, int peer, nccl_comm comm, void *stream);
    int (*group_start)(void);
    int (*group_end)(void);
    const char *(*error_string)(int result);
    int (*stream_create)(void **stream, unsigned flags);
    int (*stream_destroy)(void *stream);
    int (*stream_synchronize)(void *stream);
    int ranks;
    int me;              /* this process's rank, or -1: every rank is here */
    int ncomm;           /* communicators and streams held: ranks, or 1 */
    nccl_comm *comm;
    void **stream;
    bool own_stream;
} halo_nccl;

static tess_status nccl_fail(const halo_nccl *h, int r, const char *what) {
    return tess_error(TESS_ERR_RUNTIME, "NCCL %s failed: %s", what, h->error_string ? h->error_string(r) : "unknown");
}

/* Index into comm and stream of a rank held here, else -1. */
static int held(const halo_nccl *h, int rank) {
    if (h->me < 0) return rank;
    return rank == h->me ? 0 : -1;
}

static tess_status halo_nccl_post(void *state, const tess_halo_msg *msgs, int n) {
    halo_nccl *h = state;
    for (int i = 0; i < n; i++)
        if (msgs[i].from < 0 || msgs[i].from >= h->ranks || msgs[i].to < 0 || msgs[i].to >= h->ranks)
            return tess_error(TESS_ERR_ARG, "halo message %d goes from rank %d to %d of %d", i, msgs[i].from,
                              msgs[i].to, h->ranks);
    int r = h->group_start();
    if (r != NCCL_SUCCESS) return nccl_fail(h, r, "ncclGroupStart");
    /* every send and its receive in one group: NCCL orders them without deadlock */
    for (int i = 0; i < n && r == NCCL_SUCCESS; i++) {
        const tess_halo_msg *m = &msgs[i];
        int s = held(h, m->from), d = held(h, m->to);
        if (s >= 0) r = h->send(m->src, m->bytes, NCCL_INT8, m->to, h->comm[s], h->stream[s]);
        if (r == NCCL_SUCCESS && d >= 0) r = h->recv(m->dst, m->bytes, NCCL_INT8, m->from, h->comm[d], h->stream[d]);
    }
    int e = h->group_end();
    if (r != NCCL_SUCCESS) return nccl_fail(h, r, "ncclSend/ncclRecv");
    return e == NCCL_SUCCESS ? TESS_OK : nccl_fail(h, e, "ncclGroupEnd");
}

static tess_status halo_nccl_wait(void *state) {
    halo_nccl *h = state;
    for (int i = 0; i < h->ncomm; i++) {
        int r = h->stream_synchronize(h->stream[i]);
        if (r) return tess_error(TESS_ERR_RUNTIME, "cuStreamSynchronize on a halo stream failed (CUresult %d)", r);
    }
    return TESS_OK;
}

static void halo_nccl_destroy(void *state) {
    halo_nccl *h = state;
    if (!h) return;
    for (int i = 0; h->comm && i < h->ncomm; i++)
        if (h->comm[i]) h->comm_destroy(h->comm[i]);
    for (int i = 0; h->own_stream && h->stream && i < h->ncomm; i++)
        if (h->stream[i]) h->stream_destroy(h->stream[i]);
    free(h->comm);
    free(h->stream);
    if (h->lib) dlclose(h->lib);
    if (h->cuda) dlclose(h->cuda);
    free(h);
}

static const tess_halo_ops halo_nccl_ops = {"nccl", halo_nccl_post, halo_nccl_wait, halo_nccl_destroy};

/* Loads the symbols; TESS_ERR_UNAVAILABLE naming what is missing. */
static tess_status halo_nccl_load(halo_nccl *h) {
    if (!(h->lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL)))
        return tess_error(TESS_ERR_UNAVAILABLE, "the nccl transport needs libnccl.so.2: %s", dlerror());
    if (!(h->cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)))
        return tess_error(TESS_ERR_UNAVAILABLE, "the nccl transport needs the CUDA driver libcuda.so.1: %s", dlerror());
    struct { void **slot; void *lib; const char *name; } syms[] = {
        {(void **)&h->get_unique_id, h->lib, "ncclGetUniqueId"},
        {(void **)&h->comm_init_all, h->lib, "ncclCommInitAll"}, {(void **)&h->comm_init_rank, h->lib, "ncclCommInitRank"},
        {(void **)&h->comm_destroy, h->lib, "ncclCommDestroy"},
        {(void **)&h->send, h->lib, "ncclSend"}, {(void **)&h->recv, h->lib, "ncclRecv"},
        {(void **)&h->group_start, h->lib, "ncclGroupStart"}, {(void **)&h->group_end, h->lib, "ncclGroupEnd"},
        {(void **)&h->error_string, h->lib, "ncclGetErrorString"},
        {(void **)&h->stream_create, h->cuda, "cuStreamCreate"}, {(void **)&h->stream_destroy, h->cuda, "cuStreamDestroy_v2"},
        {(void **)&h->stream_synchronize, h->cuda, "cuStreamSynchronize"}};
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (!(*syms[i].slot = dlsym(syms[i].lib, syms[i].name)))
            return tess_error(TESS_ERR_UNAVAILABLE, "the nccl transport: %s not found", syms[i].name);
    return TESS_OK;
}

/* A transport holding n communicators and streams (not yet initialized). */
static tess_status halo_nccl_new(int ranks, int me, int n, halo_nccl **out) {
    halo_nccl *h = *out = calloc(1, sizeof *h);
    if (!h) return tess_error(TESS_ERR_NOMEM, "nccl transport");
    h->ranks = ranks;
    h->me = me;
    h->ncomm = n;
    tess_status st = halo_nccl_load(h);
    if (!st && (!(h->comm = calloc((size_t)n, sizeof *h->comm)) || !(h->stream = calloc((size_t)n, sizeof *h->stream))))
        st = tess_error(TESS_ERR_NOMEM, "nccl transport");
    setenv("NCCL_NVLS_ENABLE", "0", 1);   /* no NVLink multicast (no cuMulticastCreate) */
    return st;
}

/* Hands h over as a transport, or destroys it after a failed NCCL call r. */
static tess_status halo_nccl_finish(halo_nccl *h, int r, const char *what, tess_halo_transport **out) {
    if (r != NCCL_SUCCESS) {
        tess_status st = nccl_fail(h, r, what);
        memset(h->comm, 0, (size_t)h->ncomm * sizeof *h->comm);
        halo_nccl_destroy(h);
        return st;
    }
    return tess_halo_wrap(&halo_nccl_ops, h, out);
}

tess_status tess_halo_nccl_create(int ranks, const int *devices, void *const *streams, tess_halo_transport **out) {
    *out = NULL;
    if (ranks < 1 || !devices || !streams) return tess_error(TESS_ERR_ARG, "nccl transport: %d ranks", ranks);
    halo_nccl *h;
    tess_status st = halo_nccl_new(ranks, -1, ranks, &h);
    if (st) {
        halo_nccl_destroy(h);
        return st;
    }
    for (int i = 0; i < ranks; i++) h->stream[i] = streams[i];
    return halo_nccl_finish(h, h->comm_init_all(h->comm, ranks, devices), "ncclCommInitAll", out);
}

tess_status tess_halo_nccl_unique_id(unsigned char id[TESS_HALO_NCCL_ID_BYTES]) {
    halo_nccl *h;
    tess_status st = halo_nccl_new(1, 0, 1, &h);
    nccl_id nid;
    int r = st ? NCCL_SUCCESS : h->get_unique_id(&nid);
    if (!st && r != NCCL_SUCCESS) st = nccl_fail(h, r, "ncclGetUniqueId");
    if (!st) memcpy(id, nid.internal, sizeof nid.internal);
    halo_nccl_destroy(h);
    return st;
}

tess_status tess_halo_nccl_create_rank(int ranks, int rank, const unsigned char id[TESS_HALO_NCCL_ID_BYTES],
                                       tess_halo_transport **out) {
    *out = NULL;
    if (ranks < 1 || rank < 0 || rank >= ranks) return tess_error(TESS_ERR_ARG, "nccl transport: rank %d of %d", rank, ranks);
    halo_nccl *h;
    tess_status st = halo_nccl_new(ranks, rank, 1, &h);
    if (!st) {
        h->own_stream = true;
        int r = h->stream_create(&h->stream[0], CU_STREAM_NON_BLOCKING_FLAG);
        if (r) st = tess_error(TESS_ERR_RUNTIME, "cuStreamCreate for the halos failed (CUresult %d): is a CUDA "
                               "context current?", r);
    }
    if (st) {
        halo_nccl_destroy(h);
        return st;
    }
    nccl_id nid;
    memcpy(nid.internal, id, sizeof nid.internal);
    return halo_nccl_finish(h, h->comm_init_rank(&h->comm[0], ranks, nid, rank), "ncclCommInitRank", out);
}
