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
    tess_problem *second;           /* the same task on inputs of another seed */
    tess_problem *typical;          /* on typical inputs, where the operator has them (else NULL) */
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
    if (!st) st = tess_problem_create(op, t, o->seed + 0x9e3779b9u, &r->second);
    if (!st && op->fill_typical) st = tess_problem_create_typical(op, t, o->seed + 0x7f4a7c15u, &r->typical);
    if (st) {
        tess_problem_destroy(r->problem);
        tess_problem_destroy(r->second);
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
    tess_problem_destroy(r->second);
    tess_problem_destroy(r->typical);
    free(r);
}

/* ---- the child side -------------------------------------------------------- */

/* One instance's buffers in the backend's memory: what a kernel runs on
 * and what its outputs are compared with. */
typedef struct device_instance {
    const tess_problem *p;
    void **buf;                     /* one per task buffer, inputs uploaded */
    void **ref;                     /* reference outputs, when the backend compares (else NULLs) */
} device_instance;

typedef struct child_state {
    tess_runner *r;
    void *ctx;
    int nbuf;
    device_instance first;          /* the runner's problem; first.buf is timing set 0 */
    device_instance again[2];       /* the second seed's and the typical inputs' (p NULL: none) */
    void **dbuf[MAX_SETS];          /* timing sets: [0] is first.buf, the others copies of it */
    void *check;                    /* host copy of an output being verified */
} child_state;

/* Allocates a set of buffers and uploads p's inputs into them. */
static tess_status alloc_set(child_state *cs, const tess_problem *p, void ***out) {
    if (!(*out = calloc((size_t)cs->nbuf, sizeof **out))) return tess_error(TESS_ERR_NOMEM, "device buffer table");
    for (int b = 0; b < cs->nbuf; b++) {
        const tess_buffer_spec *spec = tess_problem_spec(p, b);
        size_t bytes = tess_buffer_bytes(spec);
        tess_status st = cs->r->be->alloc(cs->ctx, bytes ? bytes : 1, &(*out)[b]);
        if (st) return tess_error_context(st, "allocating buffer '%s'", spec->name);
    }
    return tess_problem_upload(p, cs->r->be, cs->ctx, *out);
}

static tess_status instance_setup(child_state *cs, device_instance *d, const tess_problem *p) {
    tess_runner *r = cs->r;
    d->p = p;
    tess_status st = alloc_set(cs, p, &d->buf);
    if (st) return st;
    if (!(d->ref = calloc((size_t)cs->nbuf, sizeof *d->ref))) return tess_error(TESS_ERR_NOMEM, "device buffer table");
    for (int b = 0; b < cs->nbuf && r->be->compare && !r->op->verify; b++) {
        const tess_buffer_spec *spec = tess_problem_spec(p, b);
        if (!tess_buffer_is_output(spec)) continue;
        size_t bytes = tess_buffer_bytes(spec);
        st = r->be->alloc(cs->ctx, bytes ? bytes : 1, &d->ref[b]);
        if (!st) st = r->be->upload(cs->ctx, d->ref[b], p->host[b], bytes);
        if (st) return tess_error_context(st, "preparing the reference of '%s'", spec->name);
    }
    return TESS_OK;
}

static tess_status child_setup(child_state *cs) {
    tess_runner *r = cs->r;
    cs->nbuf = tess_problem_nbuf(r->problem);
    tess_status st = r->be->open(&r->dev, &cs->ctx);
    if (st) return tess_error_context(st, "opening the %s backend", r->be->name);
    size_t largest_out = tess_problem_largest_output(r->problem);
    st = instance_setup(cs, &cs->first, r->problem);
    if (!st) st = instance_setup(cs, &cs->again[0], r->second);
    if (!st && r->typical) st = instance_setup(cs, &cs->again[1], r->typical);
    cs->dbuf[0] = cs->first.buf;
    for (int s = 1; s < r->nsets && !st; s++) st = alloc_set(cs, r->problem, &cs->dbuf[s]);
    if (st) return st;
    cs->check = malloc(largest_out ? largest_out : 1);
    if (!cs->check) return tess_error(TESS_ERR_NOMEM, "verification buffer");
    return TESS_OK;
}

/* One verified run on instance d (tess_problem_run_check). Returns false
 * when the backend context can no longer be trusted; *ok whether the
 * outputs match. */
static bool run_and_verify(child_state *cs, void *module, device_instance *d, tess_result *res, bool *ok) {
    return tess_problem_run_check(d->p, cs->r->be, cs->ctx, module, d->buf, d->ref, cs->check, res, ok) == TESS_OK;
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
    bool ok, healthy = run_and_verify(cs, module, &cs->first, res, &ok);
    /* Inputs of another seed, then typical inputs: a kernel that fits one
     * set of inputs, or a shortcut that fits uniform inputs only, fails here. */
    static const char *const again_what[2] = {"inputs of a second seed", "typical inputs"};
    for (int a = 0; a < 2 && healthy && ok; a++) {
        if (!cs->again[a].p) continue;
        healthy = run_and_verify(cs, module, &cs->again[a], res, &ok);
        if (healthy && !ok) {
            char why[sizeof res->message];
            snprintf(why, sizeof why, "%s", res->message);
            tess_result_fail(res, TESS_RESULT_WRONG_RESULT, "on %s: %.400s", again_what[a], why);
        }
    }
    if (!healthy || !ok) goto done;
    double t2 = tess_now();
    rep->check_s = t2 - t1;
    void *const *sets[MAX_SETS];
    for (int s = 0; s < r->nsets; s++) sets[s] = cs->dbuf[s];
    tess_timing_options topt = {.min_time_s = r->opt.min_time_s,
                                .min_reps = r->opt.min_reps,
                                .max_reps = r->opt.max_reps,
                                .cutoff_ms = cutoff_ms};
    tess_timing timing;
    st = tess_time_kernel(r->be, cs->ctx, module, sets, r->nsets, cs->nbuf,
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

/* The calibration child's answer. */
typedef struct calibration_answer {
    int32_t st;
    double rates[TESS_CEILING_COUNT];
    char msg[512];
} calibration_answer;

tess_status tess_backend_calibrate_isolated(const tess_backend_ops *be, const tess_device *dev,
                                            double rates[TESS_CEILING_COUNT]) {
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
        calibration_answer ans = {0};
        void *ctx = NULL;
        ans.st = be->open(dev, &ctx);
        if (!ans.st) ans.st = be->calibrate(ctx, ans.rates);
        snprintf(ans.msg, sizeof ans.msg, "%s", tess_errmsg());
        if (ctx) be->close(ctx);
        tess_ipc_write(fds[1], &ans, sizeof ans);
        _exit(0);
    }
    close(fds[1]);
    calibration_answer ans;
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
    memcpy(rates, ans.rates, sizeof ans.rates);
    return TESS_OK;
}
