/* test_warmstart.c - configs mapped between spaces that spell parameters
 * differently, and warm starts built from recorded tasks: distinct, the
 * more similar task first, nothing much slower than a source's best. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "core/records.h"
#include "core/op.h"
#include "core/result.h"
#include "transfer/builtin.h"
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
    CHECK_OK(tess_config_map(s, "block_x=16,zstream=on,chunk_z=16,items_x=2,min_blocks=0,store=plain", &c));
    CHECK_OK(tess_config_format(s, &c, text, sizeof text));
    CHECK_MSG(strcmp(text, "block_x=32,ppt_x=2,stream=1,chunk=16,staging=ldg,min_blocks=1") == 0, "%s", text);
    tess_space_destroy(s);

    /* the other way: 0/1 into on/off labels */
    tess_space *h = tess_space_create();
    static const char *const on_off[] = {"off", "on"};
    CHECK_OK(tess_space_add_labels(h, "zstream", 2, on_off, 0));
    CHECK_OK(tess_space_add(h, "chunk_z", 3, (const double[]){1, 8, 32}, 0));
    CHECK_OK(tess_config_map(h, "stream=1,chunk=16", &c));
    CHECK_OK(tess_config_format(h, &c, text, sizeof text));
    CHECK_MSG(strcmp(text, "zstream=on,chunk_z=8") == 0, "%s", text);
    tess_space_destroy(h);

    /* A parameter added later (optional, absent 1, default 3): a text recorded
     * before it means the absent value, not the default. */
    tess_space *o = spec_like();
    CHECK_OK(tess_space_add(o, "prefetch", 4, (const double[]){1, 2, 3, 4}, 2));
    CHECK_OK(tess_space_set_optional(o, "prefetch", 1));
    CHECK_OK(tess_config_map(o, "block_x=64,staging=shared", &c));
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

static void test_build(void) {
    char dir[] = "/tmp/tessera-warmstart-XXXXXX";
    if (!mkdtemp(dir)) return;
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
    /* the near task takes the first slots (64, 128, 32), then the far one's 256 */
    int want[] = {1, 2, 0, 3};
    CHECK_MSG(w.n == 4, "%d warm configs", w.n);
    for (int i = 0; i < w.n && i < 4; i++) CHECK_MSG(w.configs[i].v[0] == want[i], "config %d: %d", i, w.configs[i].v[0]);
    tess_warm_start_free(&w);
    tess_space_destroy(s);
    tess_records_close(db);
    const char *const files[] = {"records.db", "records.db-wal", "records.db-shm"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
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
    test_old_records();
    return check_finish("test_warmstart");
}
