/* test_split_halo.c - the halo transports: the local one fills every
 * destination with NaN when a message is posted and delivers it at the
 * wait, refuses a second post before the wait; the NCCL one (all ranks in
 * one process, or one rank per process) loads its libraries at run time
 * and, on a host without GPUs, fails with a message instead of crashing,
 * NVLink multicast switched off before NCCL starts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/halo.h"

static void test_local(void) {
    tess_halo_transport *t = NULL;
    CHECK_OK(tess_halo_local_create(&t));
    if (!t) return;
    CHECK(strcmp(tess_halo_name(t), "local") == 0);
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {0}, c[3] = {0};
    double d[2] = {7, 8}, e[2] = {0};
    tess_halo_msg m[3] = {{0, 1, a, b, sizeof a}, {1, 0, a + 3, c, 3 * sizeof(float)}, {1, 2, d, e, sizeof d}};
    CHECK_OK(tess_halo_post(t, m, 3));
    memset(m, 0, sizeof m);   /* the transport keeps its own copy */
    CHECK(isnan(b[0]) && isnan(b[5]) && isnan(c[2]) && isnan(e[0]) && isnan(e[1]));   /* in flight */
    CHECK(a[0] == 1 && d[1] == 8);
    tess_halo_msg again = {0, 1, a, b, sizeof a};
    CHECK(tess_halo_post(t, &again, 1) == TESS_ERR_INTERNAL && strstr(tess_errmsg(), "waited for"));
    CHECK_OK(tess_halo_wait(t));
    CHECK(memcmp(a, b, sizeof a) == 0 && c[0] == 4 && c[2] == 6 && e[0] == 7 && e[1] == 8);
    CHECK_OK(tess_halo_wait(t));   /* nothing posted: nothing to wait for */
    CHECK_OK(tess_halo_post(t, NULL, 0));
    CHECK_OK(tess_halo_wait(t));
    CHECK(tess_halo_post(t, NULL, 2) == TESS_ERR_ARG);
    tess_halo_destroy(t);
    tess_halo_destroy(NULL);
}

static void test_nccl(void) {
    static int sentinel;   /* *out must be cleared on failure */
    tess_halo_transport *t = (tess_halo_transport *)&sentinel;
    int devices[2] = {0, 1};
    void *streams[2] = {NULL, NULL};
    CHECK(tess_halo_nccl_create(0, devices, streams, &t) == TESS_ERR_ARG && !t);
    setenv("CUDA_VISIBLE_DEVICES", "", 1);   /* no GPU, even on a GPU host */
    unsetenv("NCCL_NVLS_ENABLE");
    t = (tess_halo_transport *)&sentinel;
    tess_status st = tess_halo_nccl_create(2, devices, streams, &t);
    CHECK(st != TESS_OK && !t);
    CHECK_MSG((st == TESS_ERR_UNAVAILABLE && strstr(tess_errmsg(), ".so")) ||
              (st == TESS_ERR_RUNTIME && strstr(tess_errmsg(), "ncclCommInitAll")), "status %d: %s", st, tess_errmsg());
    if (st == TESS_ERR_RUNTIME) {   /* NCCL was loaded and started: multicast was off */
        const char *nvls = getenv("NCCL_NVLS_ENABLE");
        CHECK(nvls && strcmp(nvls, "0") == 0);
    }
    printf("nccl transport without GPUs: %s\n", tess_errmsg());
    unsigned char id[TESS_HALO_NCCL_ID_BYTES] = {0};
    CHECK(tess_halo_nccl_create_rank(2, 2, id, &t) == TESS_ERR_ARG && !t);   /* rank 2 of 2 */
    t = (tess_halo_transport *)&sentinel;
    st = tess_halo_nccl_create_rank(2, 1, id, &t);   /* no GPU: no stream, no communicator */
    CHECK_MSG(st != TESS_OK && !t, "status %d", st);
}

int main(void) {
    test_local();
    test_nccl();
    return check_finish("test_split_halo");
}
