/* test_dispatch.c - run-time dispatch: default, exact, transfer and fallback
 * origins, the per-context cache, online tuning, and kernels run on the
 * caller's arrays. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"
#include "core/records.h"
#include "planted.h"
#include "stencils/heat3d.h"
#include "transfer/builtin.h"
#include "transfer/request.h"

/* A kernel library installed read-only (file and directory), opened by a
 * user who may not write it: tess_open reads it, and dispatch finds the
 * tuned config. Runs in a child (as nobody when the tests run as root),
 * before this process runs kernels itself. */
static void test_readonly_library(const char *dir, const char *db, const int64_t *shape, const char *best) {
    char lib_dir[300], lib[400], cache[300], cmd[4096];
    snprintf(lib_dir, sizeof lib_dir, "%s/installed", dir);
    snprintf(lib, sizeof lib, "%s/records.db", lib_dir);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p %s %s && cp %s %s && chmod 777 %s && chmod 444 %s && chmod 555 %s", lib_dir,
             cache, db, lib, cache, lib, lib_dir);
    CHECK(chmod(dir, 0755) == 0 && system(cmd) == 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(77);
        setenv("TESSERA_CACHE", cache, 1);
        tess_context *ro = NULL;
        tess_kernel *k = NULL;
        CHECK_OK(tess_open(&ro, lib));
        if (ro) CHECK_OK(tess_kernel_get(ro, "heat3d", shape, 3, "f32", "cpu", &k));
        CHECK(k && strcmp(tess_kernel_origin(k), "exact") == 0 && strcmp(tess_kernel_config(k), best) == 0);
        tess_kernel_destroy(k);
        tess_close(ro);
        _exit(check_failures_ ? 1 : 0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
        printf("cannot become an unprivileged user: the read-only library is not tested\n");
    else
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "dispatch from a read-only library (status %d)",
                  status);
    char wal[420];   /* no -wal (nor -shm) was made beside it */
    snprintf(wal, sizeof wal, "%s-wal", lib);
    CHECK(access(wal, F_OK) != 0);
    snprintf(cmd, sizeof cmd, "chmod 755 %s", lib_dir);
    CHECK(system(cmd) == 0);
}

int main(void) {
    char dir[] = "/tmp/tessera-dispatch-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char db[256];
    snprintf(db, sizeof db, "%s/records.db", dir);
    CHECK_OK(tess_register_builtin());
    CHECK_OK(tess_op_register(&planted));
    tess_context *ctx = NULL;
    CHECK_OK(tess_open(&ctx, db));
    if (!ctx) return check_finish("test_dispatch");

    /* tuning comes first: once kernels run in this process, it is refused */
    const int64_t small[3] = {16, 16, 16};
    tess_tune_options opt = tess_tune_options_default();
    opt.budget = 4;
    opt.strategy = "random";
    tess_tune_report rep;
    CHECK_OK(tess_tune(ctx, "heat3d", small, 3, "f32", "cpu", &opt, &rep));
    tess_close(ctx);   /* the file alone holds everything now */
    test_readonly_library(dir, db, small, rep.best_config);
    CHECK_OK(tess_open(&ctx, db));
    if (!ctx) return check_finish("test_dispatch");

    /* online tuning for a task never seen: tuned, stored, then an exact hit */
    const int64_t vec[1] = {100000};
    tess_dispatch_options d = tess_dispatch_options_default();
    d.online_budget = 3;
    tess_kernel *k4 = NULL;
    CHECK_OK(tess_dispatch(ctx, "sum", vec, 1, "f32", "cpu", &d, &k4));
    CHECK(k4 && strcmp(tess_kernel_origin(k4), "exact") == 0);

    /* nothing recorded for the operator: the default, verified */
    const int64_t n2048[1] = {2048};
    tess_kernel *k0 = NULL;
    CHECK_OK(tess_dispatch(ctx, "planted", n2048, 1, "f32", "cpu", NULL, &k0));
    CHECK(k0 && strcmp(tess_kernel_origin(k0), "default") == 0);

    /* an operator with attributes: the request's text is longer than a bare
     * operator name (dispatch refused such requests once), and it is cached */
    const int64_t mnk[3] = {8, 8, 8};
    tess_kernel *ka = NULL, *kb = NULL;
    const char *with_attrs = "gemm:layout=nt,epilogue=silu,alpha=0.5";
    CHECK_OK(tess_dispatch(ctx, with_attrs, mnk, 3, "f32", "cpu", NULL, &ka));
    CHECK(ka && strcmp(tess_kernel_origin(ka), "default") == 0);
    CHECK_OK(tess_dispatch(ctx, with_attrs, mnk, 3, "f32", "cpu", NULL, &kb));
    CHECK_MSG(ka && ka == kb, "a repeated dispatch with attributes returns the cached kernel");

    /* the tuned task: an exact hit, running the recorded best, cached */
    tess_kernel *k1 = NULL, *k2 = NULL;
    CHECK_OK(tess_dispatch(ctx, "heat3d", small, 3, "f32", "cpu", NULL, &k1));
    CHECK(k1 && strcmp(tess_kernel_origin(k1), "exact") == 0);
    CHECK_MSG(k1 && strcmp(tess_kernel_config(k1), rep.best_config) == 0, "%s vs %s",
              k1 ? tess_kernel_config(k1) : "", rep.best_config);
    CHECK_OK(tess_dispatch(ctx, "heat3d", small, 3, "f32", "cpu", NULL, &k2));
    CHECK_MSG(k1 == k2, "a repeated dispatch returns the cached kernel");

    /* the kernel runs on our arrays and matches a direct computation */
    float *in = malloc(16 * 16 * 16 * sizeof *in), *out = malloc(16 * 16 * 16 * sizeof *out);
    for (int i = 0; i < 16 * 16 * 16; i++) in[i] = (float)((i * 37) % 101) / 101.0f;
    void *arrays[2] = {in, out};
    CHECK_OK(tess_kernel_run(k1, arrays, 2));
    int i = (8 * 16 + 8) * 16 + 8;
    float expect = in[i] + (float)TESS_HEAT3D_ALPHA * (in[i - 1] + in[i + 1] + in[i - 16] + in[i + 16] +
                                                      in[i - 256] + in[i + 256] - 6 * in[i]);
    CHECK_NEAR(out[i], expect, 1e-5);
    CHECK_NEAR(out[0], in[0], 0);
    CHECK(tess_kernel_run(k1, arrays, 1) == TESS_ERR_ARG);

    /* a related shape: predicted from the tuned one */
    const int64_t other[3] = {20, 16, 24};
    CHECK_OK(tess_dispatch(ctx, "heat3d", other, 3, "f32", "cpu", NULL, &k2));
    CHECK(k2 && strcmp(tess_kernel_origin(k2), "transfer") == 0);
    CHECK_MSG(k2 && strstr(tess_kernel_note(k2), "heat3d:f32:16x16x16"), "%s", k2 ? tess_kernel_note(k2) : "");

    /* a recorded best that computes wrong values falls back to the default */
    tess_request s;
    const int64_t n[1] = {4096};
    CHECK_OK(tess_request_resolve("planted", n, 1, "f32", "cpu", &s));
    int64_t dev_id, task_id, run_id;
    tess_records *r = tess_context_records(ctx);
    CHECK_OK(tess_records_put_device(r, &s.device, &dev_id));
    CHECK_OK(tess_records_put_task(r, &s.task, "tests", &task_id));
    CHECK_OK(tess_records_begin_run(r, task_id, dev_id, "test", 1, 1, &run_id));
    tess_result res;
    tess_result_init(&res, NULL);
    res.status = TESS_RESULT_OK;
    res.time_ms = res.min_ms = res.max_ms = 0.001;
    res.reps = 5;
    CHECK_OK(tess_records_put_result(r, run_id, "mode=wrong,unroll=1", &res, "test"));
    tess_kernel *k3 = NULL;
    CHECK_OK(tess_dispatch(ctx, "planted", n, 1, "f32", "cpu", NULL, &k3));
    CHECK(k3 && strcmp(tess_kernel_origin(k3), "fallback") == 0);
    CHECK(k3 && strcmp(tess_kernel_config(k3), "mode=good,unroll=1") == 0);
    CHECK_MSG(k3 && strstr(tess_kernel_note(k3), "failed verification"), "%s", k3 ? tess_kernel_note(k3) : "");

    /* tuning now is refused with a message instead of hanging a forked child */
    const int64_t twelve[3] = {12, 12, 12};
    CHECK(tess_tune(ctx, "heat3d", twelve, 3, "f32", "cpu", &opt, &rep) == TESS_ERR_UNAVAILABLE);
    CHECK(strstr(tess_errmsg(), "tune before") != NULL);

    /* a reading context serves dispatch and refuses to write */
    tess_context *ro = NULL;
    tess_kernel *k5 = NULL;
    CHECK_OK(tess_open_readonly(&ro, db));
    if (ro) CHECK_OK(tess_dispatch(ro, "heat3d", small, 3, "f32", "cpu", NULL, &k5));
    CHECK(k5 && strcmp(tess_kernel_origin(k5), "exact") == 0);
    tess_device_info info;
    CHECK(ro && tess_device_calibrate(ro, "cpu", &info) == TESS_ERR_DB);
    CHECK_MSG(strstr(tess_errmsg(), "readonly"), "%s", tess_errmsg());
    tess_close(ro);

    /* errors name the problem */
    CHECK(tess_dispatch(ctx, "nosuch", small, 3, "f32", "cpu", NULL, &k1) == TESS_ERR_ARG);
    CHECK(strstr(tess_errmsg(), "nosuch") != NULL);
    tess_close(ctx);
    free(in);
    free(out);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    return check_finish("test_dispatch");
}
