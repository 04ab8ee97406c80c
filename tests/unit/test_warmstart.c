/* test_warmstart.c - configs mapped between spaces that spell parameters
 * differently, warm starts built from recorded tasks (distinct, the more
 * similar task first, nothing much slower than a source's best), and the
 * same source warm-starting `tune` and `bench transfer` alike. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "core/records.h"
#include "core/op.h"
#include "core/result.h"
#include "core/session.h"
#include "search/search.h"
#include "transfer/builtin.h"
#include "transfer/transfer_bench.h"
#include "transfer/warmstart.h"

/* Like the spaces generated from stencil specs: switches as 0/1. */
static tess_space *spec_like(void) {
    tess_space *s = tess_space_create();
    static const char *const staging[] = {"ldg", "shared"};
    CHECK_OK(tess_space_add(s, "block_x", 4, (const double[]){32, 64, 128, 256}, 0));
    CHECK_OK(tess_space_add(s, "ppt_x", 3, (const double[]){1, 2, 4}, 0));
    CHECK_OK(tess_space_add(s, "stream", 2, (const double[]){0, 1}, 0));
    CHECK_OK(tess_space_add_pow2(s, "chunk", 4, 64, 4));
    CHECK_OK(tess_space_add_labels(s, "staging", 2, staging, 0));
    CHECK_OK(tess_space_add(s, "min_blocks", 3, (const double[]){1, 2, 4}, 1));
    return s;
}

static void test_map(void) {
    tess_space *s = spec_like();
    tess_config c;
    char text[256];
    CHECK_OK(tess_config_map(s, "block_x=16,zstream=on,chunk_z=16,items_x=2,min_blocks=0,store=plain", &c, NULL));
    CHECK_OK(tess_config_format(s, &c, text, sizeof text));
    CHECK_MSG(strcmp(text, "block_x=32,ppt_x=2,stream=1,chunk=16,staging=ldg,min_blocks=1") == 0, "%s", text);
    /* exact: every value as written (synonyms and on/off for 0/1 included) */
    bool exact = false;
    CHECK_OK(tess_config_map(s, "block_x=64,items_x=2,zstream=on,chunk=16,staging=shared", &c, &exact));
    CHECK(exact);
    CHECK_OK(tess_config_map(s, "block_x=48,ppt_x=2", &c, &exact));   /* to 64, nearer in log */
    CHECK_MSG(!exact && c.v[0] == 1, "block_x=48 snapped to index %d, %s", c.v[0], exact ? "exact" : "not exact");
    CHECK_OK(tess_config_map(s, "block_x=64,staging=texture", &c, &exact));
    CHECK(!exact);
    tess_space_destroy(s);

    /* the other way: 0/1 into on/off labels */
    tess_space *h = tess_space_create();
    static const char *const on_off[] = {"off", "on"};
    CHECK_OK(tess_space_add_labels(h, "zstream", 2, on_off, 0));
    CHECK_OK(tess_space_add(h, "chunk_z", 3, (const double[]){1, 8, 32}, 0));
    CHECK_OK(tess_config_map(h, "stream=1,chunk=16", &c, NULL));
    CHECK_OK(tess_config_format(h, &c, text, sizeof text));
    CHECK_MSG(strcmp(text, "zstream=on,chunk_z=8") == 0, "%s", text);
    tess_space_destroy(h);

    /* A parameter added later (optional, absent 1, default 3): a text recorded
     * before it means the absent value, not the default. */
    tess_space *o = spec_like();
    CHECK_OK(tess_space_add(o, "prefetch", 4, (const double[]){1, 2, 3, 4}, 2));
    CHECK_OK(tess_space_set_optional(o, "prefetch", 1));
    CHECK_OK(tess_config_map(o, "block_x=64,staging=shared", &c, NULL));
    CHECK_OK(tess_config_format(o, &c, text, sizeof text));
    CHECK_MSG(strcmp(text, "block_x=64,ppt_x=1,stream=0,chunk=4,staging=shared,min_blocks=2,prefetch=1") == 0, "%s",
              text);
    tess_space_destroy(o);
}

/* Records results of heat3d on `shape` ("block_x=V" configs with times). */
static void put_task(tess_records *db, const tess_device *dev, const int64_t *shape, const int *bx,
                     const double *ms, int n) {
    tess_task t;
    CHECK_OK(tess_task_init(&t, "heat3d", TESS_F32, shape, 3));
    int64_t dev_id, task_id, run_id;
    CHECK_OK(tess_records_put_device(db, dev, &dev_id));
    CHECK_OK(tess_records_put_task(db, &t, "stencils", &task_id));
    CHECK_OK(tess_records_begin_run(db, task_id, dev_id, "random", 1, n, &run_id));
    for (int i = 0; i < n; i++) {
        tess_result r;
        tess_result_init(&r, NULL);
        r.status = TESS_RESULT_OK;
        r.time_ms = ms[i];
        char config[64];
        snprintf(config, sizeof config, "block_x=%d", bx[i]);
        CHECK_OK(tess_records_put_result(db, run_id, config, &r, "random"));
    }
}

/* A scratch folder for a records database and recordings. */
static bool scratch(char *dir) {
    strcpy(dir, "/tmp/tessera-warmstart-XXXXXX");
    return mkdtemp(dir) != NULL;
}

static void scratch_remove(const char *dir, const char *const *files, int n) {
    char path[256];
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
}

static const char *const db_files[] = {"records.db", "records.db-wal", "records.db-shm", "source.jsonl",
                                       "target.jsonl"};

static void test_build(void) {
    char dir[64];
    if (!scratch(dir)) return;
    char path[256];
    snprintf(path, sizeof path, "%s/records.db", dir);
    tess_records *db;
    CHECK_OK(tess_records_open(path, &db));
    tess_device dev = {.backend = "cpu", .name = "test", .arch = "x86_64", .units = 4};
    char dev_key[TESS_KEY_MAX];
    CHECK_OK(tess_device_key(&dev, dev_key, sizeof dev_key));
    /* near: 256^3; far: 128^3. Near's 64 is recorded twice; its 256 is too slow to be a warm start. */
    put_task(db, &dev, (const int64_t[]){256, 256, 256}, (const int[]){64, 64, 128, 32, 256},
             (const double[]){1.0, 1.01, 1.02, 1.1, 2.0}, 5);
    put_task(db, &dev, (const int64_t[]){128, 128, 128}, (const int[]){256, 32}, (const double[]){0.1, 0.105}, 2);

    tess_space *s = tess_space_create();
    CHECK_OK(tess_space_add(s, "block_x", 4, (const double[]){32, 64, 128, 256}, 0));
    tess_task target;
    CHECK_OK(tess_task_init(&target, "heat3d", TESS_F32, (const int64_t[]){320, 320, 320}, 3));
    tess_task_profile p;
    tess_task_profile_init(&p, &target, tess_op_find("heat3d"), &dev, dev_key);
    tess_warm_start w;
    CHECK_OK(tess_warm_start_build(db, &p, s, 4, 2, &w));
    CHECK(w.nsources == 2 && w.sources[0].similarity > w.sources[1].similarity);
    CHECK(w.nsources == 2 && strcmp(w.sources[0].task_key, "heat3d:f32:256x256x256") == 0);
    /* slots in proportion to similarity (near 0.97, far 0.62): the near task's
     * 64, the far one's 256, the near task's 128, the far one's 32 */
    int want[] = {1, 3, 2, 0};
    CHECK_MSG(w.n == 4, "%d warm configs", w.n);
    for (int i = 0; i < w.n && i < 4; i++) CHECK_MSG(w.configs[i].v[0] == want[i], "config %d: %d", i, w.configs[i].v[0]);
    /* one prior per config, the most similar source's fastest: 64 (1.0, not
     * 1.01), 128, 32 and 256 of the near task; the far task's two configs
     * are held already */
    const int prior_bx[] = {1, 2, 0, 3};
    const double prior_ms[] = {1.0, 1.02, 1.1, 2.0};
    CHECK_MSG(w.npriors == 4, "%d priors", w.npriors);
    for (int i = 0; i < w.npriors && i < 4; i++)
        CHECK_MSG(w.priors[i].config.v[0] == prior_bx[i] && fabs(w.priors[i].rel_log_time - log(prior_ms[i])) < 1e-12,
                  "prior %d: block_x index %d, %g", i, w.priors[i].config.v[0], w.priors[i].rel_log_time);
    tess_warm_start_free(&w);
    tess_space_destroy(s);
    tess_records_close(db);
    scratch_remove(dir, db_files, 3);
}

/* A source's result for the target's default becomes a prior however slow,
 * beside its fastest rows. */
static void test_default_prior(void) {
    tess_space *s = tess_space_create();
    CHECK_OK(tess_space_add(s, "block_x", 4, (const double[]){32, 64, 128, 256}, 2));   /* default 128 */
    tess_record_row *rows = calloc(3, sizeof *rows);
    CHECK(rows != NULL);
    if (!rows) return;
    const char *configs[] = {"block_x=64", "block_x=256", "block_x=128"};
    const double ms[] = {1.0, 1.1, 3.0};
    for (int i = 0; i < 3; i++) {
        snprintf(rows[i].config, sizeof rows[i].config, "%s", configs[i]);
        rows[i].status = TESS_RESULT_OK;
        rows[i].time_ms = ms[i];
    }
    tess_config dflt;
    tess_space_default(s, &dflt);
    CHECK(!tess_warm_row_measures(s, &rows[0], &dflt) && tess_warm_row_measures(s, &rows[2], &dflt));
    tess_warm_input in = {.source = {.similarity = 1}, .rows = rows, .n = 2, .dflt = &rows[2]};
    tess_warm_start w;
    CHECK_OK(tess_warm_start_from(s, &in, 1, 2, &w));
    CHECK_MSG(w.n == 2 && w.npriors == 3, "%d configs, %d priors", w.n, w.npriors);
    if (w.npriors == 3)
        CHECK(tess_config_equal(&w.priors[2].config, &dflt) && fabs(w.priors[2].rel_log_time - log(3.0)) < 1e-12);
    CHECK(tess_warm_first(&dflt, w.priors, w.npriors, 8) == 0);   /* 3x the source's best: its best first */
    tess_warm_start_free(&w);
    free(rows);
    tess_space_destroy(s);
}

/* ---- tune and bench transfer warm-start alike ------------------------------ */

/* The source's measurements: block_x and items_x (the target spells it
 * ppt_x), fastest at block_x=128, items_x=2; only two configs within
 * TESS_WARM_MAX_SLOWDOWN of it. */
#define NSOURCE 9
static const int source_bx[NSOURCE] = {32, 64, 128, 256, 64, 128, 256, 32, 128};
static const int source_items[NSOURCE] = {1, 1, 1, 1, 2, 2, 2, 4, 4};
static const double source_ms[NSOURCE] = {2.0, 1.3, 1.35, 1.6, 1.05, 1.0, 1.4, 2.5, 1.5};

static void write_lines(const char *path, const char *task, const char *names[2], const int *a, const int *b,
                        const double *ms, int n, int dflt) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    for (int i = 0; i < n; i++)
        fprintf(f, "{\"task\": \"%s\", \"params\": {\"%s\": %d, \"%s\": %d}, \"status\": \"ok\", "
                   "\"time_ms\": %.6g, \"strategy\": \"%s\"}\n",
                task, names[0], a[i], names[1], b[i], ms[i], i == dflt ? "default" : "random");
    fclose(f);
}

/* The target: every block_x x ppt_x, the default block_x=64, ppt_x=1 (its
 * line 0), the optimum at block_x=256, ppt_x=4 where no warm start points. */
static void write_target(const char *path) {
    int bx[16], ppt[16], n = 0;
    double ms[16];
    const int bxs[] = {64, 32, 128, 256}, ppts[] = {1, 2, 4};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++, n++) {
            bx[n] = bxs[i], ppt[n] = ppts[j];
            ms[n] = 2.0 - 0.1 * i - 0.05 * j + 0.01 * n;
        }
    ms[n - 1] = 0.5;
    const char *names[2] = {"block_x", "ppt_x"};
    write_lines(path, "heat3d:f32:96x96x96", names, bx, ppt, ms, n, 0);
}

typedef struct trace {
    tess_config c[32];
    int n;
} trace;

static void keep(const tess_result *r, void *user) {
    trace *t = user;
    if (t->n < 32) t->c[t->n++] = r->config;
}

typedef struct rows {
    const tess_space *space;
    trace t;
    char origin[32][32];
} rows;

static int keep_row(const tess_record_row *row, void *user) {
    rows *r = user;
    if (r->t.n == 32) return 1;
    snprintf(r->origin[r->t.n], sizeof r->origin[0], "%s", row->strategy);
    CHECK_OK(tess_config_parse(r->space, row->config, &r->t.c[r->t.n]));
    r->t.n++;
    return 0;
}

/* The same source measurements, read from the records (as `tune` reads
 * them) and from a replayed recording (as `bench transfer` does), give the
 * same warm-start configs and priors, and the tuning session and the
 * benchmark's warm run evaluate the same configs first: the default, the
 * warm start in order, then the same strategy proposals. */
static void test_tune_and_bench_alike(void) {
    char dir[64];
    if (!scratch(dir)) return;
    char db_path[256], source_path[256], target_path[256];
    snprintf(db_path, sizeof db_path, "%s/records.db", dir);
    snprintf(source_path, sizeof source_path, "%s/source.jsonl", dir);
    snprintf(target_path, sizeof target_path, "%s/target.jsonl", dir);
    const char *source_names[2] = {"block_x", "items_x"};
    write_lines(source_path, "heat3d:f32:64x64x64", source_names, source_bx, source_items, source_ms, NSOURCE, -1);
    write_target(target_path);
    tess_bench_space src = {0}, dst = {0};
    CHECK_OK(tess_bench_space_open(source_path, &src));
    CHECK_OK(tess_bench_space_open(target_path, &dst));
    tess_records *db = NULL;
    CHECK_OK(tess_records_open(db_path, &db));
    if (!src.ev || !dst.ev || !db) goto out;

    /* the records hold the source's measurements as tuning left them */
    tess_device dev = {.backend = "cpu", .name = "test", .arch = "x86_64", .units = 4};
    char dev_key[TESS_KEY_MAX];
    CHECK_OK(tess_device_key(&dev, dev_key, sizeof dev_key));
    tess_task source_task;
    CHECK_OK(tess_task_parse_key("heat3d:f32:64x64x64", &source_task));
    int64_t dev_id, task_id, run_id;
    CHECK_OK(tess_records_put_device(db, &dev, &dev_id));
    CHECK_OK(tess_records_put_task(db, &source_task, "stencils", &task_id));
    CHECK_OK(tess_records_begin_run(db, task_id, dev_id, "random", 1, NSOURCE, &run_id));
    for (int i = 0; i < NSOURCE; i++) {
        tess_result r;
        tess_result_init(&r, NULL);
        r.status = TESS_RESULT_OK;
        r.time_ms = source_ms[i];
        char config[64];
        snprintf(config, sizeof config, "block_x=%d,items_x=%d", source_bx[i], source_items[i]);
        CHECK_OK(tess_records_put_result(db, run_id, config, &r, "random"));
    }
    tess_warm_start from_records = {0}, from_replay = {0};
    tess_task_profile target;
    tess_task_profile_init(&target, tess_replay_task(dst.replay), tess_op_find("heat3d"), &dev, dev_key);
    CHECK_OK(tess_warm_start_build(db, &target, dst.space, 1, 3, &from_records));
    CHECK_OK(tess_transfer_bench_warm(&src, dst.space, 3, &from_replay));
    CHECK_MSG(from_records.n == 2 && from_replay.n == 2, "%d and %d warm configs", from_records.n, from_replay.n);
    for (int i = 0; i < from_records.n && i < from_replay.n; i++)
        CHECK_MSG(tess_config_equal(&from_records.configs[i], &from_replay.configs[i]), "warm config %d differs",
                  i);
    /* priors: the same configs and relative times (weights are each source's similarity) */
    CHECK_MSG(from_records.npriors == NSOURCE && from_replay.npriors == NSOURCE, "%d and %d priors",
              from_records.npriors, from_replay.npriors);
    for (int i = 0; i < from_records.npriors && i < from_replay.npriors; i++) {
        CHECK(tess_config_equal(&from_records.priors[i].config, &from_replay.priors[i].config));
        CHECK_NEAR(from_records.priors[i].rel_log_time, from_replay.priors[i].rel_log_time, 1e-12);
    }
    CHECK_NEAR(from_replay.priors[0].weight, 1.0, 0);
    CHECK_NEAR(from_records.priors[0].weight, from_records.sources[0].similarity, 0);

    /* the benchmark's warm run, and a tuning session on the same evaluator */
    trace bench = {.n = 0};
    double evals[2];
    CHECK_OK(tess_transfer_bench_run(tess_strategy_find("agent"), &dst, &from_replay, TESS_TRANSFER_WARM, 1, 12,
                                     keep, &bench, evals));
    tess_tune_options opt = tess_tune_options_default();
    opt.strategy = "agent";
    opt.budget = 12;
    opt.seed = 1;
    opt.batch = 8;   /* the transfer benchmark's */
    tess_session session = {.db = db, .task = *tess_replay_task(dst.replay), .device = dst.ev->device};
    tess_tune_report report;
    CHECK_OK(tess_session_search(&session, dst.space, dst.ev, &from_records, &opt, &report));
    CHECK(report.warm_configs == 2 && strstr(report.transfer_from, "heat3d:f32:64x64x64") != NULL);
    char task_key[TESS_KEY_MAX], target_dev[TESS_KEY_MAX];
    CHECK_OK(tess_task_key(&session.task, task_key, sizeof task_key));
    CHECK_OK(tess_device_key(&session.device, target_dev, sizeof target_dev));
    rows tuned = {.space = dst.space};
    CHECK_OK(tess_records_foreach(db, task_key, target_dev, keep_row, &tuned));
    /* the benchmark stops at the optimum; tuning spends its budget */
    CHECK_MSG(tuned.t.n == 12 && bench.n >= 5 && bench.n <= 12, "%d tuned, %d benchmarked", tuned.t.n, bench.n);
    tess_config dflt;
    tess_space_default(dst.space, &dflt);
    CHECK(tess_config_equal(&bench.c[0], &dflt) && strcmp(tuned.origin[0], "default") == 0);
    /* each warm config once, whoever reached it first (here the local search
     * around the default: the space is small); tess_warm_plan's order is
     * test_search's */
    for (int k = 1; k <= 2; k++) {
        char label[32];
        snprintf(label, sizeof label, "transfer:%d", k);
        int times = 0;
        for (int i = 0; i < tuned.t.n; i++) times += strcmp(tuned.origin[i], label) == 0;
        CHECK_MSG(times == 1, "%s evaluated %d times", label, times);
    }
    for (int i = 0; i < bench.n && i < tuned.t.n; i++)
        CHECK_MSG(tess_config_equal(&bench.c[i], &tuned.t.c[i]), "evaluation %d differs", i + 1);
    tess_warm_start_free(&from_records);
    tess_warm_start_free(&from_replay);
out:
    tess_records_close(db);
    tess_bench_space_close(&src);
    tess_bench_space_close(&dst);
    scratch_remove(dir, db_files, 5);
}

/* A database written before tasks had named extents (schema version 1)
 * opens, is upgraded, lists its tasks and warm-starts a new shape. */
static void test_old_records(void) {
    char dir[] = "/tmp/tessera-warmstart-XXXXXX", path[256], cmd[1024];
    if (!mkdtemp(dir)) return;
    snprintf(path, sizeof path, "%s/records.db", dir);
    snprintf(cmd, sizeof cmd, "cp '%s/tests/fixtures/records-v1.db' '%s'", TESS_SOURCE_DIR, path);
    CHECK(system(cmd) == 0);
    tess_records *db = NULL;
    CHECK_OK(tess_records_open(path, &db));
    if (!db) return;
    tess_record_row best;
    CHECK_OK(tess_records_best(db, "heat3d:f32:32x32x32", "cpu:AMD EPYC:x86_64:2", &best));
    CHECK(best.time_ms > 0 && strstr(best.config, "tile_y=") != NULL);
    CHECK_OK(tess_records_best(db, "sum:f32:100000", "cpu:AMD EPYC:x86_64:2", &best));
    /* the same task as the old key names it, made from today's operator */
    const tess_op *heat = tess_op_find("heat3d");
    tess_task t;
    CHECK_OK(tess_op_make_task(heat, TESS_F32, TESS_F32, TESS_F32, (const int64_t[]){32, 32, 40}, 3, NULL, &t));
    tess_device dev = {.backend = "cpu", .name = "AMD EPYC", .arch = "x86_64", .units = 2};
    char dev_key[TESS_KEY_MAX];
    CHECK_OK(tess_device_key(&dev, dev_key, sizeof dev_key));
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(heat, &t, &dev, &s));
    tess_task_profile p;
    tess_task_profile_init(&p, &t, heat, &dev, dev_key);
    tess_warm_start w;
    CHECK_OK(tess_warm_start_build(db, &p, s, 4, 3, &w));
    CHECK_MSG(w.nsources >= 1 && strcmp(w.sources[0].task_key, "heat3d:f32:32x32x32") == 0, "%d sources: %s",
              w.nsources, w.nsources ? w.sources[0].task_key : "");
    CHECK(w.n >= 1);
    tess_warm_start_free(&w);
    tess_space_destroy(s);
    tess_records_close(db);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

int main(void) {
    CHECK_OK(tess_register_builtin());
    test_map();
    test_build();
    test_default_prior();
    test_tune_and_bench_alike();
    test_old_records();
    return check_finish("test_warmstart");
}
