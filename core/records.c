/*
 * records.c - the records database: schema, devices, tasks, runs, results
 * and the best config per task and device, in SQLite (WAL mode).
 *
 * Writes that belong together run in one BEGIN IMMEDIATE transaction, so a
 * writer takes the write lock up front and waits (busy timeout plus retry)
 * instead of failing when another process holds it. The statements of the
 * hot paths are prepared once per connection; queries that call back into
 * the caller (foreach, list) prepare their own so a callback may use the
 * records again.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>
#include "error.h"
#include "records.h"
#include "records_internal.h"

#define SCHEMA_VERSION 4
#define APPLICATION "tessera"
#define BUSY_TIMEOUT_MS 15000

static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS meta ("
    "  name TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS devices ("
    "  id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE,"
    "  backend TEXT NOT NULL, name TEXT NOT NULL, arch TEXT NOT NULL, units INTEGER,"
    "  cc_major INTEGER, cc_minor INTEGER, clock_mhz REAL, mem_clock_mhz REAL,"
    "  mem_bus_width INTEGER, mem_bytes INTEGER, l2_bytes INTEGER,"
    "  smem_per_block INTEGER, smem_per_block_optin INTEGER, smem_per_sm INTEGER,"
    "  regs_per_block INTEGER, regs_per_sm INTEGER,"
    "  max_threads_per_block INTEGER, max_threads_per_sm INTEGER, warp_size INTEGER,"
    /* The ceilings of device.h, each with the time it was measured (NULL: never). */
    "  copy_gbps REAL NOT NULL DEFAULT 0, copy_gbps_at TEXT,"
    "  read_gbps REAL NOT NULL DEFAULT 0, read_gbps_at TEXT,"
    "  fma_f32_gflops REAL NOT NULL DEFAULT 0, fma_f32_gflops_at TEXT,"
    "  fma_f64_gflops REAL NOT NULL DEFAULT 0, fma_f64_gflops_at TEXT,"
    "  mma_bf16_gflops REAL NOT NULL DEFAULT 0, mma_bf16_gflops_at TEXT,"
    "  mma_f16_gflops REAL NOT NULL DEFAULT 0, mma_f16_gflops_at TEXT,"
    "  mma_fp8_gflops REAL NOT NULL DEFAULT 0, mma_fp8_gflops_at TEXT);"
    "CREATE TABLE IF NOT EXISTS tasks ("
    "  id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, op TEXT NOT NULL,"
    "  dtype TEXT NOT NULL, shape TEXT NOT NULL, family TEXT,"
    "  extents TEXT NOT NULL DEFAULT '', attrs TEXT NOT NULL DEFAULT '');"
    "CREATE TABLE IF NOT EXISTS runs ("
    "  id INTEGER PRIMARY KEY,"
    "  task_id INTEGER NOT NULL REFERENCES tasks(id),"
    "  device_id INTEGER NOT NULL REFERENCES devices(id),"
    "  strategy TEXT, seed INTEGER, budget INTEGER,"
    "  started_at TEXT NOT NULL, finished_at TEXT, stop_reason TEXT, evaluations INTEGER);"
    /* run_id is NULL for results imported from JSON lines. */
    "CREATE TABLE IF NOT EXISTS results ("
    "  id INTEGER PRIMARY KEY,"
    "  run_id INTEGER REFERENCES runs(id),"
    "  task_id INTEGER NOT NULL REFERENCES tasks(id),"
    "  device_id INTEGER NOT NULL REFERENCES devices(id),"
    "  config TEXT NOT NULL, status TEXT NOT NULL, message TEXT NOT NULL DEFAULT '',"
    "  time_ms REAL CHECK (status = 'ok' OR time_ms IS NULL),"
    "  min_ms REAL, max_ms REAL, spread REAL, reps INTEGER,"
    "  gbps REAL, gflops REAL, compile_ms REAL,"
    "  registers INTEGER, smem_static INTEGER, smem_dynamic INTEGER, local_bytes INTEGER,"
    "  occupancy REAL, power_w REAL, strategy TEXT NOT NULL DEFAULT '',"
    "  created_at TEXT NOT NULL, max_error REAL);"
    "CREATE TABLE IF NOT EXISTS best ("
    "  task_id INTEGER NOT NULL REFERENCES tasks(id),"
    "  device_id INTEGER NOT NULL REFERENCES devices(id),"
    "  result_id INTEGER NOT NULL REFERENCES results(id),"
    "  time_ms REAL NOT NULL, config TEXT NOT NULL,"
    "  PRIMARY KEY (task_id, device_id));"
    "CREATE INDEX IF NOT EXISTS results_by_task_device ON results(task_id, device_id, created_at);"
    /* An imported result is recognised by (task, device, config, created_at). */
    "CREATE INDEX IF NOT EXISTS results_identity ON results(task_id, device_id, config, created_at);"
    "CREATE INDEX IF NOT EXISTS runs_by_task_device ON runs(task_id, device_id);"
    "INSERT OR IGNORE INTO meta(name, value) VALUES ('application', '" APPLICATION "');"
    "INSERT OR IGNORE INTO meta(name, value) VALUES ('created_by', 'tessera " TESSERA_VERSION "');";

#define TEXT_COL(type, field, flags) \
    {#field, TESS_COL_TEXT, offsetof(type, field), sizeof(((type *)0)->field), flags}
#define NUM_COL(kind, type, field, flags) {#field, kind, offsetof(type, field), 0, flags}
#define METRIC_COL(kind, field) \
    {#field, kind, offsetof(tess_record_row, metrics.field), 0, TESS_COL_METRIC}

const tess_column tess_device_columns[] = {
    TEXT_COL(tess_device, backend, TESS_COL_REQUIRED),
    TEXT_COL(tess_device, name, TESS_COL_REQUIRED),
    TEXT_COL(tess_device, arch, TESS_COL_REQUIRED),
    NUM_COL(TESS_COL_INT, tess_device, units, TESS_COL_REQUIRED),
    NUM_COL(TESS_COL_INT, tess_device, cc_major, 0),
    NUM_COL(TESS_COL_INT, tess_device, cc_minor, 0),
    NUM_COL(TESS_COL_REAL, tess_device, clock_mhz, 0),
    NUM_COL(TESS_COL_REAL, tess_device, mem_clock_mhz, 0),
    NUM_COL(TESS_COL_INT, tess_device, mem_bus_width, 0),
    NUM_COL(TESS_COL_INT64, tess_device, mem_bytes, 0),
    NUM_COL(TESS_COL_INT64, tess_device, l2_bytes, 0),
    NUM_COL(TESS_COL_INT64, tess_device, smem_per_block, 0),
    NUM_COL(TESS_COL_INT64, tess_device, smem_per_block_optin, 0),
    NUM_COL(TESS_COL_INT64, tess_device, smem_per_sm, 0),
    NUM_COL(TESS_COL_INT, tess_device, regs_per_block, 0),
    NUM_COL(TESS_COL_INT, tess_device, regs_per_sm, 0),
    NUM_COL(TESS_COL_INT, tess_device, max_threads_per_block, 0),
    NUM_COL(TESS_COL_INT, tess_device, max_threads_per_sm, 0),
    NUM_COL(TESS_COL_INT, tess_device, warp_size, 0),
};
const int tess_device_ncolumns = sizeof tess_device_columns / sizeof tess_device_columns[0];

const tess_column tess_result_columns[] = {
    NUM_COL(TESS_COL_OUTCOME, tess_record_row, status, TESS_COL_REQUIRED),
    TEXT_COL(tess_record_row, message, 0),
    NUM_COL(TESS_COL_MS, tess_record_row, time_ms, 0),
    NUM_COL(TESS_COL_MS, tess_record_row, min_ms, 0),
    NUM_COL(TESS_COL_MS, tess_record_row, max_ms, 0),
    NUM_COL(TESS_COL_REAL, tess_record_row, spread, 0),
    NUM_COL(TESS_COL_INT, tess_record_row, reps, 0),
    NUM_COL(TESS_COL_REAL, tess_record_row, gbps, 0),
    NUM_COL(TESS_COL_REAL, tess_record_row, gflops, 0),
    NUM_COL(TESS_COL_REAL, tess_record_row, compile_ms, 0),
    METRIC_COL(TESS_COL_INT, registers),
    METRIC_COL(TESS_COL_INT, smem_static),
    METRIC_COL(TESS_COL_INT, smem_dynamic),
    METRIC_COL(TESS_COL_INT, local_bytes),
    METRIC_COL(TESS_COL_REAL, occupancy),
    METRIC_COL(TESS_COL_REAL, power_w),
    TEXT_COL(tess_record_row, strategy, 0),
    TEXT_COL(tess_record_row, created_at, TESS_COL_REQUIRED),
    METRIC_COL(TESS_COL_REAL, max_error),
};
const int tess_result_ncolumns = sizeof tess_result_columns / sizeof tess_result_columns[0];

/* Statements prepared once per connection. */
typedef enum stmt_id {
    ST_UPSERT_DEVICE,
    ST_DEVICE_BY_KEY,
    ST_SET_CEILINGS,
    ST_UPSERT_TASK,
    ST_TASK_ID,
    ST_INSERT_RUN,
    ST_END_RUN,
    ST_RUN_TARGET,
    ST_INSERT_RESULT,
    ST_UPSERT_BEST,
    ST_HAS_RESULT,
    ST_BEST,
    ST_COUNT
} stmt_id;

struct tess_records {
    sqlite3 *db;
    char *path;
    bool readonly;              /* opened for reading only: never writes, never creates */
    char *foreach_sql;          /* all rows with optional task and device filters, oldest first */
    sqlite3_stmt *stmt[ST_COUNT];
};

/* ---- helpers ------------------------------------------------------------ */

static tess_status db_error(const tess_records *r, const char *what) {
    return tess_error(TESS_ERR_DB, "records database %s: %s: %s", r->path, what,
                      sqlite3_errmsg(r->db));
}

/* Current UTC time, ISO 8601 with milliseconds: "2025-01-31T12:00:00.123Z". */
static void iso_now(char *buf, size_t len) {
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%03dZ", (int)(ts.tv_nsec / 1000000));
}

/* Whether to try again after rc: the database is busy and the deadline has
 * not passed. Sleeps a little before saying yes. */
static bool busy_retry(int rc, double deadline) {
    if ((rc & 0xff) != SQLITE_BUSY || tess_now() > deadline) return false;
    struct timespec pause = {0, 2 * 1000 * 1000};
    nanosleep(&pause, NULL);
    return true;
}

static tess_status copy_text(char *dst, size_t size, const char *src, const char *what) {
    if (!src) src = "";
    size_t n = strlen(src);
    if (n >= size) return tess_error(TESS_ERR_ARG, "%s is %zu characters long (at most %zu)", what, n, size - 1);
    memcpy(dst, src, n + 1);
    return TESS_OK;
}

static void bind_text(sqlite3_stmt *s, int i, const char *text) {
    if (text)
        sqlite3_bind_text(s, i, text, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s, i);
}

/* Non-finite values are stored as NULL. */
static void bind_real(sqlite3_stmt *s, int i, double v) {
    if (isfinite(v))
        sqlite3_bind_double(s, i, v);
    else
        sqlite3_bind_null(s, i);
}

static void column_text(sqlite3_stmt *s, int i, char *dst, size_t size) {
    const char *text = (const char *)sqlite3_column_text(s, i);
    snprintf(dst, size, "%s", text ? text : "");
}

/* A cached statement with its parameters cleared; every user resets it
 * after its last step, so no statement keeps a read snapshot open. */
static sqlite3_stmt *use(tess_records *r, stmt_id id) {
    sqlite3_clear_bindings(r->stmt[id]);
    return r->stmt[id];
}

/* Steps a statement that returns no rows. */
static tess_status step_done(tess_records *r, sqlite3_stmt *s, const char *what) {
    tess_status st = sqlite3_step(s) == SQLITE_DONE ? TESS_OK : db_error(r, what);
    sqlite3_reset(s);
    return st;
}

/* ---- columns -------------------------------------------------------------- */

void tess_column_set_unknown(const tess_column *c, void *base) {
    char *field = (char *)base + c->offset;
    switch (c->kind) {
    case TESS_COL_TEXT: field[0] = '\0'; break;
    case TESS_COL_INT: *(int *)field = c->flags & TESS_COL_METRIC ? -1 : 0; break;
    case TESS_COL_INT64: *(int64_t *)field = 0; break;
    case TESS_COL_REAL: *(double *)field = c->flags & TESS_COL_METRIC ? -1.0 : NAN; break;
    case TESS_COL_MS: *(double *)field = INFINITY; break;
    case TESS_COL_OUTCOME: *(tess_outcome *)field = TESS_RESULT_INVALID; break;
    }
}

/* Binds the columns' fields of the struct at base to parameters first, first + 1, ... */
static void bind_columns(sqlite3_stmt *s, int first, const tess_column *cols, int n, const void *base) {
    for (int i = 0; i < n; i++) {
        const char *field = (const char *)base + cols[i].offset;
        int at = first + i;
        switch (cols[i].kind) {
        case TESS_COL_TEXT: bind_text(s, at, field); break;
        case TESS_COL_INT: sqlite3_bind_int(s, at, *(const int *)field); break;
        case TESS_COL_INT64: sqlite3_bind_int64(s, at, *(const int64_t *)field); break;
        case TESS_COL_REAL:
        case TESS_COL_MS: bind_real(s, at, *(const double *)field); break;
        case TESS_COL_OUTCOME: bind_text(s, at, tess_outcome_name(*(const tess_outcome *)field)); break;
        }
    }
}

static tess_outcome outcome_named(const char *name) {
    for (int o = 0; o < TESS_OUTCOME_COUNT; o++)
        if (name && strcmp(name, tess_outcome_name((tess_outcome)o)) == 0) return (tess_outcome)o;
    return TESS_RESULT_INVALID;
}

/* Reads columns first, first + 1, ... of the current row into the struct at base. */
static void read_columns(sqlite3_stmt *s, int first, const tess_column *cols, int n, void *base) {
    for (int i = 0; i < n; i++) {
        char *field = (char *)base + cols[i].offset;
        int at = first + i;
        if (sqlite3_column_type(s, at) == SQLITE_NULL) {
            tess_column_set_unknown(&cols[i], base);
            continue;
        }
        switch (cols[i].kind) {
        case TESS_COL_TEXT: column_text(s, at, field, cols[i].size); break;
        case TESS_COL_INT: *(int *)field = sqlite3_column_int(s, at); break;
        case TESS_COL_INT64: *(int64_t *)field = sqlite3_column_int64(s, at); break;
        case TESS_COL_REAL:
        case TESS_COL_MS: *(double *)field = sqlite3_column_double(s, at); break;
        case TESS_COL_OUTCOME:
            *(tess_outcome *)field = outcome_named((const char *)sqlite3_column_text(s, at));
            break;
        }
    }
}

/* The column names joined by ", ", each written with pattern (a format that
 * takes the name once or twice). NULL when out of memory. */
static char *join_columns(const tess_column *cols, int n, const char *pattern) {
    sqlite3_str *s = sqlite3_str_new(NULL);
    for (int i = 0; i < n; i++) {
        if (i) sqlite3_str_appendall(s, ", ");
        sqlite3_str_appendf(s, pattern, cols[i].name, cols[i].name);
    }
    return sqlite3_str_finish(s);
}

/* Reads a row of the row query (foreach_sql, ST_BEST). */
static void read_row(sqlite3_stmt *s, tess_record_row *row) {
    memset(row, 0, sizeof *row);
    row->id = sqlite3_column_int64(s, 0);
    column_text(s, 1, row->task_key, sizeof row->task_key);
    column_text(s, 2, row->family, sizeof row->family);
    column_text(s, 3, row->device_key, sizeof row->device_key);
    column_text(s, 4, row->config, sizeof row->config);
    read_columns(s, 5, tess_result_columns, tess_result_ncolumns, row);
}

/* ---- opening ------------------------------------------------------------ */

tess_status tess_records_default_path(char *buf, size_t len) {
    const char *env;
    int w;
    if ((env = getenv("TESSERA_DB")) && *env)
        w = snprintf(buf, len, "%s", env);
    else if ((env = getenv("XDG_DATA_HOME")) && env[0] == '/')   /* relative values are invalid */
        w = snprintf(buf, len, "%s/tessera/records.db", env);
    else if ((env = getenv("HOME")) && *env)
        w = snprintf(buf, len, "%s/.local/share/tessera/records.db", env);
    else
        return tess_error(TESS_ERR_ARG, "no records database path: set TESSERA_DB or HOME");
    if (w < 0 || (size_t)w >= len) return tess_error(TESS_ERR_ARG, "records database path too long");
    return TESS_OK;
}

/* mkdir -p of the directory that holds path. */
static tess_status make_parent_dirs(const char *path) {
    char dir[PATH_MAX];
    if (strlen(path) >= sizeof dir) return tess_error(TESS_ERR_ARG, "records database path too long: %s", path);
    strcpy(dir, path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return TESS_OK;
    *slash = '\0';
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char c = *p;
        *p = '\0';
        if (mkdir(dir, 0777) != 0 && errno != EEXIST)
            return tess_error(TESS_ERR_IO, "cannot create directory %s for records database %s: %s", dir,
                              path, strerror(errno));
        *p = c;
        if (!c) break;
    }
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return tess_error(TESS_ERR_IO, "cannot create records database %s: %s is not a directory", path, dir);
    return TESS_OK;
}

/* Runs a query returning one value as text; the SQLite result code. */
static int query_text(tess_records *r, const char *sql, char *buf, size_t len) {
    sqlite3_stmt *s;
    int rc = sqlite3_prepare_v2(r->db, sql, -1, &s, NULL);
    if (rc != SQLITE_OK) return rc;
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        column_text(s, 0, buf, len);
        rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
        buf[0] = '\0';
        rc = SQLITE_OK;
    }
    sqlite3_finalize(s);
    return rc;
}

/* Refuses files that are not SQLite or not ours, or written by a newer
 * tessera; *fresh when the database is empty, *version its schema version. */
static tess_status check_identity(tess_records *r, bool *fresh, int *version) {
    char value[64];
    int rc = query_text(r, "SELECT count(*) FROM sqlite_master", value, sizeof value);
    if ((rc & 0xff) == SQLITE_NOTADB)
        return tess_error(TESS_ERR_DB, "%s is not a tessera records database (%s)", r->path,
                          sqlite3_errmsg(r->db));
    if (rc != SQLITE_OK) return db_error(r, "reading the schema");
    *fresh = strcmp(value, "0") == 0;
    if (*fresh && r->readonly)
        return tess_error(TESS_ERR_DB, "%s is empty, not a tessera records database", r->path);
    if (*fresh) return TESS_OK;
    rc = query_text(r, "SELECT value FROM meta WHERE name = 'application'", value, sizeof value);
    if (rc != SQLITE_OK || strcmp(value, APPLICATION) != 0)
        return tess_error(TESS_ERR_DB, "%s is an SQLite database but not a tessera records database",
                          r->path);
    rc = query_text(r, "PRAGMA user_version", value, sizeof value);
    if (rc != SQLITE_OK) return db_error(r, "reading the schema version");
    *version = atoi(value);
    if (*version < 1 || *version > SCHEMA_VERSION)
        return tess_error(TESS_ERR_DB, "%s has records schema version %s; this tessera reads versions 1 to %d",
                          r->path, value, SCHEMA_VERSION);
    return TESS_OK;
}

/* Schema upgrades, in order: migrations[i] takes version i + 1 to i + 2.
 * Each keeps what was stored, so a database upgraded here still means what
 * it meant. */
static const char *const migrations[] = {
    /* 2: tasks gain the names of their extents and their attributes. Every
     * task of version 1 is a stencil or a reduction over a grid whose extents
     * are the trailing ones of z, y, x, and none has attributes. */
    "ALTER TABLE tasks ADD COLUMN extents TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE tasks ADD COLUMN attrs TEXT NOT NULL DEFAULT '';"
    "UPDATE tasks SET extents = CASE length(shape) - length(replace(shape, 'x', ''))"
    "  WHEN 0 THEN 'x' WHEN 1 THEN 'y,x' ELSE 'z,y,x' END;",
    /* 3: ceilings per unit, each with its own calibration time. The two of
     * version 2 were the copy bandwidth and the fp32 FMA rate (both backends
     * measured fp32) of the calibration at calibrated_at; the new ones are
     * not measured yet. */
    "ALTER TABLE devices RENAME COLUMN ceiling_gbps TO copy_gbps;"
    "ALTER TABLE devices RENAME COLUMN ceiling_gflops TO fma_f32_gflops;"
    "ALTER TABLE devices ADD COLUMN copy_gbps_at TEXT;"
    "ALTER TABLE devices ADD COLUMN fma_f32_gflops_at TEXT;"
    "UPDATE devices SET copy_gbps_at = CASE WHEN copy_gbps > 0 THEN calibrated_at END,"
    "  fma_f32_gflops_at = CASE WHEN fma_f32_gflops > 0 THEN calibrated_at END;"
    "ALTER TABLE devices DROP COLUMN calibrated_at;"
    "ALTER TABLE devices ADD COLUMN read_gbps REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE devices ADD COLUMN read_gbps_at TEXT;"
    "ALTER TABLE devices ADD COLUMN fma_f64_gflops REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE devices ADD COLUMN fma_f64_gflops_at TEXT;"
    "ALTER TABLE devices ADD COLUMN mma_bf16_gflops REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE devices ADD COLUMN mma_bf16_gflops_at TEXT;"
    "ALTER TABLE devices ADD COLUMN mma_f16_gflops REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE devices ADD COLUMN mma_f16_gflops_at TEXT;"
    "ALTER TABLE devices ADD COLUMN mma_fp8_gflops REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE devices ADD COLUMN mma_fp8_gflops_at TEXT;",
    /* 4: results gain the largest error their verification saw; earlier
     * ones did not measure it (NULL: unknown). */
    "ALTER TABLE results ADD COLUMN max_error REAL;",
};

/* Brings a database of an older schema version up to SCHEMA_VERSION in one
 * transaction: either every step applies or none does. */
_Static_assert(sizeof migrations / sizeof migrations[0] == SCHEMA_VERSION - 1,
               "one migration per schema version after the first");

static tess_status migrate_schema(tess_records *r, int version) {
    if (version == SCHEMA_VERSION) return TESS_OK;
    if (r->readonly || sqlite3_db_readonly(r->db, "main") == 1)
        return tess_error(TESS_ERR_DB, "%s has records schema version %d and is open read-only: open it once "
                          "with write access (tessera tune, calibrate or db import) to upgrade it to version %d",
                          r->path, version, SCHEMA_VERSION);
    tess_status st = tess_records_begin(r);
    if (st) return st;
    /* another process may have upgraded it while this one waited for the lock */
    char value[16];
    if (query_text(r, "PRAGMA user_version", value, sizeof value) == SQLITE_OK) version = atoi(value);
    char version_sql[64];
    for (int v = version; v < SCHEMA_VERSION && !st; v++) {
        snprintf(version_sql, sizeof version_sql, "PRAGMA user_version = %d", v + 1);
        if (sqlite3_exec(r->db, migrations[v - 1], NULL, NULL, NULL) ||
            sqlite3_exec(r->db, version_sql, NULL, NULL, NULL))
            st = db_error(r, "upgrading the records schema");
    }
    if (st) {
        tess_records_rollback(r);
        return tess_error_context(st, "%s: from version %d to %d", r->path, version, SCHEMA_VERSION);
    }
    return tess_records_commit(r);
}

static tess_status configure_connection(tess_records *r) {
    if (r->readonly) return TESS_OK;   /* the journal mode is the writers' choice */
    char mode[16];
    double deadline = tess_now() + BUSY_TIMEOUT_MS / 1000.0;
    int rc;
    do rc = query_text(r, "PRAGMA journal_mode=WAL", mode, sizeof mode);
    while (busy_retry(rc, deadline));
    if (rc != SQLITE_OK) return db_error(r, "switching to WAL mode");
    if (strcmp(mode, "wal") != 0)
        return tess_error(TESS_ERR_DB, "records database %s: cannot use WAL mode (journal mode is %s)",
                          r->path, mode);
    if (sqlite3_exec(r->db, "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON", NULL, NULL, NULL))
        return db_error(r, "setting up the connection");
    return TESS_OK;
}

static tess_status create_schema(tess_records *r) {
    tess_status st = tess_records_begin(r);
    if (st) return st;
    char version_sql[64];
    snprintf(version_sql, sizeof version_sql, "PRAGMA user_version = %d", SCHEMA_VERSION);
    if (sqlite3_exec(r->db, schema_sql, NULL, NULL, NULL) ||
        sqlite3_exec(r->db, version_sql, NULL, NULL, NULL)) {
        st = db_error(r, "creating the schema");
        tess_records_rollback(r);
        return st;
    }
    return tess_records_commit(r);
}

/* The ceilings' columns in a statement: their names (value, then time),
 * their parameters, or the upsert that keeps a stored ceiling unless the
 * device brings one with a calibration time. NULL when out of memory. */
typedef enum ceiling_sql_part { CEILING_NAMES, CEILING_PARAMS, CEILING_UPSERT, CEILING_SET } ceiling_sql_part;

static char *ceiling_sql(ceiling_sql_part part) {
    sqlite3_str *s = sqlite3_str_new(NULL);
    for (int k = 0; k < TESS_CEILING_COUNT; k++) {
        const char *n = tess_ceiling_name((tess_ceiling_kind)k);
        if (k) sqlite3_str_appendall(s, ", ");
        switch (part) {
        case CEILING_NAMES: sqlite3_str_appendf(s, "%s, %s_at", n, n); break;
        case CEILING_PARAMS: sqlite3_str_appendall(s, "?, ?"); break;
        case CEILING_SET: sqlite3_str_appendf(s, "%s = ?, %s_at = ?", n, n); break;
        case CEILING_UPSERT:
            sqlite3_str_appendf(s, "%s = CASE WHEN excluded.%s_at IS NULL THEN devices.%s ELSE excluded.%s END",
                                n, n, n, n);
            sqlite3_str_appendf(s, ", %s_at = coalesce(excluded.%s_at, devices.%s_at)", n, n, n);
            break;
        }
    }
    return sqlite3_str_finish(s);
}

static tess_status prepare_statements(tess_records *r) {
    const tess_column *dc = tess_device_columns, *rc = tess_result_columns;
    const int dn = tess_device_ncolumns, rn = tess_result_ncolumns;
    char *dev_names = join_columns(dc, dn, "%s");
    char *dev_params = join_columns(dc, dn, "?");
    char *dev_update = join_columns(dc, dn, "%s = excluded.%s");
    char *res_names = join_columns(rc, rn, "%s");
    char *res_params = join_columns(rc, rn, "?");
    char *res_select = join_columns(rc, rn, "r.%s");
    char *row_select = sqlite3_mprintf(
        "SELECT r.id, t.key, t.family, d.key, r.config, %s FROM results r"
        " JOIN tasks t ON t.id = r.task_id JOIN devices d ON d.id = r.device_id", res_select);
    char *ceil_names = ceiling_sql(CEILING_NAMES), *ceil_params = ceiling_sql(CEILING_PARAMS);
    char *ceil_upsert = ceiling_sql(CEILING_UPSERT), *ceil_set = ceiling_sql(CEILING_SET);
    char *parts[] = {dev_names, dev_params, dev_update, res_names, res_params, res_select, row_select,
                     ceil_names, ceil_params, ceil_upsert, ceil_set};
    const int nparts = sizeof parts / sizeof parts[0];
    tess_status st = TESS_OK;
    for (int i = 0; i < nparts; i++)
        if (!parts[i]) st = tess_error(TESS_ERR_NOMEM, "out of memory preparing statements");
    if (st) {
        for (int i = 0; i < nparts; i++) sqlite3_free(parts[i]);
        return st;
    }
    char *sql[ST_COUNT] = {
        [ST_UPSERT_DEVICE] = sqlite3_mprintf(
            "INSERT INTO devices(key, %s, %s) VALUES(?, %s, %s) ON CONFLICT(key) DO UPDATE SET %s, %s",
            dev_names, ceil_names, dev_params, ceil_params, dev_update, ceil_upsert),
        [ST_DEVICE_BY_KEY] = sqlite3_mprintf(
            "SELECT id, %s, %s FROM devices WHERE key = ?", ceil_names, dev_names),
        [ST_SET_CEILINGS] = sqlite3_mprintf("UPDATE devices SET %s WHERE key = ?", ceil_set),
        [ST_UPSERT_TASK] = sqlite3_mprintf(
            "INSERT INTO tasks(key, op, dtype, shape, family, extents, attrs) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)"
            " ON CONFLICT(key) DO UPDATE SET family = coalesce(excluded.family, tasks.family)"),
        [ST_TASK_ID] = sqlite3_mprintf("SELECT id FROM tasks WHERE key = ?1"),
        [ST_INSERT_RUN] = sqlite3_mprintf(
            "INSERT INTO runs(task_id, device_id, strategy, seed, budget, started_at)"
            " VALUES(?1, ?2, ?3, ?4, ?5, ?6)"),
        [ST_END_RUN] = sqlite3_mprintf(
            "UPDATE runs SET finished_at = ?2, stop_reason = ?3, evaluations = ?4 WHERE id = ?1"),
        [ST_RUN_TARGET] = sqlite3_mprintf("SELECT task_id, device_id FROM runs WHERE id = ?1"),
        [ST_INSERT_RESULT] = sqlite3_mprintf(
            "INSERT INTO results(run_id, task_id, device_id, config, %s) VALUES(?, ?, ?, ?, %s)",
            res_names, res_params),
        [ST_UPSERT_BEST] = sqlite3_mprintf(
            "INSERT INTO best(task_id, device_id, result_id, time_ms, config)"
            " VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(task_id, device_id) DO UPDATE SET"
            " result_id = excluded.result_id, time_ms = excluded.time_ms, config = excluded.config"
            " WHERE excluded.time_ms < best.time_ms"),
        [ST_HAS_RESULT] = sqlite3_mprintf(
            "SELECT 1 FROM results WHERE task_id = ?1 AND device_id = ?2 AND config = ?3"
            " AND created_at = ?4"),
        [ST_BEST] = sqlite3_mprintf(
            "%s JOIN best b ON b.result_id = r.id WHERE t.key = ?1 AND d.key = ?2", row_select),
    };
    r->foreach_sql = sqlite3_mprintf(
        "%s WHERE (?1 IS NULL OR t.key = ?1) AND (?2 IS NULL OR d.key = ?2)"
        " ORDER BY r.created_at, r.id", row_select);

    if (!r->foreach_sql) st = tess_error(TESS_ERR_NOMEM, "out of memory preparing statements");
    for (int i = 0; i < ST_COUNT && !st; i++) {
        if (!sql[i])
            st = tess_error(TESS_ERR_NOMEM, "out of memory preparing statements");
        else if (sqlite3_prepare_v3(r->db, sql[i], -1, SQLITE_PREPARE_PERSISTENT, &r->stmt[i], NULL))
            st = db_error(r, "preparing statements");
    }
    for (int i = 0; i < ST_COUNT; i++) sqlite3_free(sql[i]);
    for (int i = 0; i < nparts; i++) sqlite3_free(parts[i]);
    return st;
}

/* The directory that holds path ("." for a bare name). */
static void parent_dir(const char *path, char *dir, size_t len) {
    snprintf(dir, len, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, len, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
}

/* Whether this process may write the file and create files beside it
 * (SQLite's -wal and -shm). */
static bool can_write_beside(const char *path) {
    char dir[PATH_MAX];
    parent_dir(path, dir, sizeof dir);
    return access(path, W_OK) == 0 && access(dir, W_OK | X_OK) == 0;
}

/* "file:PATH?param" with the path percent-encoded (sqlite3_open_v2 with
 * SQLITE_OPEN_URI); an absolute path gets the empty authority. NULL when
 * out of memory. */
static char *file_uri(const char *path, const char *param) {
    sqlite3_str *s = sqlite3_str_new(NULL);
    sqlite3_str_appendall(s, path[0] == '/' ? "file://" : "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++)
        if (isalnum(*p) || strchr("/-._~", *p))
            sqlite3_str_appendchar(s, 1, (char)*p);
        else
            sqlite3_str_appendf(s, "%%%02X", *p);
    sqlite3_str_appendf(s, "?%s", param);
    return sqlite3_str_finish(s);
}

/* A reading connection, as the file allows. Where this process can write
 * the file and its directory, an ordinary connection that refuses writes
 * (query_only): it locks like any reader, and SQLite removes the -wal and
 * -shm files it makes when the last connection closes. Otherwise a
 * read-only connection: through the existing -wal and -shm when a writer
 * has the database open (or left them), so its commits are seen; without
 * them the file is complete and read as immutable (no locks, no files),
 * since no -shm can be made. The SQLite result code. */
static int open_reading(tess_records *r) {
    if (can_write_beside(r->path)) {
        int rc = sqlite3_open_v2(r->path, &r->db, SQLITE_OPEN_READWRITE, NULL);
        return rc == SQLITE_OK ? sqlite3_exec(r->db, "PRAGMA query_only = ON", NULL, NULL, NULL) : rc;
    }
    char wal[PATH_MAX + 8];
    snprintf(wal, sizeof wal, "%s-wal", r->path);
    char *uri = file_uri(r->path, access(wal, F_OK) == 0 ? "mode=ro" : "immutable=1");
    if (!uri) return SQLITE_NOMEM;
    int rc = sqlite3_open_v2(uri, &r->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
    sqlite3_free(uri);
    return rc;
}

/* A connection to the database file at path, made and upgraded as needed. */
static tess_status open_connection(const char *path, bool readonly, tess_records **out) {
    tess_status st;
    tess_records *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        free(r);
        return tess_error(TESS_ERR_NOMEM, "out of memory opening records database %s", path);
    }
    r->readonly = readonly;
    int rc = readonly ? open_reading(r)
                      : sqlite3_open_v2(path, &r->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc != SQLITE_OK) {
        st = tess_error(TESS_ERR_IO, "cannot open records database %s%s: %s", path,
                        readonly ? " for reading" : "", r->db ? sqlite3_errmsg(r->db) : sqlite3_errstr(rc));
    } else if (!readonly && sqlite3_db_readonly(r->db, "main") == 1) {
        st = tess_error(TESS_ERR_IO, "records database %s is read-only", path);
    } else {
        bool fresh = false;
        int version = SCHEMA_VERSION;
        sqlite3_extended_result_codes(r->db, 1);
        sqlite3_busy_timeout(r->db, BUSY_TIMEOUT_MS);
        st = check_identity(r, &fresh, &version);
        if (!st) st = configure_connection(r);
        if (!st && fresh) st = create_schema(r);
        if (!st && !fresh) st = migrate_schema(r, version);
        if (!st) st = prepare_statements(r);
    }
    if (st) {
        tess_records_close(r);
        return st;
    }
    *out = r;
    return TESS_OK;
}

/* A new database is built under a name of its own and then linked into
 * place, so a reader opening path at the same moment finds either no file or
 * a complete database, never an empty one, and two processes creating it at
 * once end up sharing one. Where the file system has no hard links, a rename
 * does it, unless the file appeared meanwhile. */
static tess_status create_database(const char *path) {
    char made[PATH_MAX + 32];
    snprintf(made, sizeof made, "%s.new-%ld", path, (long)getpid());
    unlink(made);
    tess_records *r;
    tess_status st = open_connection(made, false, &r);
    if (st) {
        unlink(made);
        return st;
    }
    tess_records_close(r);   /* the last connection: SQLite folds the -wal file back in */
    int rc = link(made, path);
    if (rc != 0 && errno != EEXIST && access(path, F_OK) != 0) rc = rename(made, path);
    int saved = errno;
    unlink(made);
    if (rc != 0 && saved != EEXIST)
        return tess_error(TESS_ERR_IO, "cannot create records database %s: %s", path, strerror(saved));
    return TESS_OK;
}

static tess_status open_records(const char *path, bool readonly, tess_records **out) {
    *out = NULL;
    if (!path || !*path) return tess_error(TESS_ERR_ARG, "empty records database path");
    struct stat sb;
    bool exists = stat(path, &sb) == 0;
    if (exists && !S_ISREG(sb.st_mode))
        return tess_error(TESS_ERR_IO, "records database %s is not a regular file", path);
    if (!exists && readonly)
        return tess_error(TESS_ERR_NOTFOUND, "no records database at %s", path);
    /* A database this process cannot write is still a library to read. */
    if (exists && !can_write_beside(path)) readonly = true;
    if (!readonly && !exists) {
        tess_status st = make_parent_dirs(path);
        if (!st) st = create_database(path);
        if (st) return st;
    }
    return open_connection(path, readonly, out);
}

tess_status tess_records_open(const char *path, tess_records **out) {
    return open_records(path, false, out);
}

tess_status tess_records_open_readonly(const char *path, tess_records **out) {
    return open_records(path, true, out);
}

bool tess_records_readonly(const tess_records *r) { return r->readonly; }

void tess_records_close(tess_records *r) {
    if (!r) return;
    for (int i = 0; i < ST_COUNT; i++) sqlite3_finalize(r->stmt[i]);
    sqlite3_free(r->foreach_sql);
    sqlite3_close_v2(r->db);
    free(r->path);
    free(r);
}

const char *tess_records_path(const tess_records *r) { return r->path; }

/* ---- transactions ------------------------------------------------------- */

tess_status tess_records_begin(tess_records *r) {
    /* The busy timeout covers most waits; SQLite skips the busy handler in a
     * few cases (a WAL being recovered), hence the loop. */
    double deadline = tess_now() + BUSY_TIMEOUT_MS / 1000.0;
    int rc;
    do rc = sqlite3_exec(r->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    while (busy_retry(rc, deadline));
    return rc == SQLITE_OK ? TESS_OK : db_error(r, "starting a write transaction");
}

tess_status tess_records_commit(tess_records *r) {
    if (sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK) return TESS_OK;
    tess_status st = db_error(r, "committing");
    tess_records_rollback(r);
    return st;
}

void tess_records_rollback(tess_records *r) {
    if (!sqlite3_get_autocommit(r->db)) sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
}

/* ---- devices and tasks ---------------------------------------------------- */

/* Binds the ceilings to parameters first, first + 1, ... (value, time). */
static void bind_ceilings(sqlite3_stmt *s, int first, const tess_ceiling *c) {
    for (int k = 0; k < TESS_CEILING_COUNT; k++) {
        sqlite3_bind_double(s, first + 2 * k, isfinite(c[k].value) && c[k].value > 0 ? c[k].value : 0);
        bind_text(s, first + 2 * k + 1, c[k].calibrated_at[0] ? c[k].calibrated_at : NULL);
    }
}

static void read_ceilings(sqlite3_stmt *s, int first, tess_ceiling *c) {
    for (int k = 0; k < TESS_CEILING_COUNT; k++) {
        c[k].value = sqlite3_column_double(s, first + 2 * k);
        column_text(s, first + 2 * k + 1, c[k].calibrated_at, sizeof c[k].calibrated_at);
    }
}

tess_status tess_records_find_device(tess_records *r, const char *key, tess_device *d,
                                     int64_t *device_id, bool *found) {
    sqlite3_stmt *s = use(r, ST_DEVICE_BY_KEY);
    bind_text(s, 1, key);
    int rc = sqlite3_step(s);
    tess_status st = rc == SQLITE_ROW || rc == SQLITE_DONE ? TESS_OK : db_error(r, "looking up a device");
    *found = rc == SQLITE_ROW;
    if (*found && device_id) *device_id = sqlite3_column_int64(s, 0);
    if (*found && d) {
        memset(d, 0, sizeof *d);
        read_ceilings(s, 1, d->ceiling);
        read_columns(s, 1 + 2 * TESS_CEILING_COUNT, tess_device_columns, tess_device_ncolumns, d);
    }
    sqlite3_reset(s);
    return st;
}

tess_status tess_records_put_device(tess_records *r, const tess_device *d, int64_t *device_id) {
    char key[TESS_KEY_MAX];
    tess_status st = tess_device_key(d, key, sizeof key);
    if (st) return st;
    sqlite3_stmt *s = use(r, ST_UPSERT_DEVICE);
    bind_text(s, 1, key);
    bind_columns(s, 2, tess_device_columns, tess_device_ncolumns, d);
    bind_ceilings(s, 2 + tess_device_ncolumns, d->ceiling);
    st = step_done(r, s, "storing a device");
    if (st || !device_id) return st;
    bool found;
    st = tess_records_find_device(r, key, NULL, device_id, &found);
    if (!st && !found) st = tess_error(TESS_ERR_INTERNAL, "device %s vanished from %s", key, r->path);
    return st;
}

tess_status tess_records_load_ceilings(tess_records *r, tess_device *d) {
    char key[TESS_KEY_MAX];
    tess_device stored;
    bool found;
    tess_status st = tess_device_key(d, key, sizeof key);
    if (!st) st = tess_records_find_device(r, key, &stored, NULL, &found);
    if (st || !found) return st;
    for (int k = 0; k < TESS_CEILING_COUNT; k++)
        if (tess_ceiling_measured(&stored.ceiling[k])) d->ceiling[k] = stored.ceiling[k];
    return TESS_OK;
}

tess_status tess_records_set_ceilings(tess_records *r, tess_device *d, const double rates[TESS_CEILING_COUNT]) {
    for (int k = 0; k < TESS_CEILING_COUNT; k++)
        if (!(rates[k] >= 0 && isfinite(rates[k])))
            return tess_error(TESS_ERR_ARG, "ceiling %s must be finite and >= 0 (got %g)",
                              tess_ceiling_name((tess_ceiling_kind)k), rates[k]);
    char key[TESS_KEY_MAX], now[32];
    tess_status st = tess_device_key(d, key, sizeof key);
    if (st) return st;
    iso_now(now, sizeof now);
    tess_ceiling measured[TESS_CEILING_COUNT];
    for (int k = 0; k < TESS_CEILING_COUNT; k++) {
        measured[k].value = rates[k];
        snprintf(measured[k].calibrated_at, sizeof measured[k].calibrated_at, "%s", now);
    }
    st = tess_records_begin(r);
    if (st) return st;
    st = tess_records_put_device(r, d, NULL);   /* creates the device when missing */
    if (!st) {
        sqlite3_stmt *s = use(r, ST_SET_CEILINGS);
        bind_ceilings(s, 1, measured);
        bind_text(s, 1 + 2 * TESS_CEILING_COUNT, key);
        st = step_done(r, s, "storing ceilings");
    }
    if (st) {
        tess_records_rollback(r);
        return st;
    }
    st = tess_records_commit(r);
    if (!st) memcpy(d->ceiling, measured, sizeof measured);
    return st;
}

tess_status tess_records_put_task(tess_records *r, const tess_task *t, const char *family,
                                  int64_t *task_id) {
    char key[TESS_KEY_MAX], shape[160], dtypes[32], extents[TESS_MAX_DIMS * TESS_DIM_NAME_MAX],
        attrs[TESS_KEY_MAX];
    tess_status st = tess_task_key(t, key, sizeof key);
    if (!st) st = tess_shape_format(t->shape, t->ndim, shape, sizeof shape);
    if (!st) st = tess_task_dtypes_format(t, dtypes, sizeof dtypes);
    if (!st) st = tess_task_extents_format(t, extents, sizeof extents);
    if (!st) st = tess_task_attrs_format(t, attrs, sizeof attrs);
    if (st) return st;
    sqlite3_stmt *s = use(r, ST_UPSERT_TASK);
    bind_text(s, 1, key);
    bind_text(s, 2, t->op);
    bind_text(s, 3, dtypes);
    bind_text(s, 4, shape);
    bind_text(s, 5, family && *family ? family : NULL);
    bind_text(s, 6, extents);
    bind_text(s, 7, attrs);
    st = step_done(r, s, "storing a task");
    if (st || !task_id) return st;
    s = use(r, ST_TASK_ID);
    bind_text(s, 1, key);
    if (sqlite3_step(s) == SQLITE_ROW)
        *task_id = sqlite3_column_int64(s, 0);
    else
        st = db_error(r, "looking up a task");
    sqlite3_reset(s);
    return st;
}

/* ---- runs ------------------------------------------------------------- */

tess_status tess_records_begin_run(tess_records *r, int64_t task_id, int64_t device_id,
                                   const char *strategy, uint64_t seed, int budget,
                                   int64_t *run_id) {
    char now[32];
    iso_now(now, sizeof now);
    sqlite3_stmt *s = use(r, ST_INSERT_RUN);
    sqlite3_bind_int64(s, 1, task_id);
    sqlite3_bind_int64(s, 2, device_id);
    bind_text(s, 3, strategy);
    sqlite3_bind_int64(s, 4, (sqlite3_int64)seed);   /* seeds >= 2^63 are stored negative */
    sqlite3_bind_int(s, 5, budget);
    bind_text(s, 6, now);
    int rc = sqlite3_step(s);
    tess_status st = TESS_OK;
    if ((rc & 0xff) == SQLITE_CONSTRAINT)
        st = tess_error(TESS_ERR_NOTFOUND, "records database %s: no task %lld or no device %lld",
                        r->path, (long long)task_id, (long long)device_id);
    else if (rc != SQLITE_DONE)
        st = db_error(r, "starting a run");
    else if (run_id)
        *run_id = sqlite3_last_insert_rowid(r->db);
    sqlite3_reset(s);
    return st;
}

tess_status tess_records_end_run(tess_records *r, int64_t run_id, const char *stop_reason,
                                 int evaluations) {
    char now[32];
    iso_now(now, sizeof now);
    sqlite3_stmt *s = use(r, ST_END_RUN);
    sqlite3_bind_int64(s, 1, run_id);
    bind_text(s, 2, now);
    bind_text(s, 3, stop_reason);
    sqlite3_bind_int(s, 4, evaluations);
    tess_status st = step_done(r, s, "ending a run");
    if (!st && sqlite3_changes(r->db) == 0)
        st = tess_error(TESS_ERR_NOTFOUND, "records database %s: no run %lld", r->path, (long long)run_id);
    return st;
}

/* ---- results ------------------------------------------------------------ */

static tess_status run_target(tess_records *r, int64_t run_id, int64_t *task_id, int64_t *device_id) {
    sqlite3_stmt *s = use(r, ST_RUN_TARGET);
    sqlite3_bind_int64(s, 1, run_id);
    int rc = sqlite3_step(s);
    tess_status st = TESS_OK;
    if (rc == SQLITE_ROW) {
        *task_id = sqlite3_column_int64(s, 0);
        *device_id = sqlite3_column_int64(s, 1);
    } else if (rc == SQLITE_DONE) {
        st = tess_error(TESS_ERR_NOTFOUND, "records database %s: no run %lld", r->path, (long long)run_id);
    } else {
        st = db_error(r, "looking up a run");
    }
    sqlite3_reset(s);
    return st;
}

tess_status tess_records_has_result(tess_records *r, int64_t task_id, int64_t device_id,
                                    const char *config, const char *created_at, bool *found) {
    sqlite3_stmt *s = use(r, ST_HAS_RESULT);
    sqlite3_bind_int64(s, 1, task_id);
    sqlite3_bind_int64(s, 2, device_id);
    bind_text(s, 3, config);
    bind_text(s, 4, created_at);
    int rc = sqlite3_step(s);
    *found = rc == SQLITE_ROW;
    tess_status st = rc == SQLITE_ROW || rc == SQLITE_DONE ? TESS_OK : db_error(r, "looking up a result");
    sqlite3_reset(s);
    return st;
}

tess_status tess_records_insert_row(tess_records *r, int64_t run_id, int64_t task_id,
                                    int64_t device_id, const tess_record_row *row) {
    sqlite3_stmt *s = use(r, ST_INSERT_RESULT);
    if (run_id)
        sqlite3_bind_int64(s, 1, run_id);
    else
        sqlite3_bind_null(s, 1);
    sqlite3_bind_int64(s, 2, task_id);
    sqlite3_bind_int64(s, 3, device_id);
    bind_text(s, 4, row->config);
    bind_columns(s, 5, tess_result_columns, tess_result_ncolumns, row);
    tess_status st = step_done(r, s, "storing a result");
    if (st || row->status != TESS_RESULT_OK || !isfinite(row->time_ms)) return st;

    s = use(r, ST_UPSERT_BEST);
    sqlite3_bind_int64(s, 1, task_id);
    sqlite3_bind_int64(s, 2, device_id);
    sqlite3_bind_int64(s, 3, sqlite3_last_insert_rowid(r->db));
    sqlite3_bind_double(s, 4, row->time_ms);
    bind_text(s, 5, row->config);
    return step_done(r, s, "updating the best config");
}

static tess_status row_from_result(tess_record_row *row, const char *config_text,
                                   const tess_result *res, const char *strategy) {
    memset(row, 0, sizeof *row);
    tess_status st = copy_text(row->config, sizeof row->config, config_text, "config text");
    if (!st) st = copy_text(row->strategy, sizeof row->strategy, strategy, "strategy name");
    if (st) return st;
    if ((unsigned)res->status >= TESS_OUTCOME_COUNT)
        return tess_error(TESS_ERR_ARG, "result status %d out of range", (int)res->status);
    row->status = res->status;
    snprintf(row->message, sizeof row->message, "%s", res->message);
    row->time_ms = res->status == TESS_RESULT_OK ? res->time_ms : INFINITY;
    row->min_ms = res->min_ms;
    row->max_ms = res->max_ms;
    row->spread = res->spread;
    row->reps = res->reps;
    row->gbps = res->gbps;
    row->gflops = res->gflops;
    row->compile_ms = res->compile_ms;
    row->metrics = res->metrics;
    iso_now(row->created_at, sizeof row->created_at);
    return TESS_OK;
}

tess_status tess_records_put_result(tess_records *r, int64_t run_id, const char *config_text,
                                    const tess_result *res, const char *strategy) {
    tess_record_row row;
    int64_t task_id = 0, device_id = 0;
    tess_status st = row_from_result(&row, config_text, res, strategy);
    if (!st) st = tess_records_begin(r);
    if (st) return st;
    st = run_target(r, run_id, &task_id, &device_id);
    if (!st) st = tess_records_insert_row(r, run_id, task_id, device_id, &row);
    if (!st) return tess_records_commit(r);
    tess_records_rollback(r);
    return st;
}

/* ---- queries ------------------------------------------------------------ */

tess_status tess_records_best(tess_records *r, const char *task_key, const char *device_key,
                              tess_record_row *out) {
    sqlite3_stmt *s = use(r, ST_BEST);
    bind_text(s, 1, task_key);
    bind_text(s, 2, device_key);
    int rc = sqlite3_step(s);
    tess_status st = TESS_OK;
    if (rc == SQLITE_ROW)
        read_row(s, out);
    else if (rc == SQLITE_DONE)
        st = tess_error(TESS_ERR_NOTFOUND, "no ok result for %s on %s in %s", task_key, device_key, r->path);
    else
        st = db_error(r, "looking up the best config");
    sqlite3_reset(s);
    return st;
}

tess_status tess_records_foreach(tess_records *r, const char *task_key, const char *device_key,
                                 tess_record_fn fn, void *user) {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(r->db, r->foreach_sql, -1, &s, NULL)) return db_error(r, "reading results");
    bind_text(s, 1, task_key);
    bind_text(s, 2, device_key);
    tess_record_row row;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        read_row(s, &row);
        if (fn(&row, user)) {
            rc = SQLITE_DONE;
            break;
        }
    }
    tess_status st = rc == SQLITE_DONE ? TESS_OK : db_error(r, "reading results");
    sqlite3_finalize(s);
    return st;
}

tess_status tess_records_list(tess_records *r, tess_task_summary_fn fn, void *user) {
    static const char sql[] =
        "SELECT t.key, d.key, count(*), sum(r.status = 'ok'), b.time_ms, b.config"
        " FROM results r JOIN tasks t ON t.id = r.task_id JOIN devices d ON d.id = r.device_id"
        " LEFT JOIN best b ON b.task_id = r.task_id AND b.device_id = r.device_id"
        " GROUP BY r.task_id, r.device_id ORDER BY t.key, d.key";
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(r->db, sql, -1, &s, NULL)) return db_error(r, "listing tasks");
    tess_task_summary sum;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        memset(&sum, 0, sizeof sum);
        column_text(s, 0, sum.task_key, sizeof sum.task_key);
        column_text(s, 1, sum.device_key, sizeof sum.device_key);
        sum.evaluations = sqlite3_column_int(s, 2);
        sum.ok = sqlite3_column_int(s, 3);
        sum.best_ms = sqlite3_column_type(s, 4) == SQLITE_NULL ? INFINITY : sqlite3_column_double(s, 4);
        column_text(s, 5, sum.best_config, sizeof sum.best_config);
        if (fn(&sum, user)) {
            rc = SQLITE_DONE;
            break;
        }
    }
    tess_status st = rc == SQLITE_DONE ? TESS_OK : db_error(r, "listing tasks");
    sqlite3_finalize(s);
    return st;
}
