/*
 * test_floor.c - the floor on credible times (core/roofline.c): its value
 * from the ceilings, the bytes the caches could hold left out, the ceiling
 * it names; the bound that the tune report uses; and, on the cpu backend, a
 * planted kernel that works only when its inputs change (planted_skip.h),
 * which passes verification but is recorded as invalid, never as the best.
 *
 * The device's ceilings and cache are set by hand, far above what the host
 * can do (1000 GB/s, 1 MiB of cache), so the check does not depend on the
 * host's speed or its load: a correct kernel is far above that floor and the
 * skipping one far below it.
 */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>
#include "check.h"
#include "core/backend_cpu.h"
#include "core/error.h"
#include "core/evaluator.h"
#include "core/records.h"
#include "core/roofline.h"
#include "core/tune.h"
#include "planted_skip.h"
#include "search/search.h"

static tess_device device_with(const char *backend, double copy, double read, double fma_f32, int64_t cache) {
    tess_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.backend, sizeof d.backend, "%s", backend);
    strcpy(d.name, "floor test");
    strcpy(d.arch, "x86_64");
    d.units = 1;
    d.l2_bytes = cache;
    d.ceiling[TESS_CEILING_COPY] = (tess_ceiling){copy, "2030-01-01T00:00:00.000Z"};
    d.ceiling[TESS_CEILING_READ] = (tess_ceiling){read, "2030-01-01T00:00:00.000Z"};
    d.ceiling[TESS_CEILING_FMA_F32] = (tess_ceiling){fma_f32, "2030-01-01T00:00:00.000Z"};
    return d;
}

static tess_ceiling_kind tensor_bf16(const tess_op *op, const tess_task *t) { (void)op, (void)t; return TESS_CEILING_MMA_BF16; }

static void test_floor_values(void) {
    const tess_device d = device_with("cuda", 1000, 1500, 10000, 10 << 20);
    /* 1 GB: the caches hold 2 x 10 MiB of it; the faster read-only rate, plus 10%. */
    tess_bound f = tess_roofline_floor(1e9, 1e6, TESS_CEILING_FMA_F32, &d);
    CHECK(f.ceiling == TESS_CEILING_READ);
    CHECK_NEAR(f.amount, 1e9 - 2.0 * (10 << 20), 1e-9);
    CHECK_NEAR(f.ms, (1e9 - 2.0 * (10 << 20)) / (1500 * 1.1e9) * 1e3, 1e-12);
    /* A working set the caches could hold: the flops decide, at the FMA rate plus 10%. */
    f = tess_roofline_floor(15e6, 1e9, TESS_CEILING_FMA_F32, &d);
    CHECK(f.ceiling == TESS_CEILING_FMA_F32 && f.amount == 1e9);
    CHECK_NEAR(f.ms, 1e9 / (10000 * 1.1e9) * 1e3, 1e-12);
    /* More flops than bytes allow for: the compute unit bounds even a large working set. */
    f = tess_roofline_floor(1e9, 1e10, TESS_CEILING_FMA_F32, &d);
    CHECK(f.ceiling == TESS_CEILING_FMA_F32);
    /* A unit the device lacks (no tensor cores) gives no flops floor. */
    f = tess_roofline_floor(15e6, 1e12, TESS_CEILING_MMA_BF16, &d);
    CHECK(f.ms == 0);
    /* A CPU's ceilings, calibrated on a shared host, get twice the rate. */
    tess_device cpu = device_with("cpu", 1000, 1500, 10000, 10 << 20);
    f = tess_roofline_floor(1e9, 1e6, TESS_CEILING_FMA_F32, &cpu);
    CHECK_NEAR(f.ms, (1e9 - 2.0 * (10 << 20)) / (1500 * 2e9) * 1e3, 1e-12);
    /* Not calibrated: no floor at all. */
    tess_device blank = device_with("cuda", 0, 0, 0, 10 << 20);
    CHECK(tess_roofline_floor(1e12, 1e12, TESS_CEILING_FMA_F32, &blank).ms == 0);

    /* The bound: bytes at the copy rate (no slack, no cache allowance), or flops. */
    tess_bound b = tess_roofline_bound(1e9, 1e9, TESS_CEILING_FMA_F32, &d);
    CHECK(b.ceiling == TESS_CEILING_COPY);
    CHECK_NEAR(b.ms, 1.0, 1e-12);
    b = tess_roofline_bound(1e9, 2e10, TESS_CEILING_FMA_F32, &d);
    CHECK(b.ceiling == TESS_CEILING_FMA_F32);
    CHECK_NEAR(b.ms, 2.0, 1e-12);

    /* The unit: from the dtype, unless the operator names one. */
    tess_task t;
    const int64_t n[] = {1 << 20};
    CHECK_OK(tess_task_init(&t, "planted_skip", TESS_F64, n, 1));
    CHECK(tess_op_compute_unit(&planted_skip, &t) == TESS_CEILING_FMA_F64);
    t.dtype = TESS_BF16;
    CHECK(tess_op_compute_unit(&planted_skip, &t) == TESS_CEILING_FMA_F32);
    tess_op gemm_like = planted_skip;
    gemm_like.compute_unit = tensor_bf16;
    CHECK(tess_op_compute_unit(&gemm_like, &t) == TESS_CEILING_MMA_BF16);

    /* The verdict and its message: the time, the floor, the ceiling (512 MB, beyond the caches). */
    const int64_t big[] = {1 << 26};
    CHECK_OK(tess_task_init(&t, "planted_skip", TESS_F32, big, 1));
    char why[512] = "";
    tess_bound at = tess_roofline_floor(skip_bytes(&planted_skip, &t), skip_flops(&planted_skip, &t), TESS_CEILING_FMA_F32, &d);
    CHECK(at.ms > 0 && tess_time_credible(&planted_skip, &t, &d, at.ms, why, sizeof why));
    CHECK(!tess_time_credible(&planted_skip, &t, &d, 0.5 * at.ms, why, sizeof why));
    CHECK_MSG(strstr(why, "below the floor") && strstr(why, "read-only bandwidth") && strstr(why, "1500"),
              "message: %s", why);
}

typedef struct seen {
    tess_records *db;
    int64_t run_id;
    const tess_space *space;
    tess_result r[4];
    int n;
} seen;

static void record(const tess_result *r, void *user) {
    seen *s = user;
    char config[64];
    CHECK_OK(tess_config_format(s->space, &r->config, config, sizeof config));
    CHECK_OK(tess_records_put_result(s->db, s->run_id, config, r, "exhaustive"));
    if (s->n < 4) s->r[s->n++] = *r;
}

static void test_planted_skip(const char *scratch) {
    CHECK_OK(tess_cpu_register());
    CHECK_OK(tess_search_register());
    const tess_backend_ops *cpu = tess_backend_find("cpu");
    tess_device dev;
    CHECK_OK(cpu->probe(&dev));
    tess_device fake = device_with("cpu", 1000, 1000, 1e6, 1 << 20);
    snprintf(fake.name, sizeof fake.name, "%s", dev.name);
    fake.units = dev.units;
    tess_task task;
    const int64_t n[] = {1 << 22};   /* 32 MiB in and out */
    CHECK_OK(tess_task_init(&task, "planted_skip", TESS_F32, n, 1));
    tess_hw_options o = tess_hw_options_default();
    o.min_time_s = 0.005;
    o.race_factor = 0;
    tess_space *space = NULL;
    tess_evaluator *ev = NULL;
    CHECK_OK(tess_op_space(&planted_skip, &task, &fake, &space));
    if (space) CHECK_OK(tess_evaluator_create_hw(&planted_skip, &task, space, cpu, &fake, &o, &ev));
    if (!ev) {
        tess_space_destroy(space);
        return;
    }

    char path[600];
    snprintf(path, sizeof path, "%s/records.db", scratch);
    seen s = {.space = ev->space};
    int64_t task_id, device_id;
    CHECK_OK(tess_records_open(path, &s.db));
    CHECK_OK(tess_records_put_task(s.db, &task, "tests", &task_id));
    CHECK_OK(tess_records_put_device(s.db, &fake, &device_id));
    CHECK_OK(tess_records_begin_run(s.db, task_id, device_id, "exhaustive", 1, 2, &s.run_id));
    tess_config dflt;
    tess_space_default(ev->space, &dflt);
    tess_tune_loop_options lo = {.strategy = tess_strategy_find("exhaustive"), .budget = 10, .seed = 1,
                                 .seeds = &dflt, .nseeds = 1, .on_result = record, .user = &s};
    tess_tune_outcome out;
    CHECK_OK(tess_tune_loop(ev, &lo, &out));
    CHECK_MSG(out.evaluations == 2 && s.n == 2, "%d evaluations", out.evaluations);
    for (int i = 0; i < s.n; i++) {
        bool skip = (int)tess_config_get(ev->space, &s.r[i].config, "mode") == 1;
        if (skip)
            CHECK_MSG(s.r[i].status == TESS_RESULT_INVALID && isinf(s.r[i].time_ms) &&
                          strstr(s.r[i].message, "below the floor") && strstr(s.r[i].message, "bandwidth"),
                      "skip: %s (%s)", tess_outcome_name(s.r[i].status), s.r[i].message);
        else
            CHECK_MSG(s.r[i].status == TESS_RESULT_OK, "good: %s (%s)", tess_outcome_name(s.r[i].status),
                      s.r[i].message);
    }
    CHECK(out.found && (int)tess_config_get(ev->space, &out.best.config, "mode") == 0);
    CHECK(out.counts[TESS_RESULT_INVALID] == 1 && out.counts[TESS_RESULT_OK] == 1);
    char key[TESS_KEY_MAX], dkey[TESS_KEY_MAX];
    tess_record_row best;
    CHECK_OK(tess_task_key(&task, key, sizeof key));
    CHECK_OK(tess_device_key(&fake, dkey, sizeof dkey));
    CHECK_OK(tess_records_best(s.db, key, dkey, &best));
    CHECK_MSG(strcmp(best.config, "mode=good") == 0, "best %s", best.config);
    tess_records_close(s.db);
    unlink(path);
    tess_evaluator_destroy(ev);
    tess_space_destroy(space);
}

int main(void) {
    char scratch[512];
    snprintf(scratch, sizeof scratch, "%s/tess-floor-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(scratch)) {
        perror("mkdtemp");
        return 1;
    }
    test_floor_values();
    test_planted_skip(scratch);
    char wal[600];
    snprintf(wal, sizeof wal, "%s/records.db-wal", scratch);
    unlink(wal);
    snprintf(wal, sizeof wal, "%s/records.db-shm", scratch);
    unlink(wal);
    rmdir(scratch);
    return check_finish("test_floor");
}
