/*
 * halo_nccl.c - the NCCL halo transport (halo.h): one rank per GPU in this
 * process, one communicator per run, each post one group of ncclSend and
 * ncclRecv pairs on the ranks' streams.
 *
 * libnccl.so.2 and libcuda.so.1 are loaded at run time, as the cuda backend
 * loads the driver, so the library builds and runs without them. The few
 * declarations used are NCCL's and the driver's C ABI (nccl.h, cuda.h):
 * handles are pointers, results and data types ints.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include "error.h"
#include "halo_impl.h"

typedef void *nccl_comm;
enum { NCCL_SUCCESS = 0, NCCL_INT8 = 0 };

typedef struct halo_nccl {
    void *lib, *cuda;
    int (*comm_init_all)(nccl_comm *comms, int ndev, const int *devices);
    int (*comm_destroy)(nccl_comm comm);
    int (*send)(const void *buf, size_t count, int type, int peer, nccl_comm comm, void *stream);
    int (*recv)(void *buf, size_t count, int type, int peer, nccl_comm comm, void *stream);
    int (*group_start)(void);
    int (*group_end)(void);
    const char *(*error_string)(int result);
    int (*stream_synchronize)(void *stream);
    int ranks;
    nccl_comm *comm;
    void **stream;
} halo_nccl;

static tess_status nccl_fail(const halo_nccl *h, int r, const char *what) {
    return tess_error(TESS_ERR_RUNTIME, "NCCL %s failed: %s", what, h->error_string ? h->error_string(r) : "unknown");
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
        r = h->send(m->src, m->bytes, NCCL_INT8, m->to, h->comm[m->from], h->stream[m->from]);
        if (r == NCCL_SUCCESS) r = h->recv(m->dst, m->bytes, NCCL_INT8, m->from, h->comm[m->to], h->stream[m->to]);
    }
    int e = h->group_end();
    if (r != NCCL_SUCCESS) return nccl_fail(h, r, "ncclSend/ncclRecv");
    return e == NCCL_SUCCESS ? TESS_OK : nccl_fail(h, e, "ncclGroupEnd");
}

static tess_status halo_nccl_wait(void *state) {
    halo_nccl *h = state;
    for (int i = 0; i < h->ranks; i++) {
        int r = h->stream_synchronize(h->stream[i]);
        if (r) return tess_error(TESS_ERR_RUNTIME, "cuStreamSynchronize on rank %d's stream failed (CUresult %d)", i, r);
    }
    return TESS_OK;
}

static void halo_nccl_destroy(void *state) {
    halo_nccl *h = state;
    if (!h) return;
    for (int i = 0; h->comm && i < h->ranks; i++)
        if (h->comm[i]) h->comm_destroy(h->comm[i]);
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
        {(void **)&h->comm_init_all, h->lib, "ncclCommInitAll"}, {(void **)&h->comm_destroy, h->lib, "ncclCommDestroy"},
        {(void **)&h->send, h->lib, "ncclSend"}, {(void **)&h->recv, h->lib, "ncclRecv"},
        {(void **)&h->group_start, h->lib, "ncclGroupStart"}, {(void **)&h->group_end, h->lib, "ncclGroupEnd"},
        {(void **)&h->error_string, h->lib, "ncclGetErrorString"},
        {(void **)&h->stream_synchronize, h->cuda, "cuStreamSynchronize"}};
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (!(*syms[i].slot = dlsym(syms[i].lib, syms[i].name)))
            return tess_error(TESS_ERR_UNAVAILABLE, "the nccl transport: %s not found", syms[i].name);
    return TESS_OK;
}

tess_status tess_halo_nccl_create(int ranks, const int *devices, void *const *streams, tess_halo_transport **out) {
    *out = NULL;
    if (ranks < 1 || !devices || !streams) return tess_error(TESS_ERR_ARG, "nccl transport: %d ranks", ranks);
    halo_nccl *h = calloc(1, sizeof *h);
    if (!h) return tess_error(TESS_ERR_NOMEM, "nccl transport");
    h->ranks = ranks;
    tess_status st = halo_nccl_load(h);
    if (!st && (!(h->comm = calloc((size_t)ranks, sizeof *h->comm)) || !(h->stream = calloc((size_t)ranks, sizeof *h->stream))))
        st = tess_error(TESS_ERR_NOMEM, "nccl transport");
    for (int i = 0; !st && i < ranks; i++) h->stream[i] = streams[i];
    if (!st) {
        setenv("NCCL_NVLS_ENABLE", "0", 1);   /* no NVLink multicast (no cuMulticastCreate) */
        int r = h->comm_init_all(h->comm, ranks, devices);
        if (r != NCCL_SUCCESS) {
            st = nccl_fail(h, r, "ncclCommInitAll");
            for (int i = 0; i < ranks; i++) h->comm[i] = NULL;
        }
    }
    if (st) {
        halo_nccl_destroy(h);
        return st;
    }
    return tess_halo_wrap(&halo_nccl_ops, h, out);
}
