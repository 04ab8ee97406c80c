/* compile_pool.c - forked compile workers fed through pipes. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <unistd.h>
#include "compile_pool.h"
#include "error.h"
#include "ipc.h"
#include "types.h"

typedef struct worker {
    pid_t pid;
    int to_worker, from_worker;   /* pipe ends held by the parent */
    int tags[TESS_COMPILE_BATCH_MAX];   /* of the jobs in progress */
    int njobs;                    /* 0: idle */
    double sent_at;               /* when they were sent (tess_now) */
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
    int in_flight;                /* jobs sent to workers, not yet answered */
    int max_batch;                /* jobs per worker at most */
    double timeout_s;             /* per job; 0: none */
    tess_compiled *ready;         /* answered, not yet collected */
    int nready, ready_cap;
};

void tess_compiled_free(tess_compiled *c) {
    tess_blob_free(&c->binary);
    free(c->log);
    c->log = NULL;
}

void tess_compiled_rename(const tess_compiled *c, tess_kernel_source *src) {
    if (!c->symbol_suffix[0]) return;
    for (int l = 0; l < src->nlaunches; l++) {
        size_t len = strlen(src->launch[l].entry);
        snprintf(src->launch[l].entry + len, sizeof src->launch[l].entry - len, "%s", c->symbol_suffix);
    }
}

/* Compiles a worker's jobs: together when the backend can, else one by one. */
static void compile_jobs(const tess_backend_ops *be, const tess_device *dev, const tess_kernel_source *src,
                         int n, tess_compile_result *out) {
    tess_error_clear();
    if (n > 1 && be->compile_batch) {
        be->compile_batch(dev, src, n, out);
        return;
    }
    for (int i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].status = be->compile(dev, &src[i], &out[i].binary, &out[i].log);
        if (out[i].status && !out[i].log) out[i].log = strdup(tess_errmsg());
        tess_error_clear();
    }
}

/* The worker's loop: read a count and that many sources, compile, answer
 * each in order; exit on EOF. */
static void worker_main(const tess_backend_ops *be, const tess_device *dev, int in, int out) {
    for (;;) {
        int32_t n;
        tess_kernel_source src[TESS_COMPILE_BATCH_MAX];
        tess_compile_result res[TESS_COMPILE_BATCH_MAX];
        if (tess_ipc_read(in, &n, sizeof n) || n < 1 || n > TESS_COMPILE_BATCH_MAX) _exit(0);
        for (int i = 0; i < n; i++) {
            void *code;
            size_t len;
            if (tess_ipc_read(in, &src[i], sizeof src[i]) || tess_ipc_read_block(in, &code, &len)) _exit(0);
            src[i].code = code;
        }
        double t0 = tess_now();
        compile_jobs(be, dev, src, n, res);
        double ms = 1e3 * (tess_now() - t0) / n;
        for (int i = 0; i < n; i++) {
            int32_t st = res[i].status;
            const char *log_text = res[i].log ? res[i].log : "";
            if (tess_ipc_write(out, &st, sizeof st) || tess_ipc_write(out, &ms, sizeof ms) ||
                tess_ipc_write(out, res[i].symbol_suffix, sizeof res[i].symbol_suffix) ||
                tess_ipc_write_block(out, res[i].binary.data, st ? 0 : res[i].binary.size) ||
                tess_ipc_write_block(out, log_text, strlen(log_text)))
                _exit(1);
            tess_blob_free(&res[i].binary);
            free(res[i].log);
            free(src[i].code);
        }
    }
}

/* A worker's exit with everything it started (async-signal-safe); only
 * ever the worker's own group. */
static void stop_group(int sig) {
    (void)sig;
    if (getpgrp() == getpid()) kill(0, SIGKILL);
    _exit(1);
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
    pid_t parent = getpid(), pid = fork();
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
        /* Its own group, so that stopping it also stops the compilers it
         * runs; out of the terminal's group, it learns of the parent's end
         * (Ctrl-C included) from the death signal and takes its group along. */
        if (setpgid(0, 0) == 0) {
            signal(SIGTERM, stop_group);
#ifdef __linux__
            prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
            if (getppid() != parent) stop_group(SIGTERM);   /* the parent ended before the line above */
        }
        worker_main(p->be, &p->dev, req[0], resp[1]);
        _exit(0);
    }
    setpgid(pid, pid);   /* as the child does, whichever runs first */
    close(req[0]);
    close(resp[1]);
    w->pid = pid;
    w->to_worker = req[1];
    w->from_worker = resp[0];
    w->njobs = 0;
    return TESS_OK;
}

/* Stops w with its process group (a worker that died already keeps its exit
 * status); true when that status was read into *wstatus (may be NULL). */
static bool worker_stop(worker *w, int *wstatus) {
    if (w->pid <= 0) return false;
    close(w->to_worker);
    close(w->from_worker);
    kill(-w->pid, SIGKILL);   /* the parent made the group before it returned the worker */
    int status = 0;
    bool waited = waitpid(w->pid, &status, 0) == w->pid;
    if (waited && wstatus) *wstatus = status;
    w->pid = 0;
    w->to_worker = w->from_worker = -1;
    w->njobs = 0;
    return waited;
}

tess_status tess_compile_pool_create(const tess_backend_ops *be, const tess_device *dev,
                                     int workers, tess_compile_pool **out) {
    if (workers <= 0) workers = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (workers <= 0) workers = 1;
    tess_compile_pool *p = calloc(1, sizeof *p);
    if (!p) return tess_error(TESS_ERR_NOMEM, "compile pool");
    p->be = be;
    p->dev = *dev;
    p->max_batch = 1;   /* batches measured slower on the whole: see README.md */
    p->timeout_s = TESS_COMPILE_TIMEOUT_S;
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
    for (int i = 0; i < p->nworkers; i++) worker_stop(&p->workers[i], NULL);
    for (int i = 0; i < p->qlen; i++) free(p->queue[(p->qhead + i) % p->qcap].src.code);
    for (int i = 0; i < p->nready; i++) tess_compiled_free(&p->ready[i]);
    free(p->ready);
    free(p->queue);
    free(p->workers);
    free(p);
}

int tess_compile_pool_workers(const tess_compile_pool *p) { return p->nworkers; }

void tess_compile_pool_set_batch(tess_compile_pool *p, int max_jobs) {
    if (max_jobs > TESS_COMPILE_BATCH_MAX) max_jobs = TESS_COMPILE_BATCH_MAX;
    p->max_batch = p->be->compile_batch && max_jobs > 1 ? max_jobs : 1;
}

void tess_compile_pool_set_timeout(tess_compile_pool *p, double seconds) { p->timeout_s = seconds > 0 ? seconds : 0; }

int tess_compile_pool_pending(const tess_compile_pool *p) { return p->qlen + p->in_flight + p->nready; }

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

/* Sends the first n queued jobs to w. */
static bool send_jobs(tess_compile_pool *p, worker *w, int n) {
    int32_t count = n;
    if (tess_ipc_write(w->to_worker, &count, sizeof count)) return false;
    for (int k = 0; k < n; k++) {
        const job *j = &p->queue[(p->qhead + k) % p->qcap];
        if (tess_ipc_write(w->to_worker, &j->src, sizeof j->src) ||
            tess_ipc_write_block(w->to_worker, j->src.code, strlen(j->src.code)))
            return false;
    }
    return true;
}

/* Hands queued jobs to idle workers: one each while there are enough idle
 * workers, a share of the queue each (a batch) when there are not. A worker
 * that cannot take its jobs is restarted and the jobs stay queued. */
static tess_status dispatch(tess_compile_pool *p) {
    int idle = 0;
    for (int i = 0; i < p->nworkers; i++) idle += p->workers[i].njobs == 0;
    for (int i = 0; i < p->nworkers && p->qlen > 0; i++) {
        worker *w = &p->workers[i];
        if (w->njobs) continue;
        if (w->pid <= 0) {   /* a restart failed earlier: try again */
            tess_status st = worker_start(p, w);
            if (st) return st;
        }
        int n = (p->qlen + idle - 1) / idle;
        if (n > p->max_batch) n = p->max_batch;
        if (!send_jobs(p, w, n)) {
            worker_stop(w, NULL);
            tess_status st = worker_start(p, w);
            if (st) return st;
            i--;
            continue;
        }
        for (int k = 0; k < n; k++) {
            job *j = &p->queue[p->qhead];
            free(j->src.code);
            w->tags[k] = j->tag;
            p->qhead = (p->qhead + 1) % p->qcap;
            p->qlen--;
        }
        w->njobs = n;
        w->sent_at = tess_now();
        p->in_flight += n;
        idle--;
    }
    return TESS_OK;
}

/* Reads one answer of w into out; false when the worker is gone. */
static bool read_answer(worker *w, tess_compiled *out) {
    int32_t st;
    void *bin = NULL, *log = NULL;
    size_t nbin = 0, nlog = 0;
    if (tess_ipc_read(w->from_worker, &st, sizeof st) ||
        tess_ipc_read(w->from_worker, &out->compile_ms, sizeof out->compile_ms) ||
        tess_ipc_read(w->from_worker, out->symbol_suffix, sizeof out->symbol_suffix) ||
        tess_ipc_read_block(w->from_worker, &bin, &nbin) || tess_ipc_read_block(w->from_worker, &log, &nlog)) {
        free(bin);
        return false;
    }
    out->symbol_suffix[sizeof out->symbol_suffix - 1] = '\0';
    out->status = (tess_status)st;
    out->log = log;
    if (st) {
        free(bin);
    } else {
        out->binary.data = bin;
        out->binary.size = nbin;
    }
    return true;
}

/* Room in the ready list for the answers of w. */
static tess_status reserve_ready(tess_compile_pool *p, const worker *w) {
    if (p->nready + w->njobs <= p->ready_cap) return TESS_OK;
    int ncap = p->ready_cap ? 2 * p->ready_cap : 64;
    while (ncap < p->nready + w->njobs) ncap *= 2;
    tess_compiled *grown = realloc(p->ready, (size_t)ncap * sizeof *grown);
    if (!grown) return tess_error(TESS_ERR_NOMEM, "compile results");
    p->ready = grown;
    p->ready_cap = ncap;
    return TESS_OK;
}

/* Moves every answer of w to the ready list; the jobs of a worker that died
 * become compile errors, and the worker is replaced. */
static tess_status collect(tess_compile_pool *p, worker *w) {
    tess_status st = reserve_ready(p, w);
    if (st) return st;
    bool alive = true;
    char why[128] = "closed its pipe";
    int njobs = w->njobs;
    for (int k = 0; k < njobs; k++) {
        tess_compiled *out = &p->ready[p->nready++];
        memset(out, 0, sizeof *out);
        out->tag = w->tags[k];
        if (alive && read_answer(w, out)) continue;
        if (alive) {
            int wstatus = 0;
            if (worker_stop(w, &wstatus)) tess_describe_exit(wstatus, why, sizeof why);
            alive = false;
        }
        char msg[256];
        snprintf(msg, sizeof msg, "the compiler process died (%s)", why);
        out->status = TESS_ERR_COMPILE;
        out->log = strdup(msg);
    }
    p->in_flight -= njobs;
    w->njobs = 0;
    return alive ? TESS_OK : worker_start(p, w);
}

/* Stops a worker whose jobs ran past the timeout: they become compile
 * errors that say so, and the worker is replaced. */
static tess_status expire(tess_compile_pool *p, worker *w) {
    tess_status st = reserve_ready(p, w);
    if (st) return st;
    double ms = 1e3 * (tess_now() - w->sent_at) / w->njobs;
    for (int k = 0; k < w->njobs; k++) {
        tess_compiled *out = &p->ready[p->nready++];
        memset(out, 0, sizeof *out);
        out->tag = w->tags[k];
        out->status = TESS_ERR_COMPILE;
        out->compile_ms = ms;
        char msg[160];
        snprintf(msg, sizeof msg, "the compiler ran past %g s and was stopped", p->timeout_s * w->njobs);
        out->log = strdup(msg);
    }
    p->in_flight -= w->njobs;
    worker_stop(w, NULL);
    return worker_start(p, w);
}

/* Milliseconds until the first busy worker's deadline (a batch gets the
 * timeout per job), at least 0; -1 without a timeout. */
static int next_deadline_ms(const tess_compile_pool *p) {
    if (p->timeout_s <= 0) return -1;
    double first = INFINITY, now = tess_now();
    for (int i = 0; i < p->nworkers; i++) {
        const worker *w = &p->workers[i];
        double left = w->sent_at + p->timeout_s * w->njobs - now;
        if (w->njobs && left < first) first = left;
    }
    if (isinf(first)) return -1;
    double ms = ceil(1e3 * first);
    return ms <= 0 ? 0 : ms >= INT_MAX ? INT_MAX : (int)ms;
}

/* Hands the oldest ready answer to the caller. */
static void pop_ready(tess_compile_pool *p, tess_compiled *out) {
    *out = p->ready[0];
    p->nready--;
    memmove(p->ready, p->ready + 1, (size_t)p->nready * sizeof *p->ready);
}

tess_status tess_compile_pool_next(tess_compile_pool *p, tess_compiled *out) {
    tess_status st = dispatch(p);
    if (st) return st;
    if (p->nready > 0) {
        pop_ready(p, out);
        return TESS_OK;
    }
    if (p->in_flight == 0) return tess_error(TESS_ERR_NOTFOUND, "no compile job pending");
    struct pollfd fds[p->nworkers];
    for (;;) {
        for (int i = 0; i < p->nworkers; i++)
            fds[i] = (struct pollfd){.fd = p->workers[i].njobs ? p->workers[i].from_worker : -1,
                                     .events = POLLIN};
        int n = poll(fds, (nfds_t)p->nworkers, next_deadline_ms(p));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return tess_error(TESS_ERR_IO, "poll: %s", strerror(errno));
        /* Deadlines first, even while other workers keep answering. */
        double now = tess_now();
        for (int i = 0; i < p->nworkers && p->timeout_s > 0; i++) {
            worker *w = &p->workers[i];
            if (w->njobs && now >= w->sent_at + p->timeout_s * w->njobs) {
                st = expire(p, w);
                fds[i].revents = 0;
                if (st) return st;
            }
        }
        for (int i = 0; i < p->nworkers; i++)
            if (p->workers[i].njobs && fds[i].revents) {
                st = collect(p, &p->workers[i]);
                if (st) return st;
            }
        st = dispatch(p);
        if (st) return st;
        if (p->nready > 0) {
            pop_ready(p, out);
            return TESS_OK;
        }
    }
}
