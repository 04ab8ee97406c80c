/* runner.c - isolated execution of candidates in a forked child process. */
#include <errno.h>
#include <gsl/gsl_rng.h>
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
#include "runner.h"
#include "timing.h"

#define MAX_SETS 8

struct tess_runner {
    const tess_op *op;
    tess_task task;
    const tess_backend_ops *be;
    tess_device dev;
    tess_runner_options opt;
    tess_buffer_spec spec[TESS_MAX_BUFFERS];
    int nbuf;
    void *host[TESS_MAX_BUFFERS];   /* inputs for IN buffers, reference outputs for OUT */
    double tolerance, scale;
    int nsets;                      /* buffer sets rotated while timing */
    pid_t child;
    int to_child, from_child;
};

/* What the child answers for each candidate. */
typedef struct reply {
    int32_t fatal;                  /* the runner cannot go on (message in result) */
    int32_t child_exits;            /* the child exits after this reply (context is unusable) */
    tess_result result;
} reply;

static size_t buffer_bytes(const tess_buffer_spec *b) {
    return (size_t)b->count * tess_dtype_size(b->dtype);
}

static void fill_uniform(void *host, const tess_buffer_spec *b, uint64_t seed) {
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, (unsigned long)seed);
    for (int64_t i = 0; i < b->count; i++)
        tess_dtype_store(host, b->dtype, i, 2.0 * gsl_rng_uniform(rng) - 1.0);
    gsl_rng_free(rng);
}

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
    r->child = 0;
    tess_status st = op->buffers(t, r->spec, &r->nbuf);
    if (st) goto fail;
    size_t working_set = 0;
    for (int i = 0; i < r->nbuf; i++) {
        size_t bytes = buffer_bytes(&r->spec[i]);
        working_set += bytes;
        r->host[i] = malloc(bytes ? bytes : 1);
        if (!r->host[i]) {
            st = tess_error(TESS_ERR_NOMEM, "host buffer '%s' of %zu bytes", r->spec[i].name, bytes);
            goto fail;
        }
        if (r->spec[i].role == TESS_BUF_IN) {
            uint64_t seed = o->seed * 1000003ULL + (uint64_t)i;
            if (op->fill_input)
                st = op->fill_input(t, i, r->host[i], seed);
            else
                fill_uniform(r->host[i], &r->spec[i], seed);
            if (st) goto fail;
        } else {
            memset(r->host[i], 0, bytes);
        }
    }
    st = op->reference(t, r->host);
    if (st) {
        tess_error_context(st, "reference of %s", op->name);
        goto fail;
    }
    r->tolerance = op->tolerance(t);
    r->scale = op->verify_scale ? op->verify_scale(t, r->host) : 1.0;
    /* Rotate through copies when the buffers would stay warm in the cache. */
    r->nsets = 1;
    if (dev->l2_bytes > 0 && working_set > 0 && working_set < 2 * (size_t)dev->l2_bytes) {
        size_t sets = (3 * (size_t)dev->l2_bytes) / working_set + 1;
        r->nsets = sets > MAX_SETS ? MAX_SETS : (int)sets;
    }
    *out = r;
    return TESS_OK;
fail:
    tess_runner_destroy(r);
    return st;
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
    for (int i = 0; i < r->nbuf; i++) free(r->host[i]);
    free(r);
}

/* ---- the child side -------------------------------------------------------- */

typedef struct child_state {
    tess_runner *r;
    void *ctx;
    void *dbuf[MAX_SETS][TESS_MAX_BUFFERS];
    void *check;                    /* host copy of an output being verified */
    void *poison;                   /* NaN-filled host buffer */
} child_state;

static tess_status child_setup(child_state *cs) {
    tess_runner *r = cs->r;
    tess_status st = r->be->open(&r->dev, &cs->ctx);
    if (st) return tess_error_context(st, "opening the %s backend", r->be->name);
    size_t largest_out = 0;
    for (int b = 0; b < r->nbuf; b++)
        if (r->spec[b].role == TESS_BUF_OUT && buffer_bytes(&r->spec[b]) > largest_out)
            largest_out = buffer_bytes(&r->spec[b]);
    for (int s = 0; s < r->nsets; s++)
        for (int b = 0; b < r->nbuf; b++) {
            size_t bytes = buffer_bytes(&r->spec[b]);
            st = r->be->alloc(cs->ctx, bytes ? bytes : 1, &cs->dbuf[s][b]);
            if (st) return tess_error_context(st, "allocating buffer '%s'", r->spec[b].name);
            if (r->spec[b].role == TESS_BUF_IN) {
                st = r->be->upload(cs->ctx, cs->dbuf[s][b], r->host[b], bytes);
                if (st) return st;
            }
        }
    cs->check = malloc(largest_out ? largest_out : 1);
    cs->poison = malloc(largest_out ? largest_out : 1);
    if (!cs->check || !cs->poison) return tess_error(TESS_ERR_NOMEM, "verification buffers");
    for (int b = 0; b < r->nbuf; b++)
        if (r->spec[b].role == TESS_BUF_OUT) {
            for (int64_t i = 0; i < r->spec[b].count; i++)
                tess_dtype_store(cs->poison, r->spec[b].dtype, i, NAN);
            break;
        }
    return TESS_OK;
}

/* Counts unwritten (NaN where the reference is not) and wrong elements,
 * and the first index of each; the parallel pass that every candidate pays. */
typedef struct check_counts {
    int64_t unwritten, first_unwritten, wrong, first_wrong;
} check_counts;

#define COUNT_MISMATCHES(T)                                                               \
    do {                                                                                  \
        const T *got = got_v, *want = want_v;                                             \
        _Pragma("omp parallel for reduction(+ : unwritten, wrong) reduction(min : first_unwritten, first_wrong)") \
        for (int64_t i = 0; i < n; i++) {                                                 \
            double g = got[i], w = want[i];                                               \
            if (isnan(g) && !isnan(w)) {                                                  \
                unwritten++;                                                              \
                if (i < first_unwritten) first_unwritten = i;                             \
            } else if (!(fabs(g - w) <= tol * (scale + fabs(w)))) {                       \
                wrong++;                                                                  \
                if (i < first_wrong) first_wrong = i;                                     \
            }                                                                             \
        }                                                                                 \
    } while (0)

static check_counts count_mismatches(const void *got_v, const void *want_v, tess_dtype t, int64_t n,
                                     double tol, double scale) {
    int64_t unwritten = 0, wrong = 0, first_unwritten = INT64_MAX, first_wrong = INT64_MAX;
    if (t == TESS_F32) {
        COUNT_MISMATCHES(float);
    } else if (t == TESS_F64) {
        COUNT_MISMATCHES(double);
    } else {
        for (int64_t i = 0; i < n; i++) {
            double g = tess_dtype_load(got_v, t, i), w = tess_dtype_load(want_v, t, i);
            if (isnan(g) && !isnan(w)) {
                unwritten++;
                if (i < first_unwritten) first_unwritten = i;
            } else if (!(fabs(g - w) <= tol * (scale + fabs(w)))) {
                wrong++;
                if (i < first_wrong) first_wrong = i;
            }
        }
    }
    return (check_counts){unwritten, first_unwritten, wrong, first_wrong};
}

/* Compares output b (downloaded into cs->check) with the reference. */
static bool verify_output(child_state *cs, int b, tess_result *res) {
    tess_runner *r = cs->r;
    const tess_buffer_spec *spec = &r->spec[b];
    check_counts k = count_mismatches(cs->check, r->host[b], spec->dtype, spec->count, r->tolerance,
                                      r->scale);
    if (k.unwritten) {
        tess_result_fail(res, TESS_RESULT_WRONG_RESULT,
                         "%lld of %lld elements of '%s' were not written (first at index %lld)",
                         (long long)k.unwritten, (long long)spec->count, spec->name,
                         (long long)k.first_unwritten);
        return false;
    }
    if (k.wrong) {
        /* The rare failing case: find the worst element serially. */
        int64_t worst = k.first_wrong;
        double worst_excess = 0;
        for (int64_t i = k.first_wrong; i < spec->count; i++) {
            double got = tess_dtype_load(cs->check, spec->dtype, i);
            double want = tess_dtype_load(r->host[b], spec->dtype, i);
            double err = fabs(got - want), allowed = r->tolerance * (r->scale + fabs(want));
            double excess = isfinite(err) ? err / allowed : INFINITY;
            if (excess > worst_excess) {
                worst = i;
                worst_excess = excess;
            }
        }
        double got = tess_dtype_load(cs->check, spec->dtype, worst);
        double want = tess_dtype_load(r->host[b], spec->dtype, worst);
        tess_result_fail(res, TESS_RESULT_WRONG_RESULT,
                         "%lld of %lld elements of '%s' are wrong; worst at index %lld: %.9g, "
                         "expected %.9g (tolerance %.3g relative)",
                         (long long)k.wrong, (long long)spec->count, spec->name, (long long)worst, got,
                         want, r->tolerance);
        return false;
    }
    return true;
}

/* Runs, verifies and times one candidate. Returns false when the backend
 * context can no longer be trusted (the child must exit). */
static bool child_measure(child_state *cs, const tess_blob *bin, const tess_kernel_source *src,
                          tess_result *res) {
    tess_runner *r = cs->r;
    void *module = NULL;
    tess_error_clear();
    tess_status st = r->be->load(cs->ctx, bin, src, &module, &res->metrics);
    if (st) {
        tess_result_fail(res, TESS_RESULT_RUNTIME_ERROR, "load: %s", tess_errmsg());
        return st != TESS_ERR_RUNTIME;
    }
    bool healthy = true;
    for (int b = 0; b < r->nbuf && !st; b++)
        if (r->spec[b].role == TESS_BUF_OUT)
            st = r->be->upload(cs->ctx, cs->dbuf[0][b], cs->poison, buffer_bytes(&r->spec[b]));
    if (!st) st = r->be->run(cs->ctx, module, cs->dbuf[0], r->nbuf);
    if (st) {
        tess_result_fail(res, TESS_RESULT_RUNTIME_ERROR, "%s", tess_errmsg());
        healthy = false;
        goto done;
    }
    for (int b = 0; b < r->nbuf; b++) {
        if (r->spec[b].role != TESS_BUF_OUT) continue;
        st = r->be->download(cs->ctx, cs->check, cs->dbuf[0][b], buffer_bytes(&r->spec[b]));
        if (st) {
            tess_result_fail(res, TESS_RESULT_RUNTIME_ERROR, "download: %s", tess_errmsg());
            healthy = false;
            goto done;
        }
        if (!verify_output(cs, b, res)) goto done;
    }
    void *const *sets[MAX_SETS];
    for (int s = 0; s < r->nsets; s++) sets[s] = cs->dbuf[s];
    tess_timing_options topt = {.min_time_s = r->opt.min_time_s,
                                .min_reps = r->opt.min_reps,
                                .max_reps = r->opt.max_reps};
    tess_timing timing;
    st = tess_time_kernel(r->be, cs->ctx, module, sets, r->nsets, r->nbuf,
                          &topt, &timing, &res->metrics);
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
done:
    r->be->unload(cs->ctx, module);
    return healthy;
}

static void child_main(tess_runner *r, int in, int out) {
    child_state cs = {.r = r};
    tess_status setup = child_setup(&cs);
    for (;;) {
        tess_kernel_source src;
        void *data;
        size_t size;
        if (tess_ipc_read(in, &src, sizeof src) || tess_ipc_read_block(in, &data, &size)) _exit(0);
        src.code = NULL;
        tess_blob bin = {data, size};
        reply rep = {0};
        tess_result_init(&rep.result, NULL);
        bool healthy = true;
        if (setup) {
            rep.fatal = 1;
            snprintf(rep.result.message, sizeof rep.result.message, "%s", tess_errmsg());
        } else {
            healthy = child_measure(&cs, &bin, &src, &rep.result);
        }
        free(data);
        rep.child_exits = rep.fatal || !healthy;
        if (tess_ipc_write(out, &rep, sizeof rep) || rep.child_exits) _exit(0);
    }
}

static tess_status start_child(tess_runner *r) {
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

tess_status tess_runner_measure(tess_runner *r, const tess_blob *bin, const tess_kernel_source *src,
                                double timeout_s, tess_result *res) {
    if (r->child <= 0) {
        tess_status st = start_child(r);
        if (st) return st;
    }
    signal(SIGPIPE, SIG_IGN);
    tess_kernel_source header = *src;
    header.code = NULL;
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
    tess_config keep = res->config;
    double compile_ms = res->compile_ms;
    *res = rep.result;
    res->config = keep;
    res->compile_ms = compile_ms;
    return TESS_OK;
}

tess_status tess_backend_calibrate_isolated(const tess_backend_ops *be, const tess_device *dev,
                                            double *gbps, double *gflops) {
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
