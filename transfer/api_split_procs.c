/*
 * api_split_procs.c - a split run on GPUs, one forked process per rank
 * (split_internal.h): each process sees only its GPU (CUDA_VISIBLE_DEVICES),
 * opens the records for reading, dispatches its windows' kernels, copies
 * its planes to the GPU and runs its rank, the halos through NCCL. Rank 0
 * makes the communicator's id and hands it to the others through pipes,
 * once its kernels exist: ncclGetUniqueId may initialize CUDA, after which
 * the cuda backend's probe could no longer fork.
 * The owned planes of the time levels come back through shared memory.
 *
 * This process never initializes CUDA, so forking is safe; a rank that
 * fails has its message passed back, and the other ranks, which would wait
 * for it in NCCL forever, are killed.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/error.h"
#include "split_internal.h"

/* What each rank's process hands back. */
typedef struct split_rank_result {
    int status;          /* tess_status */
    char message[600];
    tess_split_report report;
} split_rank_result;

/* CUDA_VISIBLE_DEVICES for rank k: its entry of the caller's list, else k. */
static void split_visible_device(int k, char *buf, size_t len) {
    const char *list = getenv("CUDA_VISIBLE_DEVICES");
    snprintf(buf, len, "%d", k);
    if (!list || !*list) return;
    for (int i = 0; i < k && list; i++) list = (list = strchr(list, ',')) ? list + 1 : NULL;
    if (list) snprintf(buf, len, "%.*s", (int)strcspn(list, ","), list);
}

static bool split_io(bool write_end, int fd, unsigned char *id, size_t n) {
    size_t done = 0;
    while (done < n) {
        ssize_t m = write_end ? write(fd, id + done, n - done) : read(fd, id + done, n - done);
        if (m < 0 && errno == EINTR) continue;
        if (m <= 0) return false;
        done += (size_t)m;
    }
    return true;
}

typedef struct split_pipes {
    int (*fd)[2];
    int k;
} split_pipes;

/* Rank 0 makes the NCCL id and writes it to every other rank's pipe; the
 * others read theirs. */
static tess_status split_share_id(split_run *r, void *user) {
    const split_pipes *p = user;
    if (p->k != 0) {
        if (!split_io(false, p->fd[p->k][0], r->nccl_id, sizeof r->nccl_id))
            return tess_error(TESS_ERR_RUNTIME, "rank 0 failed before it made the NCCL id");
        return TESS_OK;
    }
    tess_status st = tess_halo_nccl_unique_id(r->nccl_id);
    for (int j = 1; j < r->plan.ranks && !st; j++)
        if (!split_io(true, p->fd[j][1], r->nccl_id, sizeof r->nccl_id))
            st = tess_error(TESS_ERR_IO, "cannot hand the NCCL id to rank %d", j);
    return st;
}

/* The body of rank k's process; never returns. */
static void split_rank_main(split_run *r, int k, long applications, int (*pipes)[2], const char *db,
                            split_rank_result *res) {
    char dev[32];
    split_visible_device(k, dev, sizeof dev);
    setenv("CUDA_VISIBLE_DEVICES", dev, 1);
    for (int j = 1; j < r->plan.ranks; j++) {   /* keep only this rank's end of the id pipes */
        if (k != 0) close(pipes[j][1]);
        if (j != k) close(pipes[j][0]);
    }
    split_pipes share = {pipes, k};
    tess_context *ctx = NULL;
    tess_status st = tess_open_readonly(&ctx, db);
    r->ctx = ctx;
    r->me = k;
    r->share_id = split_share_id;
    r->share_user = &share;
    r->rep = &res->report;
    memset(&res->report, 0, sizeof res->report);
    if (!st) st = tess_split_execute(r, applications);
    if (st) tess_error_context(st, "rank %d (GPU %s)", k, dev);
    res->status = st;
    snprintf(res->message, sizeof res->message, "%s", st ? tess_errmsg() : "");
    tess_close(ctx);
    _exit(st ? 1 : 0);
}

/* The bytes of the time levels each buffer sends back (0: none). */
static size_t split_level_bytes(const split_run *r, int i) {
    const tess_buffer_info *b = &r->buf[i];
    bool level = b->rank == r->ndim && ((b->role == TESS_BUFFER_INPUT && b->advanced) || b->advances >= 0);
    return level ? (size_t)b->count * b->elem_bytes : 0;
}

tess_status tess_split_run_processes(split_run *r, long applications) {
    int ranks = r->plan.ranks;
    size_t results = (size_t)ranks * sizeof(split_rank_result), total = results;
    for (int i = 0; i < r->nbuf; i++) total += split_level_bytes(r, i);
    char *shared = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) return tess_error(TESS_ERR_NOMEM, "split run: %zu bytes of shared memory", total);
    split_rank_result *res = (split_rank_result *)(void *)shared;
    void *out[SPLIT_MAX_BUFFERS] = {0};
    for (size_t i = 0, off = results; i < (size_t)r->nbuf; off += split_level_bytes(r, (int)i), i++)
        if (split_level_bytes(r, (int)i)) out[i] = shared + off;
    r->out = out;
    int pipes[TESS_SPLIT_MAX_RANKS][2];
    pid_t pid[TESS_SPLIT_MAX_RANKS] = {0};
    tess_status st = TESS_OK;
    for (int j = 1; j < ranks && !st; j++)
        if (pipe(pipes[j]) != 0) st = tess_error(TESS_ERR_IO, "split run: pipe: %s", strerror(errno));
    const char *db = tess_db_path(r->ctx);
    fflush(NULL);
    for (int k = 0; k < ranks && !st; k++) {
        res[k].status = TESS_ERR_INTERNAL;
        snprintf(res[k].message, sizeof res[k].message, "rank %d ended without a word", k);
        if ((pid[k] = fork()) == 0) split_rank_main(r, k, applications, pipes, db, &res[k]);
        if (pid[k] < 0) st = tess_error(TESS_ERR_IO, "split run: fork: %s", strerror(errno));
    }
    for (int j = 1; j < ranks; j++) {
        close(pipes[j][0]);
        close(pipes[j][1]);
    }
    for (int k = 0; k < ranks && st; k++)   /* a rank missing: the others would wait for it */
        if (pid[k] > 0) kill(pid[k], SIGKILL);
    /* wait for every rank (only for ours: a caller's other children are not
     * reaped here); the first to fail stops the others */
    int failed = -1, alive = 0;
    for (int k = 0; k < ranks; k++) alive += pid[k] > 0;
    while (alive > 0) {
        bool reaped = false;
        for (int k = 0; k < ranks; k++) {
            int status = 0;
            if (pid[k] <= 0) continue;
            pid_t w = waitpid(pid[k], &status, WNOHANG);
            if (w == 0 || (w < 0 && errno == EINTR)) continue;
            pid[k] = 0;
            alive--;
            reaped = true;
            /* reaped elsewhere (SIGCHLD ignored): only its own word says how it ended */
            bool ok = w < 0 ? res[k].status == TESS_OK : WIFEXITED(status) && WEXITSTATUS(status) == 0;
            if (!ok && failed < 0) {
                failed = k;
                if (w > 0 && WIFSIGNALED(status))
                    snprintf(res[k].message, sizeof res[k].message, "rank %d died of signal %d", k, WTERMSIG(status));
                for (int j = 0; j < ranks; j++)
                    if (pid[j] > 0) kill(pid[j], SIGKILL);
            }
        }
        if (!reaped && alive > 0) usleep(2000);
    }
    if (!st && failed >= 0)
        st = tess_error(res[failed].status > 0 ? res[failed].status : TESS_ERR_RUNTIME, "%s", res[failed].message);
    if (!st) {
        for (int i = 0; i < r->nbuf; i++)
            if (out[i]) memcpy(r->fields[i], out[i], split_level_bytes(r, i));
        if (r->rep) {   /* rank 0's counts, the slowest rank's times */
            tess_split_report *rep = r->rep;
            rep->exchanges = res[0].report.exchanges;
            rep->kernels = res[0].report.kernels;
            for (int k = 0; k < ranks; k++) {
                rep->messages += res[k].report.messages;
                rep->halo_bytes += res[k].report.halo_bytes;
                if (res[k].report.seconds > rep->seconds) rep->seconds = res[k].report.seconds;
                if (res[k].report.wait_seconds > rep->wait_seconds) rep->wait_seconds = res[k].report.wait_seconds;
            }
        }
    }
    r->out = r->fields;
    munmap(shared, total);
    return st;
}
