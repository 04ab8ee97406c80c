/* test_records.c - the records database: schema, round trips, best configs,
 * concurrent writers, durability, JSON lines export and import, refusals. */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <jansson.h>
#include <sqlite3.h>
#include "check.h"
#include "h200.h"
#include "error.h"
#include "records.h"

static char scratch[256];

static void scratch_path(char *buf, size_t len, const char *name) {
    snprintf(buf, len, "%s/%s", scratch, name);
}

static tess_task test_task(const char *op, int64_t n) {
    tess_task t;
    int64_t shape[3] = {n, n, n};
    tess_task_init(&t, op, TESS_F32, shape, 3);
    return t;
}

static tess_result make_result(tess_outcome status, double time_ms) {
    tess_result res;
    memset(&res, 0, sizeof res);
    res.status = status;
    res.time_ms = time_ms;
    res.min_ms = 0.9 * time_ms;
    res.max_ms = 1.2 * time_ms;
    res.spread = 0.05;
    res.reps = 7;
    res.gbps = 100.0 / time_ms;
    res.gflops = 50.0 / time_ms;
    res.compile_ms = 25.5;
    res.metrics = (tess_kernel_metrics){32, 1024, 2048, 0, 0.75, 310.5, 2.5e-4};
    if (status != TESS_RESULT_OK)
        snprintf(res.message, sizeof res.message, "failed: %s", tess_outcome_name(status));
    return res;
}

/* A database with one task, one device and one run. */
typedef struct fixture {
    tess_records *r;
    tess_task task;
    tess_device dev;
    int64_t task_id, device_id, run_id;
    char task_key[TESS_KEY_MAX], device_key[TESS_KEY_MAX];
} fixture;

static tess_status fixture_open(fixture *f, const char *path, const char *strategy) {
    memset(f, 0, sizeof *f);
    f->task = test_task("heat3d", 64);
    f->dev = tess_test_h200("Test GPU");
    tess_task_key(&f->task, f->task_key, sizeof f->task_key);
    tess_device_key(&f->dev, f->device_key, sizeof f->device_key);
    tess_status st = tess_records_open(path, &f->r);
    if (!st) st = tess_records_put_device(f->r, &f->dev, &f->device_id);
    if (!st) st = tess_records_put_task(f->r, &f->task, "stencil", &f->task_id);
    if (!st) st = tess_records_begin_run(f->r, f->task_id, f->device_id, strategy, 42, 100, &f->run_id);
    return st;
}

typedef struct rows {
    tess_record_row *v;
    int n, cap;
} rows;

static int collect(const tess_record_row *row, void *user) {
    rows *rs = user;
    if (rs->n == rs->cap) {
        rs->cap = rs->cap ? 2 * rs->cap : 16;
        rs->v = realloc(rs->v, (size_t)rs->cap * sizeof *rs->v);
    }
    rs->v[rs->n++] = *row;
    return 0;
}

static rows all_rows(tess_records *r, const char *task_key, const char *device_key) {
    rows rs = {0};
    CHECK_OK(tess_records_foreach(r, task_key, device_key, collect, &rs));
    return rs;
}

static int stop_at_first(const tess_record_row *row, void *user) {
    (void)row;
    ++*(int *)user;
    return 1;
}

static int raw_int(const char *path, const char *sql) {
    sqlite3 *db;
    sqlite3_stmt *s;
    int v = -12345;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK) {
        if (sqlite3_step(s) == SQLITE_ROW) v = sqlite3_column_int(s, 0);
        sqlite3_finalize(s);
    }
    sqlite3_close(db);
    return v;
}

static void raw_text(const char *path, const char *sql, char *buf, size_t len) {
    sqlite3 *db;
    sqlite3_stmt *s;
    buf[0] = '\0';
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK) {
        if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
            snprintf(buf, len, "%s", (const char *)sqlite3_column_text(s, 0));
        sqlite3_finalize(s);
    }
    sqlite3_close(db);
}

static void test_default_path(void) {
    char buf[512];
    setenv("TESSERA_DB", "/data/x.db", 1);
    CHECK_OK(tess_records_default_path(buf, sizeof buf));
    CHECK(strcmp(buf, "/data/x.db") == 0);
    unsetenv("TESSERA_DB");
    setenv("XDG_DATA_HOME", "/xdg", 1);
    CHECK_OK(tess_records_default_path(buf, sizeof buf));
    CHECK(strcmp(buf, "/xdg/tessera/records.db") == 0);
    setenv("XDG_DATA_HOME", "relative", 1);
    setenv("HOME", "/home/u", 1);
    CHECK_OK(tess_records_default_path(buf, sizeof buf));
    CHECK(strcmp(buf, "/home/u/.local/share/tessera/records.db") == 0);
    unsetenv("XDG_DATA_HOME");
    CHECK_OK(tess_records_default_path(buf, sizeof buf));
    CHECK(strcmp(buf, "/home/u/.local/share/tessera/records.db") == 0);
    CHECK(tess_records_default_path(buf, 8) == TESS_ERR_ARG);
}

static void test_schema(void) {
    char path[512], text[64];
    scratch_path(path, sizeof path, "new/nested/records.db");
    tess_records *r;
    CHECK_OK(tess_records_open(path, &r));
    CHECK(r && strcmp(tess_records_path(r), path) == 0);
    tess_records_close(r);
    CHECK(access(path, F_OK) == 0);
    CHECK(raw_int(path, "PRAGMA user_version") == 4);
    raw_text(path, "SELECT value FROM meta WHERE name = 'application'", text, sizeof text);
    CHECK(strcmp(text, "tessera") == 0);
    raw_text(path, "PRAGMA journal_mode", text, sizeof text);
    CHECK(strcmp(text, "wal") == 0);
    CHECK(raw_int(path, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN"
                        " ('meta', 'devices', 'tasks', 'runs', 'results', 'best')") == 6);
    CHECK(raw_int(path, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN"
                        " ('results_by_task_device', 'results_identity', 'runs_by_task_device')") == 3);
    /* Reopening an existing database keeps it. */
    CHECK_OK(tess_records_open(path, &r));
    tess_records_close(r);
    CHECK(raw_int(path, "PRAGMA user_version") == 4);
}

static void test_round_trip(void) {
    char path[512], text[64];
    scratch_path(path, sizeof path, "roundtrip.db");
    fixture f;
    CHECK_OK(fixture_open(&f, path, "anneal"));
    tess_result res = make_result(TESS_RESULT_OK, 2.5);
    CHECK_OK(tess_records_put_result(f.r, f.run_id, "block_x=32,block_y=4,order=zyx", &res, "anneal"));
    CHECK_OK(tess_records_end_run(f.r, f.run_id, "budget", 1));

    rows rs = all_rows(f.r, NULL, NULL);
    CHECK(rs.n == 1);
    if (rs.n == 1) {
        const tess_record_row *w = &rs.v[0];
        CHECK(w->id > 0);
        CHECK(strcmp(w->task_key, "heat3d:f32:64x64x64") == 0);
        CHECK(strcmp(w->family, "stencil") == 0);
        CHECK(strcmp(w->device_key, f.device_key) == 0);
        CHECK(strcmp(w->config, "block_x=32,block_y=4,order=zyx") == 0);
        CHECK(w->status == TESS_RESULT_OK);
        CHECK(strcmp(w->message, "") == 0);
        CHECK(w->time_ms == 2.5 && w->min_ms == 0.9 * 2.5 && w->max_ms == 1.2 * 2.5);
        CHECK(w->spread == 0.05 && w->reps == 7);
        CHECK(w->gbps == 40.0 && w->gflops == 20.0 && w->compile_ms == 25.5);
        CHECK(w->metrics.registers == 32 && w->metrics.smem_static == 1024);
        CHECK(w->metrics.smem_dynamic == 2048 && w->metrics.local_bytes == 0);
        CHECK(w->metrics.occupancy == 0.75 && w->metrics.power_w == 310.5 && w->metrics.max_error == 2.5e-4);
        CHECK(strcmp(w->strategy, "anneal") == 0);
        /* 2025-01-31T12:00:00.123Z */
        CHECK(strlen(w->created_at) == 24 && w->created_at[10] == 'T' && w->created_at[19] == '.' &&
              w->created_at[23] == 'Z');
        tess_record_row best;
        CHECK_OK(tess_records_best(f.r, f.task_key, f.device_key, &best));
        CHECK(memcmp(&best, w, sizeof best) == 0);
    }
    free(rs.v);

    /* A result of an unknown run is refused and stores nothing. */
    CHECK(tess_records_put_result(f.r, f.run_id + 100, "block_x=1", &res, "anneal") == TESS_ERR_NOTFOUND);
    CHECK(tess_records_end_run(f.r, f.run_id + 100, "budget", 1) == TESS_ERR_NOTFOUND);
    int64_t run;
    CHECK(tess_records_begin_run(f.r, 999, f.device_id, "x", 1, 1, &run) == TESS_ERR_NOTFOUND);
    tess_records_close(f.r);

    CHECK(raw_int(path, "SELECT count(*) FROM results") == 1);
    CHECK(raw_int(path, "SELECT evaluations FROM runs") == 1);
    CHECK(raw_int(path, "SELECT seed FROM runs") == 42 && raw_int(path, "SELECT budget FROM runs") == 100);
    raw_text(path, "SELECT stop_reason FROM runs", text, sizeof text);
    CHECK(strcmp(text, "budget") == 0);
    CHECK(raw_int(path, "SELECT finished_at IS NOT NULL FROM runs") == 1);
}

static void test_best_and_queries(void) {
    char path[512];
    scratch_path(path, sizeof path, "best.db");
    fixture f;
    CHECK_OK(fixture_open(&f, path, "random"));
    static const struct {
        tess_outcome status;
        double ms;
        const char *config;
    } seq[] = {
        {TESS_RESULT_OK, 5.0, "b=1"},          {TESS_RESULT_COMPILE_ERROR, 0.1, "b=2"},
        {TESS_RESULT_OK, 3.0, "b=3"},          {TESS_RESULT_OK, 4.0, "b=4"},
        {TESS_RESULT_TIMEOUT, 0.5, "b=5"},     {TESS_RESULT_WRONG_RESULT, 1.0, "b=6"},
        {TESS_RESULT_OK, 3.0, "b=7"},  /* a tie keeps the earlier config */
    };
    tess_record_row best;
    CHECK(tess_records_best(f.r, f.task_key, f.device_key, &best) == TESS_ERR_NOTFOUND);
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
        tess_result res = make_result(seq[i].status, seq[i].ms);
        CHECK_OK(tess_records_put_result(f.r, f.run_id, seq[i].config, &res, "random"));
    }
    CHECK_OK(tess_records_best(f.r, f.task_key, f.device_key, &best));
    CHECK(best.time_ms == 3.0 && strcmp(best.config, "b=3") == 0);

    rows rs = all_rows(f.r, f.task_key, f.device_key);
    CHECK(rs.n == 7);
    for (int i = 0; i < rs.n; i++) {
        CHECK(strcmp(rs.v[i].config, seq[i].config) == 0);   /* oldest first */
        CHECK(rs.v[i].status == seq[i].status);
        if (seq[i].status != TESS_RESULT_OK) {
            CHECK(isinf(rs.v[i].time_ms));
            CHECK(strstr(rs.v[i].message, "failed: ") == rs.v[i].message);
        }
    }
    free(rs.v);

    /* A second task: filters and the per-task summary. */
    tess_task other = test_task("wave3d", 32);
    int64_t other_id, other_run;
    CHECK_OK(tess_records_put_task(f.r, &other, NULL, &other_id));
    CHECK(other_id != f.task_id);
    CHECK_OK(tess_records_begin_run(f.r, other_id, f.device_id, "random", 1, 10, &other_run));
    tess_result res = make_result(TESS_RESULT_RUNTIME_ERROR, 1.0);
    CHECK_OK(tess_records_put_result(f.r, other_run, "b=9", &res, "random"));
    rs = all_rows(f.r, "wave3d:f32:32x32x32", NULL);
    CHECK(rs.n == 1 && strcmp(rs.v[0].config, "b=9") == 0 && strcmp(rs.v[0].family, "") == 0);
    free(rs.v);
    rs = all_rows(f.r, NULL, f.device_key);
    CHECK(rs.n == 8);
    free(rs.v);
    rs = all_rows(f.r, NULL, "cpu:none:x86_64:1");
    CHECK(rs.n == 0);
    free(rs.v);
    int seen = 0;
    CHECK_OK(tess_records_foreach(f.r, NULL, NULL, stop_at_first, &seen));
    CHECK(seen == 1);
    CHECK(tess_records_best(f.r, "wave3d:f32:32x32x32", f.device_key, &best) == TESS_ERR_NOTFOUND);

    /* Re-putting a task keeps its id and family. */
    int64_t again;
    CHECK_OK(tess_records_put_task(f.r, &f.task, NULL, &again));
    CHECK(again == f.task_id);
    rs = all_rows(f.r, f.task_key, NULL);
    CHECK(rs.n == 7 && strcmp(rs.v[0].family, "stencil") == 0);
    free(rs.v);
    tess_records_close(f.r);
}

typedef struct summaries {
    tess_task_summary v[4];
    int n;
} summaries;

static int collect_summary(const tess_task_summary *s, void *user) {
    summaries *ss = user;
    if (ss->n < 4) ss->v[ss->n] = *s;
    ss->n++;
    return 0;
}

static void test_list(void) {
    char path[512];
    scratch_path(path, sizeof path, "best.db");   /* written by test_best_and_queries */
    tess_records *r;
    CHECK_OK(tess_records_open(path, &r));
    summaries ss = {0};
    CHECK_OK(tess_records_list(r, collect_summary, &ss));
    CHECK(ss.n == 2);
    if (ss.n == 2) {
        CHECK(strcmp(ss.v[0].task_key, "heat3d:f32:64x64x64") == 0);
        CHECK(ss.v[0].evaluations == 7 && ss.v[0].ok == 4);
        CHECK(ss.v[0].best_ms == 3.0 && strcmp(ss.v[0].best_config, "b=3") == 0);
        CHECK(strcmp(ss.v[1].task_key, "wave3d:f32:32x32x32") == 0);
        CHECK(ss.v[1].evaluations == 1 && ss.v[1].ok == 0);
        CHECK(isinf(ss.v[1].best_ms) && ss.v[1].best_config[0] == '\0');
    }
    tess_records_close(r);
}

/* Each child inserts results into a database that does not exist yet. */
enum { WRITERS = 2, PER_WRITER = 200 };

static double writer_time(int child, int i) { return 10.0 + ((i * 7919 + child * 31) % 1000) * 0.01; }

static int writer_child(const char *path, int child) {
    fixture f;
    char strategy[16], config[32];
    snprintf(strategy, sizeof strategy, "writer%d", child);
    tess_status st = fixture_open(&f, path, strategy);
    for (int i = 0; i < PER_WRITER && !st; i++) {
        /* Every tenth result fails, with a time smaller than any ok one. */
        tess_outcome status = i % 10 == 3 ? TESS_RESULT_RUNTIME_ERROR : TESS_RESULT_OK;
        tess_result res = make_result(status, status == TESS_RESULT_OK ? writer_time(child, i) : 0.5);
        snprintf(config, sizeof config, "child=%d,i=%d", child, i);
        st = tess_records_put_result(f.r, f.run_id, config, &res, strategy);
    }
    if (!st) st = tess_records_end_run(f.r, f.run_id, "budget", PER_WRITER);
    if (st) fprintf(stderr, "writer %d: %s\n", child, tess_errmsg());
    tess_records_close(f.r);
    return st ? 1 : 0;
}

static void test_concurrent_writers(void) {
    char path[512];
    scratch_path(path, sizeof path, "shared/concurrent.db");
    pid_t pids[WRITERS];
    for (int c = 0; c < WRITERS; c++) {
        pids[c] = fork();
        if (pids[c] == 0) _exit(writer_child(path, c));
        CHECK(pids[c] > 0);
    }
    for (int c = 0; c < WRITERS; c++) {
        int status = 0;
        CHECK(pids[c] > 0 && waitpid(pids[c], &status, 0) == pids[c]);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d status %d", c, status);
    }
    double expect_ms = INFINITY;
    char expect_config[32] = "";
    for (int c = 0; c < WRITERS; c++)
        for (int i = 0; i < PER_WRITER; i++)
            if (i % 10 != 3 && writer_time(c, i) < expect_ms) {
                expect_ms = writer_time(c, i);
                snprintf(expect_config, sizeof expect_config, "child=%d,i=%d", c, i);
            }
    fixture f;
    CHECK_OK(fixture_open(&f, path, "check"));
    rows rs = all_rows(f.r, NULL, NULL);
    CHECK_MSG(rs.n == WRITERS * PER_WRITER, "%d results", rs.n);
    int per_child[WRITERS] = {0};
    for (int i = 0; i < rs.n; i++)
        for (int c = 0; c < WRITERS; c++) {
            char name[16];
            snprintf(name, sizeof name, "writer%d", c);
            per_child[c] += strcmp(rs.v[i].strategy, name) == 0;
        }
    for (int c = 0; c < WRITERS; c++) CHECK(per_child[c] == PER_WRITER);
    free(rs.v);
    tess_record_row best;
    CHECK_OK(tess_records_best(f.r, f.task_key, f.device_key, &best));
    CHECK(best.time_ms == expect_ms && strcmp(best.config, expect_config) == 0);
    tess_records_close(f.r);
    CHECK(raw_int(path, "SELECT count(*) FROM devices") == 1);
    CHECK(raw_int(path, "SELECT count(*) FROM tasks") == 1);
}

/* A writer killed right after put_result returned loses nothing. */
static void test_killed_writer(void) {
    char path[512];
    scratch_path(path, sizeof path, "killed.db");
    pid_t pid = fork();
    if (pid == 0) {
        fixture f;
        tess_status st = fixture_open(&f, path, "random");
        for (int i = 0; i < 25 && !st; i++) {
            tess_result res = make_result(TESS_RESULT_OK, 1.0 + i);
            st = tess_records_put_result(f.r, f.run_id, "b=1", &res, "random");
        }
        if (st) _exit(1);
        raise(SIGKILL);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    tess_records *r;
    CHECK_OK(tess_records_open(path, &r));
    rows rs = all_rows(r, NULL, NULL);
    CHECK(rs.n == 25);
    free(rs.v);
    tess_records_close(r);
}

/* A database with two tasks, two devices, failures and calibrated ceilings. */
static void fill_for_export(const char *path) {
    fixture f;
    CHECK_OK(fixture_open(&f, path, "random"));
    double rates[TESS_CEILING_COUNT] = {[TESS_CEILING_COPY] = 4100.5, [TESS_CEILING_READ] = 4300,
                                        [TESS_CEILING_FMA_F32] = 61000.25, [TESS_CEILING_FMA_F64] = 30000,
                                        [TESS_CEILING_MMA_BF16] = 800000, [TESS_CEILING_MMA_F16] = 800000,
                                        [TESS_CEILING_MMA_FP8] = 1600000};
    CHECK_OK(tess_records_set_ceilings(f.r, &f.dev, rates));
    tess_result res = make_result(TESS_RESULT_OK, 1.75);
    res.metrics.power_w = -1;   /* unknown */
    CHECK_OK(tess_records_put_result(f.r, f.run_id, "block_x=32,block_y=4,order=zyx,f=0.5", &res, "random"));
    res = make_result(TESS_RESULT_COMPILE_ERROR, 0);
    snprintf(res.message, sizeof res.message, "error: \"x\" undefined\n  at line 3\ttab \\ done");
    CHECK_OK(tess_records_put_result(f.r, f.run_id, "block_x=64,block_y=4,order=xyz,f=1", &res, "random"));
    res = make_result(TESS_RESULT_OK, 1.5);
    CHECK_OK(tess_records_put_result(f.r, f.run_id, "block_x=128,block_y=2,order=zyx,f=1e-3", &res, "model"));

    tess_task other = test_task("wave3d", 16);
    tess_device cpu = tess_test_h200("Other CPU");
    strcpy(cpu.backend, "cpu");
    strcpy(cpu.arch, "x86_64");
    int64_t task_id, device_id, run_id;
    CHECK_OK(tess_records_put_task(f.r, &other, "stencil", &task_id));
    CHECK_OK(tess_records_put_device(f.r, &cpu, &device_id));
    CHECK_OK(tess_records_begin_run(f.r, task_id, device_id, "grid", 0, 5, &run_id));
    res = make_result(TESS_RESULT_OK, 0.25);
    CHECK_OK(tess_records_put_result(f.r, run_id, "threads=8", &res, "grid"));
    res = make_result(TESS_RESULT_TIMEOUT, 0);
    CHECK_OK(tess_records_put_result(f.r, run_id, "threads=16", &res, "grid"));
    tess_records_close(f.r);
}

static void check_same_rows(tess_records *a, tess_records *b) {
    rows ra = all_rows(a, NULL, NULL), rb = all_rows(b, NULL, NULL);
    CHECK(ra.n == rb.n && ra.n > 0);
    for (int i = 0; i < ra.n && i < rb.n; i++) {
        ra.v[i].id = rb.v[i].id = 0;
        CHECK_MSG(memcmp(&ra.v[i], &rb.v[i], sizeof ra.v[i]) == 0, "row %d differs (%s / %s)", i,
                  ra.v[i].config, rb.v[i].config);
    }
    free(ra.v);
    free(rb.v);
}

static void test_export_import(void) {
    char src_path[512], dst_path[512], jsonl[512];
    scratch_path(src_path, sizeof src_path, "export-src.db");
    scratch_path(dst_path, sizeof dst_path, "export-dst.db");
    scratch_path(jsonl, sizeof jsonl, "export.jsonl");
    fill_for_export(src_path);

    tess_records *src, *dst;
    CHECK_OK(tess_records_open(src_path, &src));
    FILE *out = fopen(jsonl, "w");
    int count = -1;
    CHECK_OK(tess_records_export_jsonl(src, out, NULL, NULL, &count));
    fclose(out);
    CHECK(count == 5);

    /* The first line carries the task, the whole device and typed params. */
    FILE *in = fopen(jsonl, "r");
    json_error_t err;
    json_t *line = json_loadf(in, JSON_DISABLE_EOF_CHECK, &err);
    fclose(in);
    CHECK(json_is_object(line));
    CHECK(strcmp(json_string_value(json_object_get(line, "task")), "heat3d:f32:64x64x64") == 0);
    CHECK(strcmp(json_string_value(json_object_get(line, "family")), "stencil") == 0);
    json_t *dev = json_object_get(line, "device"), *params = json_object_get(line, "params");
    CHECK(strcmp(json_string_value(json_object_get(dev, "key")), "cuda:Test GPU:sm_90:132") == 0);
    CHECK(json_integer_value(json_object_get(dev, "mem_bytes")) == 150000000000LL);
    CHECK(json_real_value(json_object_get(dev, "copy_gbps")) == 4100.5);
    CHECK(json_real_value(json_object_get(dev, "mma_fp8_gflops")) == 1600000);
    CHECK(json_is_string(json_object_get(dev, "read_gbps_at")));
    CHECK(json_is_integer(json_object_get(params, "block_x")) &&
          json_integer_value(json_object_get(params, "block_x")) == 32);
    CHECK(strcmp(json_string_value(json_object_get(params, "order")), "zyx") == 0);
    CHECK(json_real_value(json_object_get(params, "f")) == 0.5);
    CHECK(json_real_value(json_object_get(line, "time_ms")) == 1.75);
    CHECK(json_integer_value(json_object_get(json_object_get(line, "metrics"), "registers")) == 32);
    CHECK(strcmp(json_string_value(json_object_get(line, "status")), "ok") == 0);
    json_decref(line);

    int filtered = -1;
    out = fopen("/dev/null", "w");
    CHECK_OK(tess_records_export_jsonl(src, out, "wave3d:f32:16x16x16", NULL, &filtered));
    fclose(out);
    CHECK(filtered == 2);

    CHECK_OK(tess_records_open(dst_path, &dst));
    in = fopen(jsonl, "r");
    CHECK_OK(tess_records_import_jsonl(dst, in, "export.jsonl", &count));
    fclose(in);
    CHECK(count == 5);
    check_same_rows(src, dst);

    tess_record_row a, b;
    CHECK_OK(tess_records_best(src, "heat3d:f32:64x64x64", "cuda:Test GPU:sm_90:132", &a));
    CHECK_OK(tess_records_best(dst, "heat3d:f32:64x64x64", "cuda:Test GPU:sm_90:132", &b));
    CHECK(b.time_ms == 1.5 && strcmp(a.config, b.config) == 0);
    tess_device d = tess_test_h200("Test GPU");
    CHECK_OK(tess_records_load_ceilings(dst, &d));
    CHECK(d.ceiling[TESS_CEILING_COPY].value == 4100.5 && d.ceiling[TESS_CEILING_FMA_F32].value == 61000.25);
    CHECK(d.ceiling[TESS_CEILING_MMA_FP8].value == 1600000 && tess_device_calibrated(&d));

    /* A second import finds everything present. */
    in = fopen(jsonl, "r");
    CHECK_OK(tess_records_import_jsonl(dst, in, "export.jsonl", &count));
    fclose(in);
    CHECK(count == 0);
    rows rs = all_rows(dst, NULL, NULL);
    CHECK(rs.n == 5);
    free(rs.v);
    tess_records_close(dst);
    CHECK(raw_int(dst_path, "SELECT count(*) FROM results WHERE run_id IS NOT NULL") == 0);

    /* Text that is not UTF-8 still exports as valid JSON. */
    fixture f;
    tess_records_close(src);
    CHECK_OK(fixture_open(&f, src_path, "random"));
    tess_result res = make_result(TESS_RESULT_COMPILE_ERROR, 0);
    strcpy(res.message, "bad byte \xff here");
    CHECK_OK(tess_records_put_result(f.r, f.run_id, "b=1", &res, "random"));
    char *buf = NULL;
    size_t size = 0;
    out = open_memstream(&buf, &size);
    CHECK_OK(tess_records_export_jsonl(f.r, out, NULL, NULL, &count));
    fclose(out);
    CHECK(count == 6 && strstr(buf, "bad byte ? here") != NULL);
    free(buf);
    tess_records_close(f.r);
}

/* Writes the first n lines of the export file, then `last`. */
static void write_lines(const char *path, int n, const char *last) {
    char jsonl[512], *line = NULL;
    size_t cap = 0;
    scratch_path(jsonl, sizeof jsonl, "export.jsonl");
    FILE *in = fopen(jsonl, "r"), *out = fopen(path, "w");
    for (int i = 0; i < n && getline(&line, &cap, in) > 0; i++) fputs(line, out);
    fputs(last, out);
    free(line);
    fclose(in);
    fclose(out);
}

static void check_import_refused(const char *name, int good_lines, const char *bad_line,
                                 const char *expect_location, const char *expect_text) {
    char path[512], db_path[520];
    scratch_path(path, sizeof path, name);
    snprintf(db_path, sizeof db_path, "%s.db", path);
    write_lines(path, good_lines, bad_line);
    tess_records *r;
    CHECK_OK(tess_records_open(db_path, &r));
    FILE *in = fopen(path, "r");
    int count = -1;
    tess_status st = tess_records_import_jsonl(r, in, name, &count);
    fclose(in);
    CHECK(st == TESS_ERR_FORMAT);
    CHECK_MSG(strstr(tess_errmsg(), expect_location) == tess_errmsg(), "message: %s", tess_errmsg());
    CHECK_MSG(strstr(tess_errmsg(), expect_text) != NULL, "message: %s", tess_errmsg());
    CHECK(count == 0);
    rows rs = all_rows(r, NULL, NULL);
    CHECK(rs.n == 0);
    free(rs.v);
    tess_records_close(r);
    CHECK(raw_int(db_path, "SELECT count(*) FROM devices") == 0);
}

static void test_malformed_import(void) {
    /* Truncated JSON: the line and column are reported. */
    check_import_refused("truncated.jsonl", 2, "{\"task\": \"heat3d:f32:8x8x8\", \"config\": \n",
                         "truncated.jsonl:3:", "");
    int line = 0, column = 0;
    CHECK(sscanf(tess_errmsg(), "truncated.jsonl:%d:%d:", &line, &column) == 2);
    CHECK_MSG(line == 3 && column > 30, "message: %s", tess_errmsg());

    /* Well-formed JSON with wrong content, after blank lines. */
    check_import_refused("status.jsonl", 1,
                         "\n{\"task\": \"heat3d:f32:8x8x8\", \"config\": \"b=1\", \"status\": \"great\","
                         " \"created_at\": \"2025-01-01T00:00:00.000Z\", \"device\": {\"backend\": \"cpu\","
                         " \"name\": \"x\", \"arch\": \"x86_64\", \"units\": 4}}\n",
                         "status.jsonl:3:", "unknown result status 'great'");
    check_import_refused("device.jsonl", 0,
                         "{\"task\": \"heat3d:f32:8x8x8\", \"config\": \"b=1\", \"status\": \"ok\","
                         " \"time_ms\": 1, \"created_at\": \"2025-01-01T00:00:00.000Z\","
                         " \"device\": {\"backend\": \"cpu\", \"name\": \"x\", \"units\": 4}}\n",
                         "device.jsonl:1:", "missing \"arch\"");
    check_import_refused("type.jsonl", 1,
                         "{\"task\": \"heat3d:f32:8x8x8\", \"config\": \"b=1\", \"status\": \"ok\","
                         " \"time_ms\": \"fast\", \"created_at\": \"2025-01-01T00:00:00.000Z\","
                         " \"device\": {\"backend\": \"cpu\", \"name\": \"x\", \"arch\": \"a\", \"units\": 4}}\n",
                         "type.jsonl:2:", "\"time_ms\" must be a number");
    check_import_refused("array.jsonl", 1, "[1, 2]\n", "array.jsonl:2:", "expected a JSON object");
}

static void test_not_ours(void) {
    char path[512];
    scratch_path(path, sizeof path, "text.db");
    FILE *f = fopen(path, "w");
    for (int i = 0; i < 200; i++) fprintf(f, "just some text, line %d, not a database\n", i);
    fclose(f);
    tess_records *r = (tess_records *)1;
    CHECK(tess_records_open(path, &r) == TESS_ERR_DB);
    CHECK(r == NULL);
    CHECK_MSG(strstr(tess_errmsg(), path) && strstr(tess_errmsg(), "not a tessera records database") &&
              strstr(tess_errmsg(), "file is not a database") && !strchr(tess_errmsg(), '\n'),
              "message: %s", tess_errmsg());

    /* An SQLite database of someone else is refused and left as it was. */
    scratch_path(path, sizeof path, "foreign.db");
    sqlite3 *db;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, "CREATE TABLE notes(x TEXT); INSERT INTO notes VALUES ('hi')", NULL, NULL,
                       NULL) == SQLITE_OK);
    sqlite3_close(db);
    CHECK(tess_records_open(path, &r) == TESS_ERR_DB);
    CHECK_MSG(strstr(tess_errmsg(), path) && strstr(tess_errmsg(), "not a tessera records database"),
              "message: %s", tess_errmsg());
    char mode[16];
    raw_text(path, "PRAGMA journal_mode", mode, sizeof mode);
    CHECK(strcmp(mode, "delete") == 0);

    /* A tessera database from a newer schema. */
    scratch_path(path, sizeof path, "newer.db");
    CHECK_OK(tess_records_open(path, &r));
    tess_records_close(r);
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
    CHECK(tess_records_open(path, &r) == TESS_ERR_DB);
    CHECK_MSG(strstr(tess_errmsg(), "version 99"), "message: %s", tess_errmsg());
}

static void test_unwritable(void) {
    char file[512], path[600];
    scratch_path(file, sizeof file, "plain-file");
    FILE *f = fopen(file, "w");
    fputs("x\n", f);
    fclose(f);
    tess_records *r = (tess_records *)1;
    snprintf(path, sizeof path, "%s/sub/records.db", file);
    tess_status st = tess_records_open(path, &r);
    CHECK(st == TESS_ERR_IO && r == NULL);
    CHECK_MSG(strstr(tess_errmsg(), path) != NULL, "message: %s", tess_errmsg());

    /* A directory where the file should be. */
    scratch_path(path, sizeof path, "a-directory");
    CHECK(mkdir(path, 0755) == 0);
    st = tess_records_open(path, &r);
    CHECK(st == TESS_ERR_IO || st == TESS_ERR_DB);
    CHECK_MSG(strstr(tess_errmsg(), path) != NULL, "message: %s", tess_errmsg());

    if (geteuid() != 0) {   /* permissions do not stop root */
        scratch_path(path, sizeof path, "locked");
        CHECK(mkdir(path, 0500) == 0);
        strcat(path, "/records.db");
        st = tess_records_open(path, &r);
        CHECK(st == TESS_ERR_IO || st == TESS_ERR_DB);
        CHECK_MSG(strstr(tess_errmsg(), path) != NULL, "message: %s", tess_errmsg());
    }
}

/* A calibration: every rate i * 1000 + base (0 for the tensor cores when none). */
static void rates_of(double *rates, double base, bool tensor_cores) {
    for (int k = 0; k < TESS_CEILING_COUNT; k++)
        rates[k] = !tensor_cores && k >= TESS_CEILING_MMA_BF16 ? 0 : base + 1000.0 * k;
}

static void test_ceilings(void) {
    char path[512];
    scratch_path(path, sizeof path, "ceilings.db");
    tess_records *r;
    CHECK_OK(tess_records_open(path, &r));
    tess_device d = tess_test_h200("Ceiling GPU");
    int64_t id1, id2;
    CHECK_OK(tess_records_put_device(r, &d, &id1));
    CHECK_OK(tess_records_load_ceilings(r, &d));
    CHECK(!tess_device_calibrated(&d));
    for (int k = 0; k < TESS_CEILING_COUNT; k++) CHECK(!tess_ceiling_measured(&d.ceiling[k]));
    CHECK(raw_int(path, "SELECT copy_gbps_at IS NULL AND mma_fp8_gflops_at IS NULL FROM devices") == 1);

    double rates[TESS_CEILING_COUNT];
    rates_of(rates, 4000, true);
    CHECK_OK(tess_records_set_ceilings(r, &d, rates));
    CHECK(d.ceiling[TESS_CEILING_READ].value == 5000 && d.ceiling[TESS_CEILING_READ].calibrated_at[0]);
    tess_device loaded = tess_test_h200("Ceiling GPU");
    CHECK_OK(tess_records_load_ceilings(r, &loaded));
    CHECK(tess_device_calibrated(&loaded));
    for (int k = 0; k < TESS_CEILING_COUNT; k++)
        CHECK_MSG(loaded.ceiling[k].value == rates[k] &&
                  strcmp(loaded.ceiling[k].calibrated_at, d.ceiling[k].calibrated_at) == 0,
                  "%s: %g at %s", tess_ceiling_name((tess_ceiling_kind)k), loaded.ceiling[k].value,
                  loaded.ceiling[k].calibrated_at);
    CHECK(raw_int(path, "SELECT mma_fp8_gflops FROM devices") == 10000);

    /* Re-putting the device without ceilings keeps the stored ones; one
     * measured again replaces its own only. */
    tess_device fresh = tess_test_h200("Ceiling GPU");
    fresh.clock_mhz = 1755;
    CHECK_OK(tess_records_put_device(r, &fresh, &id2));
    CHECK(id1 == id2);
    CHECK_OK(tess_records_load_ceilings(r, &fresh));
    CHECK(fresh.ceiling[TESS_CEILING_COPY].value == 4000 && fresh.ceiling[TESS_CEILING_FMA_F64].value == 7000);
    memset(fresh.ceiling, 0, sizeof fresh.ceiling);
    fresh.ceiling[TESS_CEILING_COPY] = (tess_ceiling){4500, "2030-01-01T00:00:00.000Z"};
    CHECK_OK(tess_records_put_device(r, &fresh, NULL));
    tess_device check = tess_test_h200("Ceiling GPU");
    CHECK_OK(tess_records_load_ceilings(r, &check));
    CHECK(check.ceiling[TESS_CEILING_COPY].value == 4500 &&
          strcmp(check.ceiling[TESS_CEILING_COPY].calibrated_at, "2030-01-01T00:00:00.000Z") == 0);
    CHECK(check.ceiling[TESS_CEILING_FMA_F32].value == 6000 && check.ceiling[TESS_CEILING_MMA_FP8].value == 10000);
    CHECK(raw_int(path, "SELECT clock_mhz FROM devices") == 1755);

    /* Unknown devices: loading leaves d alone, setting creates the device.
     * A unit the device lacks is measured as 0: not present, calibrated. */
    tess_device other = tess_test_h200("Uncalibrated");
    other.ceiling[TESS_CEILING_COPY].value = 7;
    CHECK_OK(tess_records_load_ceilings(r, &other));
    CHECK(other.ceiling[TESS_CEILING_COPY].value == 7);
    rates_of(rates, 100, false);
    CHECK_OK(tess_records_set_ceilings(r, &other, rates));
    memset(other.ceiling, 0, sizeof other.ceiling);
    CHECK_OK(tess_records_load_ceilings(r, &other));
    CHECK(other.ceiling[TESS_CEILING_COPY].value == 100 && other.ceiling[TESS_CEILING_FMA_F64].value == 3100);
    CHECK(other.ceiling[TESS_CEILING_MMA_BF16].value == 0 && tess_ceiling_measured(&other.ceiling[TESS_CEILING_MMA_BF16]));
    CHECK(tess_device_calibrated(&other));
    rates[TESS_CEILING_READ] = -1;
    CHECK(tess_records_set_ceilings(r, &other, rates) == TESS_ERR_ARG);
    CHECK_MSG(strstr(tess_errmsg(), "read_gbps"), "message: %s", tess_errmsg());
    rates[TESS_CEILING_READ] = NAN;
    CHECK(tess_records_set_ceilings(r, &other, rates) == TESS_ERR_ARG);
    tess_records_close(r);
    CHECK(raw_int(path, "SELECT count(*) FROM devices") == 2);
}

/* Databases of earlier schema versions upgrade when opened: the fixture of
 * version 1, and the same made version 2 by that version's own step. The
 * calibration of version 2 becomes the copy and fp32 FMA ceilings, with
 * its time; the other ceilings are not measured yet. */
static void check_upgrade(int from) {
    char path[512], fixture_path[600], name[32];
    snprintf(fixture_path, sizeof fixture_path, "%s/tests/fixtures/records-v1.db", TESS_SOURCE_DIR);
    snprintf(name, sizeof name, "upgrade-v%d.db", from);
    scratch_path(path, sizeof path, name);
    FILE *in = fopen(fixture_path, "rb"), *out = fopen(path, "wb");
    CHECK_MSG(in && out, "copying %s", fixture_path);
    if (!in || !out) return;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
    fclose(in);
    fclose(out);
    char calibrated_at[64];
    raw_text(path, "SELECT calibrated_at FROM devices", calibrated_at, sizeof calibrated_at);
    if (from == 2) {
        sqlite3 *db;
        CHECK(sqlite3_open(path, &db) == SQLITE_OK);
        CHECK(sqlite3_exec(db,
                           "ALTER TABLE tasks ADD COLUMN extents TEXT NOT NULL DEFAULT '';"
                           "ALTER TABLE tasks ADD COLUMN attrs TEXT NOT NULL DEFAULT '';"
                           "PRAGMA user_version = 2", NULL, NULL, NULL) == SQLITE_OK);
        sqlite3_close(db);
    }
    CHECK(raw_int(path, "PRAGMA user_version") == from);
    tess_records *r;
    CHECK_OK(tess_records_open(path, &r));
    if (!r) return;
    CHECK(raw_int(path, "PRAGMA user_version") == 4);
    tess_device d = {0};
    strcpy(d.backend, "cpu");
    strcpy(d.name, "AMD EPYC");
    strcpy(d.arch, "x86_64");
    d.units = 2;
    CHECK_OK(tess_records_load_ceilings(r, &d));
    CHECK_MSG(fabs(d.ceiling[TESS_CEILING_COPY].value - 18.712724952715) < 1e-9, "copy %g",
              d.ceiling[TESS_CEILING_COPY].value);
    CHECK(fabs(d.ceiling[TESS_CEILING_FMA_F32].value - 214.957155511184) < 1e-9);
    CHECK(strcmp(d.ceiling[TESS_CEILING_COPY].calibrated_at, calibrated_at) == 0 &&
          strcmp(d.ceiling[TESS_CEILING_FMA_F32].calibrated_at, calibrated_at) == 0);
    CHECK(!tess_ceiling_measured(&d.ceiling[TESS_CEILING_READ]) && !tess_device_calibrated(&d));
    rows rs = all_rows(r, NULL, NULL);
    CHECK_MSG(rs.n == 14, "%d results", rs.n);
    /* results of before the error was measured say so */
    for (int i = 0; i < rs.n; i++) CHECK(rs.v[i].metrics.max_error == -1);
    free(rs.v);
    tess_record_row best;
    CHECK_OK(tess_records_best(r, "heat3d:f32:32x32x32", "cpu:AMD EPYC:x86_64:2", &best));
    /* A calibration after the upgrade stores every ceiling. */
    double rates[TESS_CEILING_COUNT];
    rates_of(rates, 10, false);
    CHECK_OK(tess_records_set_ceilings(r, &d, rates));
    tess_records_close(r);
    CHECK(raw_int(path, "SELECT read_gbps FROM devices") == 1010);
}

static void test_upgrade(void) {
    check_upgrade(1);
    check_upgrade(2);
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

int main(void) {
    snprintf(scratch, sizeof scratch, "%s/tess-records-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(scratch)) {
        perror("mkdtemp");
        return 1;
    }
    test_default_path();
    test_schema();
    test_round_trip();
    test_best_and_queries();
    test_list();
    test_concurrent_writers();
    test_killed_writer();
    test_export_import();
    test_malformed_import();
    test_not_ours();
    test_unwritable();
    test_ceilings();
    test_upgrade();
    int rc = check_finish("test_records");
    if (rc == 0) nftw(scratch, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return rc;
}
