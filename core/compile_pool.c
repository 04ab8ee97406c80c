/* compile_pool.c - forked compile workers fed through pipes. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "compile_pool.h"
#include "error.h"
#include "ipc.h"
#include "types.h"

typedef struct worker {
    pid_t pid;
    int to_worker, from_worker;   /* pipe ends held by the parent */
    int busy_tag;                 /* tag of the job in progress */
    bool busy;
} worker;

typedef struct job {
    tess_kernel_source src;       /* code owned by the queue */
    int tag;
} job;

struct tess_compile_pool {
    const tess_backend_ops *be;
    tess_device dev;
    worker *workers;
    int nworkers;
    job *queue;                   /* FIFO of jobs not yet sent to a worker */
    int qhead, qlen, qcap;
    int in_flight;
};

void tess_compiled_free(tess_compiled *c) {
    tess_blob_free(&c->binary);
    free(c->log);
    c->log = NULL;
}

/* The worker's loop: read a source, compile, answer; exit on EOF. */
static void worker_main(const tess_backend_ops *be, const tess_device *dev, int in, int out) {
    for (;;) {
        tess_kernel_source src;
        if (tess_ipc_read(in, &src, sizeof src)) _exit(0);
        void *code;
        size_t n;
        if (tess_ipc_read_block(in, &code, &n)) _exit(0);
        src.code = code;
        tess_blob bin = {0};
        char *log = NULL;
        double t0 = tess_now();
        tess_error_clear();
        int32_t st = be->compile(dev, &src, &bin, &log);
        double ms = 1e3 * (tess_now() - t0);
        if (st && !log) log = strdup(tess_errmsg());
        free(code);
        const char *log_text = log ? log : "";
        if (tess_ipc_write(out, &st, sizeof st) || tess_ipc_write(out, &ms, sizeof ms) ||
            tess_ipc_write_block(out, bin.data, st ? 0 : bin.size) ||
            tess_ipc_write_block(out, log_text, strlen(log_text)))
            _exit(1);
        tess_blob_free(&bin);
        free(log);
    }
}

static tess_status worker_start(tess_compile_pool *p, worker *w) {
    int req[2], resp[2];
    if (pipe(req) != 0) return tess_error(TESS_ERR_IO, "pipe: %s", strerror(errno));
    if (pipe(resp) != 0) {
        close(req[0]);
        close(req[1]);
        return tess_error(TESS_ERR_IO, "pipe: %s", strerror(errno));
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(req[0]), close(req[1]), close(resp[0]), close(resp[1]);
        return tess_error(TESS_ERR_IO, "cannot start a compile worker: %s", strerror(errno));
    }
    if (pid == 0) {
        close(req[1]);
        close(resp[0]);
        /* Earlier workers' pipe ends were inherited; close them so a parent's
         * exit is seen as EOF by every worker. */
        for (int i = 0; i < p->nworkers; i++)
            if (&p->workers[i] != w && p->workers[i].pid > 0) {
                close(p->workers[i].to_worker);
                close(p->workers[i].from_worker);
            }
        signal(SIGPIPE, SIG_DFL);
        worker_main(p->be, &p->dev, req[0], resp[1]);
        _exit(0);
    }
    close(req[0]);
    close(resp[1]);
    w->pid = pid;
    w->to_worker = req[1];
    w->from_worker = resp[0];
    w->busy = false;
    return TESS_OK;
}

static void worker_stop(worker *w) {
    if (w->pid <= 0) return;
    close(w->to_worker);
    close(w->from_worker);
    kill(w->pid, SIGKILL);
    waitpid(w->pid, NULL, 0);
    w->pid = 0;
    w->busy = false;
}

tess_status tess_compile_pool_create(const tess_backend_ops *be, const tess_device *dev,
                                     int workers, tess_compile_pool **out) {
    if (workers <= 0) workers = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (workers <= 0) workers = 1;
    tess_compile_pool *p = calloc(1, sizeof *p);
    if (!p) return tess_error(TESS_ERR_NOMEM, "compile pool");
    p->be = be;
    p->dev = *dev;
    p->workers = calloc((size_t)workers, sizeof *p->workers);
    if (!p->workers) {
        free(p);
        return tess_error(TESS_ERR_NOMEM, "compile pool");
    }
    /* A worker dying mid-write must not kill the tuner with SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    p->nworkers = workers;
    for (int i = 0; i < workers; i++) {
        tess_status st = worker_start(p, &p->workers[i]);
        if (st) {
            tess_compile_pool_destroy(p);
            return st;
        }
    }
    *out = p;
    return TESS_OK;
}

void tess_compile_pool_destroy(tess_compile_pool *p) {
    if (!p) return;
    for (int i = 0; i < p->nworkers; i++) worker_stop(&p->workers[i]);
    for (int i = 0; i < p->qlen; i++) free(p->queue[(p->qhead + i) % p->qcap].src.code);
    free(p->queue);
    free(p->workers);
    free(p);
}

int tess_compile_pool_workers(const tess_compile_pool *p) { return p->nworkers; }

int tess_compile_pool_pending(const tess_compile_pool *p) { return p->qlen + p->in_flight; }

tess_status tess_compile_pool_submit(tess_compile_pool *p, const tess_kernel_source *src, int tag) {
    if (p->qlen == p->qcap) {
        int ncap = p->qcap ? 2 * p->qcap : 64;
        job *nq = malloc((size_t)ncap * sizeof *nq);
        if (!nq) return tess_error(TESS_ERR_NOMEM, "compile queue");
        for (int i = 0; i < p->qlen; i++) nq[i] = p->queue[(p->qhead + i) % p->qcap];
        free(p->queue);
        p->queue = nq;
        p->qhead = 0;
        p->qcap = ncap;
    }
    job *j = &p->queue[(p->qhead + p->qlen) % p->qcap];
    j->src = *src;
    j->src.code = strdup(src->code ? src->code : "");
    if (!j->src.code) return tess_error(TESS_ERR_NOMEM, "compile queue");
    j->tag = tag;
    p->qlen++;
    return TESS_OK;
}

/* Hands queued jobs to idle workers. A worker that cannot take its job is
 * restarted and the job stays queued. */
static tess_status dispatch(tess_compile_pool *p) {
    for (int i = 0; i < p->nworkers && p->qlen > 0; i++) {
        worker *w = &p->workers[i];
        if (w->busy) continue;
        job *j = &p->queue[p->qhead];
        if (tess_ipc_write(w->to_worker, &j->src, sizeof j->src) ||
            tess_ipc_write_block(w->to_worker, j->src.code, strlen(j->src.code))) {
            worker_stop(w);
            tess_status st = worker_start(p, w);
            if (st) return st;
            i--;
            continue;
        }
        free(j->src.code);
        w->busy = true;
        w->busy_tag = j->tag;
        p->qhead = (p->qhead + 1) % p->qcap;
        p->qlen--;
        p->in_flight++;
    }
    return TESS_OK;
}

static tess_status collect(tess_compile_pool *p, worker *w, tess_compiled *out) {
    memset(out, 0, sizeof *out);
    out->tag = w->busy_tag;
    w->busy = false;
    p->in_flight--;
    int32_t st;
    void *bin = NULL, *log = NULL;
    size_t nbin = 0, nlog = 0;
    if (tess_ipc_read(w->from_worker, &st, sizeof st) ||
        tess_ipc_read(w->from_worker, &out->compile_ms, sizeof out->compile_ms) ||
        tess_ipc_read_block(w->from_worker, &bin, &nbin) ||
        tess_ipc_read_block(w->from_worker, &log, &nlog)) {
        free(bin);
        int wstatus = 0;
        char why[128] = "closed its pipe";
        close(w->to_worker);
        close(w->from_worker);
        if (waitpid(w->pid, &wstatus, 0) == w->pid) tess_describe_exit(wstatus, why, sizeof why);
        w->pid = 0;
        out->status = TESS_ERR_COMPILE;
        char msg[256];
        snprintf(msg, sizeof msg, "the compiler process died (%s)", why);
        out->log = strdup(msg);
        return worker_start(p, w);
    }
    out->status = (tess_status)st;
    out->binary.data = bin;
    out->binary.size = nbin;
    out->log = log;
    if (st) {
        free(bin);
        out->binary.data = NULL;
        out->binary.size = 0;
    }
    return TESS_OK;
}

tess_status tess_compile_pool_next(tess_compile_pool *p, tess_compiled *out) {
    tess_status st = dispatch(p);
    if (st) return st;
    if (p->in_flight == 0) return tess_error(TESS_ERR_NOTFOUND, "no compile job pending");
    struct pollfd fds[p->nworkers];
    for (;;) {
        int n = 0;
        for (int i = 0; i < p->nworkers; i++)
            fds[i] = (struct pollfd){.fd = p->workers[i].busy ? p->workers[i].from_worker : -1,
                                     .events = POLLIN};
        n = poll(fds, (nfds_t)p->nworkers, -1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return tess_error(TESS_ERR_IO, "poll: %s", strerror(errno));
        for (int i = 0; i < p->nworkers; i++)
            if (p->workers[i].busy && fds[i].revents) {
                st = collect(p, &p->workers[i], out);
                if (!st) st = dispatch(p);
                return st;
            }
    }
}
