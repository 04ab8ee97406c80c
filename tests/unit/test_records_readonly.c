/* test_records_readonly.c - reading a records database without writing it:
 * nothing is created at a missing path, a reader leaves no file behind,
 * a read-only file in a read-only directory can be read, a reader sees
 * the commits of a tuner writing at the same time, and a database being
 * created is never seen half made. */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"
#include "error.h"
#include "h200.h"
#include "records.h"

static char scratch[256];

/* A writer holding one task, one device and one run. */
typedef struct writer {
    tess_records *r;
    tess_task task;
    tess_device dev;
    int64_t run_id;
    char task_key[TESS_KEY_MAX], device_key[TESS_KEY_MAX];
} writer;

static void writer_open(writer *w, const char *path) {
    memset(w, 0, sizeof *w);
    int64_t shape[3] = {32, 32, 32}, task_id, device_id;
    tess_task_init(&w->task, "heat3d", TESS_F32, shape, 3);
    w->dev = tess_test_h200("Read-only GPU");
    tess_task_key(&w->task, w->task_key, sizeof w->task_key);
    tess_device_key(&w->dev, w->device_key, sizeof w->device_key);
    CHECK_OK(tess_records_open(path, &w->r));
    CHECK_OK(tess_records_put_device(w->r, &w->dev, &device_id));
    CHECK_OK(tess_records_put_task(w->r, &w->task, "stencil", &task_id));
    CHECK_OK(tess_records_begin_run(w->r, task_id, device_id, "random", 1, 10, &w->run_id));
}

static void writer_put(writer *w, const char *config, double ms) {
    tess_result res;
    memset(&res, 0, sizeof res);
    res.status = TESS_RESULT_OK;
    res.time_ms = res.min_ms = res.max_ms = ms;
    res.reps = 5;
    CHECK_OK(tess_records_put_result(w->r, w->run_id, config, &res, "random"));
}

/* A database at path with one result of `ms`, its writer closed. */
static void make_db(const char *path, double ms) {
    writer w;
    writer_open(&w, path);
    writer_put(&w, "tile_x=32", ms);
    tess_records_close(w.r);
}

static bool exists(const char *path, const char *suffix) {
    char p[600];
    snprintf(p, sizeof p, "%s%s", path, suffix);
    return access(p, F_OK) == 0;
}

/* The best time of the fixture's task read through a read-only connection, or -1. */
static double best_ms(tess_records *r) {
    tess_record_row row;
    int64_t shape[3] = {32, 32, 32};
    tess_task t;
    tess_device d = tess_test_h200("Read-only GPU");
    char task_key[TESS_KEY_MAX], device_key[TESS_KEY_MAX];
    tess_task_init(&t, "heat3d", TESS_F32, shape, 3);
    tess_task_key(&t, task_key, sizeof task_key);
    tess_device_key(&d, device_key, sizeof device_key);
    return tess_records_best(r, task_key, device_key, &row) == TESS_OK ? row.time_ms : -1;
}

static void test_missing(void) {
    char path[600], dir[512];
    snprintf(dir, sizeof dir, "%s/not-there", scratch);
    snprintf(path, sizeof path, "%s/records.db", dir);
    tess_records *r = (tess_records *)1;
    CHECK(tess_records_open_readonly(path, &r) == TESS_ERR_NOTFOUND);
    CHECK(r == NULL);
    CHECK_MSG(strstr(tess_errmsg(), path) != NULL, "message: %s", tess_errmsg());
    CHECK(access(dir, F_OK) != 0);
    /* a directory is no database, and an empty file is not ours */
    CHECK(tess_records_open_readonly(scratch, &r) == TESS_ERR_IO);
    snprintf(path, sizeof path, "%s/empty.db", scratch);
    fclose(fopen(path, "w"));
    CHECK(tess_records_open_readonly(path, &r) == TESS_ERR_DB);
    CHECK_MSG(strstr(tess_errmsg(), "empty"), "message: %s", tess_errmsg());
}

/* Reading a database this process may write leaves nothing behind and
 * changes nothing; writes through the connection are refused. */
static void test_reader_leaves_nothing(void) {
    char path[512];
    snprintf(path, sizeof path, "%s/own.db", scratch);
    make_db(path, 2.5);
    struct stat before, after;
    CHECK(stat(path, &before) == 0);
    CHECK(!exists(path, "-wal") && !exists(path, "-shm"));
    tess_records *r;
    CHECK_OK(tess_records_open_readonly(path, &r));
    CHECK(tess_records_readonly(r));
    CHECK(best_ms(r) == 2.5);
    tess_device d = tess_test_h200("Another GPU");
    CHECK(tess_records_put_device(r, &d, NULL) == TESS_ERR_DB);
    CHECK_MSG(strstr(tess_errmsg(), "readonly") || strstr(tess_errmsg(), "read-only"), "message: %s",
              tess_errmsg());
    tess_records_close(r);
    CHECK(!exists(path, "-wal") && !exists(path, "-shm"));
    CHECK(stat(path, &after) == 0);
    CHECK(after.st_size == before.st_size && after.st_mtime == before.st_mtime);
}

/* A reader opened while a tuner writes sees every commit, the later ones included. */
static void test_concurrent_writer(void) {
    char path[512];
    snprintf(path, sizeof path, "%s/shared.db", scratch);
    writer w;
    writer_open(&w, path);
    writer_put(&w, "tile_x=8", 4.0);
    tess_records *r;
    CHECK_OK(tess_records_open_readonly(path, &r));
    CHECK(best_ms(r) == 4.0);
    writer_put(&w, "tile_x=16", 3.0);
    CHECK(best_ms(r) == 3.0);
    tess_records_close(r);
    tess_records_close(w.r);
}

/* Runs as a user who may not write the files (nobody, when the tests run as
 * root); returns the number of failed checks. */
static int unprivileged_reads(const char *locked_dir, const char *file_444, const char *live) {
    tess_records *r;
    char path[600];
    /* a read-only file in a writable directory, and a file in a read-only directory */
    CHECK_OK(tess_records_open_readonly(file_444, &r));
    if (r) {
        CHECK(best_ms(r) == 1.5);
        tess_records_close(r);
    }
    CHECK(!exists(file_444, "-wal") && !exists(file_444, "-shm"));
    snprintf(path, sizeof path, "%s/lib.db", locked_dir);
    CHECK_OK(tess_records_open_readonly(path, &r));
    if (r) {
        CHECK(best_ms(r) == 1.25);
        tess_records_close(r);
    }
    /* opening for writing falls back to reading */
    CHECK_OK(tess_records_open(path, &r));
    if (r) {
        CHECK(tess_records_readonly(r) && best_ms(r) == 1.25);
        tess_records_close(r);
    }
    CHECK(!exists(path, "-wal") && !exists(path, "-shm"));
    /* a database a tuner has open, in a directory this user cannot write */
    CHECK_OK(tess_records_open_readonly(live, &r));
    if (r) {
        CHECK(best_ms(r) == 0.75);
        tess_records_close(r);
    }
    return check_failures_;
}

static void test_unwritable(void) {
    char open_dir[512], locked_dir[512], file_444[600], lib[600], live_dir[512], live[600];
    snprintf(open_dir, sizeof open_dir, "%s/open", scratch);
    snprintf(locked_dir, sizeof locked_dir, "%s/locked", scratch);
    snprintf(live_dir, sizeof live_dir, "%s/live", scratch);
    snprintf(file_444, sizeof file_444, "%s/lib.db", open_dir);
    snprintf(lib, sizeof lib, "%s/lib.db", locked_dir);
    snprintf(live, sizeof live, "%s/lib.db", live_dir);
    make_db(file_444, 1.5);
    make_db(lib, 1.25);
    writer w;
    writer_open(&w, live);
    writer_put(&w, "tile_x=4", 0.75);
    CHECK(chmod(scratch, 0755) == 0 && chmod(open_dir, 0777) == 0 && chmod(file_444, 0444) == 0);
    CHECK(chmod(locked_dir, 0555) == 0 && chmod(live_dir, 0555) == 0);
    bool root = geteuid() == 0;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (root && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(77);
        _exit(unprivileged_reads(locked_dir, file_444, live) ? 1 : 0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
        printf("cannot become an unprivileged user: read-only files not tested\n");
    else
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the unprivileged reader failed (status %d)",
                  status);
    tess_records_close(w.r);
    chmod(locked_dir, 0755);
    chmod(live_dir, 0755);
}

static int count_row(const tess_record_row *row, void *user) {
    (void)row;
    ++*(int *)user;
    return 0;
}

/* Readers polling a path while a writer creates the database there find
 * no file or a complete one, never an empty one; two writers creating it at
 * once share one file holding both their results. */
static void test_concurrent_create(void) {
    for (int round = 0; round < 20; round++) {
        char path[600];
        snprintf(path, sizeof path, "%s/race-%d.db", scratch, round);
        fflush(NULL);
        pid_t reader = fork();
        if (reader == 0) {
            double deadline = tess_now() + 5.0;
            while (tess_now() < deadline) {
                tess_records *r;
                tess_status st = tess_records_open_readonly(path, &r);
                if (st == TESS_OK) {
                    tess_records_close(r);
                    _exit(0);
                }
                if (st != TESS_ERR_NOTFOUND) {
                    fprintf(stderr, "reader: %s\n", tess_errmsg());
                    _exit(1);
                }
            }
            _exit(2);
        }
        pid_t other = fork();
        if (other == 0) {
            writer w;
            writer_open(&w, path);
            writer_put(&w, "tile_x=8", 2.0);
            tess_records_close(w.r);
            _exit(check_finish("concurrent writer"));
        }
        make_db(path, 1.0);
        int status = 0;
        CHECK(waitpid(reader, &status, 0) == reader);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "round %d: the reader failed (status %d)",
                  round, status);
        CHECK(waitpid(other, &status, 0) == other);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "round %d: the second writer failed", round);
        tess_records *r;
        int results = 0;
        CHECK_OK(tess_records_open_readonly(path, &r));
        CHECK_OK(tess_records_foreach(r, NULL, NULL, count_row, &results));
        CHECK_MSG(results == 2, "round %d: %d results, not both writers' 2", round, results);
        tess_records_close(r);
    }
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

int main(void) {
    snprintf(scratch, sizeof scratch, "%s/tess-readonly-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(scratch)) {
        perror("mkdtemp");
        return 1;
    }
    char dir[600];
    snprintf(dir, sizeof dir, "%s/open", scratch);
    mkdir(dir, 0755);
    snprintf(dir, sizeof dir, "%s/locked", scratch);
    mkdir(dir, 0755);
    snprintf(dir, sizeof dir, "%s/live", scratch);
    mkdir(dir, 0755);
    test_missing();
    test_reader_leaves_nothing();
    test_concurrent_writer();
    test_unwritable();
    test_concurrent_create();
    int rc = check_finish("test_records_readonly");
    if (rc == 0) nftw(scratch, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return rc;
}
