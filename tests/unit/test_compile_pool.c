/* test_compile_pool.c - the compile pool on a scripted backend: answers in
 * completion order, and a compile that runs past the timeout stopped,
 * reported as a compile error that says so, its worker replaced. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "core/compile_pool.h"
#include "core/error.h"
#include "core/types.h"

/* The source is a script: "sleep S" sleeps S seconds first; "fail" fails;
 * "die" ends the worker; the binary is the source text. */
static tess_status scripted_compile(const tess_device *dev, const tess_kernel_source *src, tess_blob *bin,
                                    char **log) {
    (void)dev;
    unsigned seconds = 0;
    if (sscanf(src->code, "sleep %u", &seconds) == 1) sleep(seconds);
    if (strcmp(src->code, "die") == 0) _exit(3);
    if (strcmp(src->code, "fail") == 0) {
        *log = strdup("scripted failure");
        return tess_error(TESS_ERR_COMPILE, "scripted failure");
    }
    bin->size = strlen(src->code) + 1;
    bin->data = strdup(src->code);
    return bin->data ? TESS_OK : tess_error(TESS_ERR_NOMEM, "binary");
}

/* A batch: each script in turn. */
static void scripted_batch(const tess_device *dev, const tess_kernel_source *src, int n, tess_compile_result *out) {
    for (int i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].status = scripted_compile(dev, &src[i], &out[i].binary, &out[i].log);
    }
}

static const tess_backend_ops scripted = {.name = "scripted", .compile = scripted_compile};
static const tess_backend_ops scripted_batches = {
    .name = "scripted", .compile = scripted_compile, .compile_batch = scripted_batch};

static void submit(tess_compile_pool *p, const char *script, int tag) {
    tess_kernel_source src;
    memset(&src, 0, sizeof src);
    src.code = (char *)script;
    CHECK_OK(tess_compile_pool_submit(p, &src, tag));
}

/* The next answer; checks its tag and status. */
static void expect(tess_compile_pool *p, int tag, tess_status status, const char *log_has) {
    tess_compiled c;
    memset(&c, 0, sizeof c);
    CHECK_OK(tess_compile_pool_next(p, &c));
    CHECK_MSG(c.tag == tag && c.status == status, "tag %d status %d, expected tag %d status %d (%s)", c.tag,
              (int)c.status, tag, (int)status, c.log ? c.log : "");
    if (log_has) CHECK_MSG(c.log && strstr(c.log, log_has), "log: %s", c.log ? c.log : "(none)");
    if (status == TESS_OK) CHECK(c.binary.data && c.binary.size > 0);
    tess_compiled_free(&c);
}

int main(void) {
    tess_device dev;
    memset(&dev, 0, sizeof dev);
    tess_compile_pool *p = NULL;
    CHECK_OK(tess_compile_pool_create(&scripted, &dev, 2, &p));
    if (!p) return check_finish("test_compile_pool");

    /* Completion order, a compile error with its log. */
    submit(p, "sleep 1", 0);
    submit(p, "fail", 1);
    expect(p, 1, TESS_ERR_COMPILE, "scripted failure");
    expect(p, 0, TESS_OK, NULL);

    /* A worker that dies: its job says so, and a new worker takes the next. */
    submit(p, "die", 8);
    expect(p, 8, TESS_ERR_COMPILE, "died (exited with status 3)");
    submit(p, "after", 9);
    expect(p, 9, TESS_OK, NULL);

    /* A compile past the timeout is stopped; the other worker's job is not. */
    tess_compile_pool_set_timeout(p, 1.0);
    double t0 = tess_now();
    submit(p, "sleep 60", 2);
    submit(p, "quick", 3);
    expect(p, 3, TESS_OK, NULL);
    expect(p, 2, TESS_ERR_COMPILE, "ran past 1 s");
    double waited = tess_now() - t0;
    CHECK_MSG(waited >= 0.9 && waited < 10, "stopped after %.1f s", waited);
    CHECK(tess_compile_pool_pending(p) == 0);

    /* The replaced worker compiles again; both workers take jobs. */
    submit(p, "again", 4);
    submit(p, "and again", 5);
    submit(p, "third", 6);
    int seen = 0;
    for (int i = 0; i < 3; i++) {
        tess_compiled c;
        CHECK_OK(tess_compile_pool_next(p, &c));
        CHECK(c.status == TESS_OK && c.tag >= 4 && c.tag <= 6);
        seen |= 1 << c.tag;
        tess_compiled_free(&c);
    }
    CHECK(seen == (1 << 4 | 1 << 5 | 1 << 6));

    /* Without a timeout a slow compile finishes. */
    tess_compile_pool_set_timeout(p, 0);
    submit(p, "sleep 2", 7);
    expect(p, 7, TESS_OK, NULL);
    tess_compiled none;
    CHECK(tess_compile_pool_next(p, &none) == TESS_ERR_NOTFOUND);
    tess_compile_pool_destroy(p);

    /* Batches of two: a batch has the timeout per job, and a stopped batch
     * fails all its jobs; the other batch is answered. */
    CHECK_OK(tess_compile_pool_create(&scripted_batches, &dev, 2, &p));
    if (!p) return check_finish("test_compile_pool");
    tess_compile_pool_set_batch(p, 2);
    tess_compile_pool_set_timeout(p, 0.5);
    t0 = tess_now();
    submit(p, "sleep 60", 10);
    submit(p, "after the sleep", 11);
    submit(p, "other", 12);
    submit(p, "batch", 13);
    int ok = 0, stopped = 0;
    for (int i = 0; i < 4; i++) {
        tess_compiled c;
        CHECK_OK(tess_compile_pool_next(p, &c));
        if (c.status == TESS_OK) ok |= 1 << c.tag;
        else if (c.log && strstr(c.log, "ran past 1 s")) stopped |= 1 << c.tag;
        tess_compiled_free(&c);
    }
    CHECK_MSG(ok == (1 << 12 | 1 << 13) && stopped == (1 << 10 | 1 << 11), "answered %#x, stopped %#x", ok, stopped);
    waited = tess_now() - t0;
    CHECK_MSG(waited >= 0.9 && waited < 10, "batch stopped after %.1f s", waited);
    submit(p, "fresh", 14);
    expect(p, 14, TESS_OK, NULL);
    tess_compile_pool_destroy(p);
    return check_finish("test_compile_pool");
}
