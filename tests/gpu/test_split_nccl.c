/* test_split_nccl.c - the NCCL halo transport between two GPUs: each GPU's
 * edge planes arrive in the other's halo exactly, in one message or in
 * chunks, over several exchanges. Skips (77) with fewer than two GPUs or
 * without NCCL. */
#include "check.h"
#include "gpu/nccl_pair.h"

static void fill(float *v, size_t n, int rank, int round) {
    for (size_t i = 0; i < n; i++) v[i] = (float)(rank * 1000003 + round * 7919 + (int)i) * 0.5f;
}

int main(void) {
    const size_t n = 3 * 64 * 64;   /* three planes of 64x64 floats */
    nccl_pair p;
    int rc = nccl_pair_open(&p, n * sizeof(float));
    if (rc) {
        nccl_pair_close(&p);
        return rc;
    }
    float *host = malloc(n * sizeof *host), *got = malloc(n * sizeof *got);
    for (int round = 0; round < 4 && host && got; round++) {
        int chunks = round + 1 == 4 ? 7 : round + 1;
        for (int r = 0; r < 2; r++) {
            fill(host, n, r, round);
            CHECK(p.drv->cuCtxSetCurrent(p.ctx[r]) == CUDA_SUCCESS);
            CHECK(p.drv->cuMemcpyHtoDAsync(p.send[r], host, n * sizeof *host, p.stream[r]) == CUDA_SUCCESS);
            CHECK(p.drv->cuMemsetD8Async(p.recv[r], 0, n * sizeof *host, p.stream[r]) == CUDA_SUCCESS);
            CHECK(p.drv->cuStreamSynchronize(p.stream[r]) == CUDA_SUCCESS);
        }
        CHECK_OK(nccl_pair_exchange(&p, chunks));
        for (int r = 0; r < 2; r++) {   /* GPU r holds the other's planes */
            CHECK(p.drv->cuCtxSetCurrent(p.ctx[r]) == CUDA_SUCCESS);
            CHECK(p.drv->cuMemcpyDtoHAsync(got, p.recv[r], n * sizeof *got, p.stream[r]) == CUDA_SUCCESS);
            CHECK(p.drv->cuStreamSynchronize(p.stream[r]) == CUDA_SUCCESS);
            fill(host, n, 1 - r, round);
            CHECK_MSG(memcmp(got, host, n * sizeof *got) == 0, "round %d (%d chunks): GPU %d's halo", round, chunks, r);
        }
    }
    const char *nvls = getenv("NCCL_NVLS_ENABLE");
    CHECK(nvls && strcmp(nvls, "0") == 0);
    free(host);
    free(got);
    nccl_pair_close(&p);
    return check_finish("test_split_nccl");
}
