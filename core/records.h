/*
 * records.h - the records database (SQLite, WAL mode): the experience pool
 * and the kernel library at once. Devices with their calibrated ceilings,
 * tasks, tuning runs, every evaluated config with its status, times,
 * metrics and strategy, and the best config per task and device.
 *
 * Each result is committed as it arrives, so killing a tuner loses at most
 * the candidates in flight. Several processes may write one database at
 * once (WAL plus a busy timeout).
 */
#ifndef TESS_RECORDS_H
#define TESS_RECORDS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "device.h"
#include "result.h"
#include "task.h"

typedef struct tess_records tess_records;

/* Default path: $TESSERA_DB, else $XDG_DATA_HOME/tessera/records.db, else
 * ~/.local/share/tessera/records.db. */
tess_status tess_records_default_path(char *buf, size_t len);
/* Opens (creating the file, its directory and the schema if needed). A file
 * that is not a tessera database is refused with TESS_ERR_DB and a message.
 * A database this process cannot write (the file or its directory is
 * read-only) is opened for reading only, as tess_records_open_readonly does. */
tess_status tess_records_open(const char *path, tess_records **out);
/* Opens an existing database for reading only: never creates a file or a
 * directory (TESS_ERR_NOTFOUND when there is no file at path) and never
 * writes; writes fail with TESS_ERR_DB. Works on a read-only file in a
 * read-only directory. Where this process may write the file and its
 * directory, the connection locks as any reader does, so the commits of a
 * tuner writing at the same time are seen. Where it may not, it reads
 * through the -wal and -shm files of a writer that has the database open;
 * without them the file is read as immutable: a writer that starts later is
 * not seen by this connection (reopen to see its results). */
tess_status tess_records_open_readonly(const char *path, tess_records **out);
bool tess_records_readonly(const tess_records *r);
void tess_records_close(tess_records *r);
const char *tess_records_path(const tess_records *r);

/* Inserts or updates a device by key; a ceiling of d without a calibration
 * time keeps the one stored. */
tess_status tess_records_put_device(tess_records *r, const tess_device *d, int64_t *device_id);
/* Fills d's ceilings from the database where one is stored measured. */
tess_status tess_records_load_ceilings(tess_records *r, tess_device *d);
/* Stores a calibration: every ceiling of d, indexed by tess_ceiling_kind
 * (0 where the unit is not present), measured now; d's ceilings become
 * those. */
tess_status tess_records_set_ceilings(tess_records *r, tess_device *d,
                                      const double rates[TESS_CEILING_COUNT]);

tess_status tess_records_put_task(tess_records *r, const tess_task *t, const char *family,
                                  int64_t *task_id);

/* A tuning run: which strategy, seed and budget, and why it stopped. */
tess_status tess_records_begin_run(tess_records *r, int64_t task_id, int64_t device_id,
                                   const char *strategy, uint64_t seed, int budget,
                                   int64_t *run_id);
tess_status tess_records_end_run(tess_records *r, int64_t run_id, const char *stop_reason,
                                 int evaluations);

/* Stores one evaluated config (config_text: "name=value,...") and, in the
 * same transaction, updates the best config of its task and device. */
tess_status tess_records_put_result(tess_records *r, int64_t run_id, const char *config_text,
                                    const tess_result *res, const char *strategy);

/* A stored result, as read back. */
typedef struct tess_record_row {
    int64_t id;
    char task_key[TESS_KEY_MAX];
    char family[32];
    char device_key[TESS_KEY_MAX];
    char config[1024];
    tess_outcome status;
    char message[512];
    double time_ms, min_ms, max_ms, spread;
    int reps;
    double gbps, gflops, compile_ms;
    tess_kernel_metrics metrics;
    char strategy[32];
    char created_at[32];        /* ISO 8601, UTC */
} tess_record_row;

/* Best ok config of a task on a device; TESS_ERR_NOTFOUND if none. */
tess_status tess_records_best(tess_records *r, const char *task_key, const char *device_key,
                              tess_record_row *out);

/* Calls fn for each stored result matching the filters (NULL: any), oldest
 * first. fn returns non-zero to stop early. */
typedef int (*tess_record_fn)(const tess_record_row *row, void *user);
tess_status tess_records_foreach(tess_records *r, const char *task_key, const char *device_key,
                                 tess_record_fn fn, void *user);

/* One line per (task, device): evaluations, ok count, best time and config. */
typedef struct tess_task_summary {
    char task_key[TESS_KEY_MAX];
    char device_key[TESS_KEY_MAX];
    int evaluations, ok;
    double best_ms;
    char best_config[1024];
} tess_task_summary;
typedef int (*tess_task_summary_fn)(const tess_task_summary *s, void *user);
tess_status tess_records_list(tess_records *r, tess_task_summary_fn fn, void *user);

/* JSON lines: one result per line with its task, device (descriptor
 * included) and config. Import merges, skipping results already present;
 * malformed lines fail with their line number, having imported nothing. */
tess_status tess_records_export_jsonl(tess_records *r, FILE *out, const char *task_key,
                                      const char *device_key, int *count);
tess_status tess_records_import_jsonl(tess_records *r, FILE *in, const char *source_name,
                                      int *count);

#endif
