/* runner.c - isolated execution of candidates in a forked child process. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "error.h"
#include "ipc.h"
#include "problem.h"
#include "runner.h"
#include "timing.h"

#define MAX_SETS 8

struct tess_runner {
    const tess_op *op;
    tess_task task;
    const tess_backend_ops *be;
    tess_device dev;
    tess_runner_options opt;
    tess_problem *problem;          /* inputs and reference outputs */
    int nsets;                      /* buffer sets rotated while timing */
    tess_runner_profile profile;
    pid_t child;
    int to_child, from_child;
};

/* What the parent sends for each candidate, before the binary. */
typedef struct job {
    tess_kernel_source src;         /* code not sent */
    double cutoff_ms;               /* timing cutoff; 0: none */
} job;

/* What the child answers for each candidate. */
typedef struct reply {
    int32_t fatal;                  /* the runner cannot go on (message in result) */
    int32_t child_exits;            /* the child exits after this reply (context is unusable) */
    double load_s, check_s, time_s; /* where the child spent its time */
    int32_t cut;                    /* timing stopped at the cutoff */
    tess_result result;
} reply;

tess_status tess_runner_create(const tess_op *op, const tess_task *t, const tess_backend_ops *be,
                               const tess_device *dev, const tess_runner_options *o,
                               tess_runner **out) {
    tess_runner *r = calloc(1, sizeof *r);
    if (!r) return tess_error(TESS_ERR_NOMEM, "runner");
    r->op = op;
    r->task = *t;
    r->be = be;
    r->dev = *dev;
    r->opt = *o;
    tess_status st = tess_problem_create(op, t, o->seed, &r->problem);
    if (st) {
        free(r);
        return st;
    }
    /* Rotate through copies when the buffers would stay warm in the cache. */
    size_t ws = r->problem->working_set;
    r->nsets = 1;
    if (dev->l2_bytes > 0 && ws > 0 && ws < 2 * (size_t)dev->l2_bytes) {
        size_t sets = (3 * (size_t)dev->l2_bytes) / ws + 1;
        r->nsets = sets > MAX_SETS ? MAX_SETS : (int)sets;
    }
    *out = r;
    return TESS_OK;
}

static void stop_child(tess_runner *r) {
    if (r->child <= 0) return;
    close(r->to_child);
    close(r->from_child);
    kill(r->child, SIGKILL);
    waitpid(r->child, NULL, 0);
    r->child = 0;
}

void tess_runner_destroy(tess_runner *r) {
    if (!r) return;
    stop_child(r);
    tess_problem_destroy(r->problem);
    free(r);
}

/* ---- the child side -------------------------------------------------------- */

typedef struct child_state {
    tess_runner *r;
    void *ctx;
    void *dbuf[MAX_SETS][TESS_MAX_BUFFERS];
    void *ref[TESS_MAX_BUFFERS];    /* reference outputs in device memory, when the backend compares */
    void *check;                    /* host copy of an output being verified */
} child_state;

static tess_status child_setup(child_state *cs) {
    tess_runner *r = cs->r;
    tess_status st = r->be->open(&r->dev, &cs->ctx);
    if (st) return tess_error_context(st, "opening the %s backend", r->be->name);
    size_t largest_out = 0;
    for (int b = 0; b < r->problem->nbuf; b++)
        if (r->problem->spec[b].role == TESS_BUF_OUT && tess_buffer_bytes(&r->problem->spec[b]) > largest_out)
            largest_out = tess_buffer_bytes(&r->problem->spec[b]);
    for (int s = 0; s < r->nsets; s++)
        for (int b = 0; b < r->problem->nbuf; b++) {
            size_t bytes = tess_buffer_bytes(&r->problem->spec[b]);
            st = r->be->alloc(cs->ctx, bytes ? bytes : 1, &cs->dbuf[s][b]);
            if (st) return tess_error_context(st, "allocating buffer '%s'", r->problem->spec[b].name);
            if (r->problem->spec[b].role == TESS_BUF_IN) {
                st = r->be->upload(cs->ctx, cs->dbuf[s][b], r->problem->host[b], bytes);
                if (st) return st;
            }
        }
    for (int b = 0; b < r->problem->nbuf && r->be->compare; b++) {
        if (r->problem->spec[b].role != TESS_BUF_OUT) continue;
        size_t bytes = tess_buffer_bytes(&r->problem->spec[b]);
        st = r->be->alloc(cs->ctx, bytes ? bytes : 1, &cs->ref[b]);
        if (!st) st = r->be->upload(cs->ctx, cs->ref[b], r->problem->host[b], bytes);
        if (st) return tess_error_context(st, "preparing the reference of '%s'", r->problem->spec[b].name);
    }
    cs->check = malloc(largest_out ? largest_out : 1);
    if (!cs->check) return tess_error(TESS_ERR_NOMEM, "verification buffer");
    return TESS_OK;
}

/* Checks output b against the reference on the device, when the backend
 * can. 1: correct; 0: the host must look (a mismatch, whose message the
 * host check writes, or a dtype the backend does not compare); -1: the
 * backend failed. */
static int verify_on_device(child_state *cs, int b) {
    tess_runner *r = cs->r;
    if (!cs->ref[b]) return 0;
    const tess_buffer_spec *spec = &r->problem->spec[b];
    int64_t k[4];
    tess_status st = r->be->compare(cs->ctx, cs->dbuf[0][b], cs->ref[b], spec->dtype, spec->count,
                                    r->problem->tolerance, r->problem->scale, k);
    if (st == TESS_ERR_ARG) {   /* not comparable there: the host checks from now on */
        r->be->release(cs->ctx, cs->ref[b]);
        cs->ref[b] = NULL;
        return 0;
    }
    if (st) return -1;
    return k[0] == 0 && k[2] == 0;
}

/* Runs, verifies and times one candidate. Returns false when the backend
 * context can no longer be trusted (the child must exit). */
static bool child_measure(child_state *cs, const tess_blob *bin, const tess_kernel_source *src,
                          double cutoff_ms, tess_result *res, reply *rep) {
    tess_runner *r = cs->r;
    void *module = NULL;
    tess_error_clear();
    double t0 = tess_now();
    tess_status st = r->be->load(cs->ctx, bin, src, &module, &res->metrics);
    double t1 = tess_now();
    rep->load_s = t1 - t0;
    if (st) {
        tess_result_fail(res, TESS_RESULT_RUNTIME_ERROR, "load: %s", tess_errmsg());
        return st != TESS_ERR_RUNTIME;
    }
    bool healthy = true;
    for (int b = 0; b < r->problem->nbuf && !st; b++)
        if (r->problem->spec[b].role == TESS_BUF_OUT)
            st = r->be->poison(cs->ctx, cs->dbuf[0][b], tess_buffer_bytes(&r->problem->spec[b]));
    if (!st) st = r->be->run(cs->ctx, module, cs->dbuf[0], r->problem->nbuf);
    if (st) {
        tess_result_fail(res, TESS_RESULT_RUNTIME_ERROR, "%s", tess_errmsg());
        healthy = false;
        goto done;
    }
    for (int b = 0; b < r->problem->nbuf; b++) {
        if (r->problem->spec[b].role != TESS_BUF_OUT) continue;
        int on_device = verify_on_device(cs, b);
        if (on_device == 1) continue;
        if (on_device < 0) {
            tess_result_fail(res, TESS_RESULT_RUNTIME_ERROR, "verification: %s", tess_errmsg());
            healthy = false;
            goto done;
        }
        st = r->be->download(cs->ctx, cs->check, cs->dbuf[0][b], tess_buffer_bytes(&r->problem->spec[b]));
        if (st) {
            tess_result_fail(res, TESS_RESULT_RUNTIME_ERROR, "download: %s", tess_errmsg());
            healthy = false;
            goto done;
        }
        if (!tess_problem_verify(r->problem, b, cs->check, res)) goto done;
    }
    double t2 = tess_now();
    rep->check_s = t2 - t1;
    void *const *sets[MAX_SETS];
    for (int s = 0; s < r->nsets; s++) sets[s] = cs->dbuf[s];
    tess_timing_options topt = {.min_time_s = r->opt.min_time_s,
                                .min_reps = r->opt.min_reps,
                                .max_reps = r->opt.max_reps,
                                .cutoff_ms = cutoff_ms};
    tess_timing timing;
    st = tess_time_kernel(r->be, cs->ctx, module, sets, r->nsets, r->problem->nbuf,
                          &topt, &timing, &res->metrics);
    rep->time_s = tess_now() - t2;
    if (st) {
        tess_result_fail(res, TESS_RESULT_RUNTIME_ERROR, "timing: %s", tess_errmsg());
        healthy = false;
        goto done;
    }
    res->status = TESS_RESULT_OK;
    res->time_ms = timing.median_ms;
    res->min_ms = timing.min_ms;
    res->max_ms = timing.max_ms;
    res->spread = timing.spread;
    res->reps = timing.reps;
    rep->cut = timing.cut;
done:
    r->be->unload(cs->ctx, module);
    return healthy;
}

static void child_main(tess_runner *r, int in, int out) {
    child_state cs = {.r = r};
    tess_status setup = child_setup(&cs);
    for (;;) {
        job j;
        void *data;
        size_t size;
        if (tess_ipc_read(in, &j, sizeof j) || tess_ipc_read_block(in, &data, &size)) _exit(0);
        j.src.code = NULL;
        tess_blob bin = {data, size};
        reply rep = {0};
        tess_result_init(&rep.result, NULL);
        bool healthy = true;
        if (setup) {
            rep.fatal = 1;
            snprintf(rep.result.message, sizeof rep.result.message, "%s", tess_errmsg());
        } else {
            healthy = child_measure(&cs, &bin, &j.src, j.cutoff_ms, &rep.result, &rep);
        }
        free(data);
        rep.child_exits = rep.fatal || !healthy;
        if (tess_ipc_write(out, &rep, sizeof rep) || rep.child_exits) _exit(0);
    }
}

static bool in_process_kernels;

void tess_note_in_process_kernels(void) { in_process_kernels = true; }

static tess_status refuse_if_tainted(void) {
    if (!in_process_kernels) return TESS_OK;
    return tess_error(TESS_ERR_UNAVAILABLE,
                      "this process already runs kernels itself, and processes forked from it "
                      "cannot run kernels safely: tune before the first tess_kernel_get or "
                      "tess_dispatch, or in a separate process (tessera tune)");
}

static tess_status start_child(tess_runner *r) {
    tess_status st = refuse_if_tainted();
    if (st) return st;
    int req[2], resp[2];
    if (pipe(req) != 0) return tess_error(TESS_ERR_IO, "pipe: %s", strerror(errno));
    if (pipe(resp) != 0) {
        close(req[0]), close(req[1]);
        return tess_error(TESS_ERR_IO, "pipe: %s", strerror(errno));
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(req[0]), close(req[1]), close(resp[0]), close(resp[1]);
        return tess_error(TESS_ERR_IO, "cannot start the runner process: %s", strerror(errno));
    }
    if (pid == 0) {
        close(req[1]);
        close(resp[0]);
        signal(SIGPIPE, SIG_DFL);
        /* A Ctrl-C at the terminal reaches the whole group: the tuner decides
         * what it means (it may stop after this candidate), so the runner
         * neither dies of it, which would record the kernel it measures as
         * a crash, nor runs a handler inherited from the tuner. */
        signal(SIGINT, SIG_IGN);
        child_main(r, req[0], resp[1]);
        _exit(0);
    }
    close(req[0]);
    close(resp[1]);
    r->child = pid;
    r->to_child = req[1];
    r->from_child = resp[0];
    return TESS_OK;
}

static tess_status measure(tess_runner *r, const tess_blob *bin, const tess_kernel_source *src,
                           double timeout_s, double cutoff_ms, tess_result *res) {
    if (r->child <= 0) {
        tess_status st = start_child(r);
        if (st) return st;
        r->profile.child_starts++;
    }
    signal(SIGPIPE, SIG_IGN);
    job header = {.src = *src, .cutoff_ms = cutoff_ms};
    header.src.code = NULL;
    if (tess_ipc_write(r->to_child, &header, sizeof header) ||
        tess_ipc_write_block(r->to_child, bin->data, bin->size)) {
        stop_child(r);
        tess_result_fail(res, TESS_RESULT_RUNTIME_ERROR, "the runner process did not accept the job");
        return TESS_OK;
    }
    if (!tess_ipc_wait_readable(r->from_child, timeout_s)) {
        stop_child(r);
        tess_result_fail(res, TESS_RESULT_TIMEOUT, "no result within %.1f s; the kernel was killed",
                         timeout_s);
        return TESS_OK;
    }
    reply rep;
    if (tess_ipc_read(r->from_child, &rep, sizeof rep)) {
        int wstatus = 0;
        char why[128] = "closed its pipe";
        close(r->to_child);
        close(r->from_child);
        if (waitpid(r->child, &wstatus, 0) == r->child) tess_describe_exit(wstatus, why, sizeof why);
        r->child = 0;
        tess_result_fail(res, TESS_RESULT_RUNTIME_ERROR, "the kernel crashed the runner process (%s)", why);
        return TESS_OK;
    }
    if (rep.child_exits) {
        close(r->to_child);
        close(r->from_child);
        waitpid(r->child, NULL, 0);
        r->child = 0;
    }
    if (rep.fatal) return tess_error(TESS_ERR_RUNTIME, "%s", rep.result.message);
    r->profile.answered++;
    r->profile.load_s += rep.load_s;
    r->profile.check_s += rep.check_s;
    r->profile.time_s += rep.time_s;
    r->profile.cut += rep.cut;
    tess_config keep = res->config;
    double compile_ms = res->compile_ms;
    *res = rep.result;
    res->config = keep;
    res->compile_ms = compile_ms;
    return TESS_OK;
}

tess_status tess_runner_measure(tess_runner *r, const tess_blob *bin, const tess_kernel_source *src,
                                double timeout_s, double cutoff_ms, tess_result *res) {
    double t0 = tess_now();
    tess_status st = measure(r, bin, src, timeout_s, cutoff_ms, res);
    r->profile.candidates++;
    r->profile.wall_s += tess_now() - t0;
    return st;
}

void tess_runner_profile_get(const tess_runner *r, tess_runner_profile *out) { *out = r->profile; }

tess_status tess_backend_calibrate_isolated(const tess_backend_ops *be, const tess_device *dev,
                                            double *gbps, double *gflops) {
    tess_status tainted = refuse_if_tainted();
    if (tainted) return tainted;
    int fds[2];
    if (pipe(fds) != 0) return tess_error(TESS_ERR_IO, "pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]), close(fds[1]);
        return tess_error(TESS_ERR_IO, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        struct {
            int32_t st;
            double gbps, gflops;
            char msg[512];
        } ans = {0};
        void *ctx = NULL;
        ans.st = be->open(dev, &ctx);
        if (!ans.st) ans.st = be->calibrate(ctx, &ans.gbps, &ans.gflops);
        snprintf(ans.msg, sizeof ans.msg, "%s", tess_errmsg());
        if (ctx) be->close(ctx);
        tess_ipc_write(fds[1], &ans, sizeof ans);
        _exit(0);
    }
    close(fds[1]);
    struct {
        int32_t st;
        double gbps, gflops;
        char msg[512];
    } ans;
    tess_status st = tess_ipc_read(fds[0], &ans, sizeof ans);
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    close(fds[0]);
    if (st) {
        char why[128];
        tess_describe_exit(wstatus, why, sizeof why);
        return tess_error(TESS_ERR_RUNTIME, "calibration process failed (%s)", why);
    }
    if (ans.st) return tess_error((tess_status)ans.st, "calibration: %s", ans.msg);
    *gbps = ans.gbps;
    *gflops = ans.gflops;
    return TESS_OK;
}
