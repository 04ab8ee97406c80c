/*
 * records_internal.h - what records.c (the database) shares with
 * records_json.c (JSON lines export and import): the column tables that map
 * struct fields onto table columns and JSON keys, and the few operations
 * the import needs below the public API.
 */
#ifndef TESS_RECORDS_INTERNAL_H
#define TESS_RECORDS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include "records.h"

#define TESS_INTERNAL __attribute__((visibility("hidden")))

typedef enum tess_column_kind {
    TESS_COL_TEXT,      /* char[size] */
    TESS_COL_INT,       /* int */
    TESS_COL_INT64,     /* int64_t */
    TESS_COL_REAL,      /* double; NULL/null when not finite, read back as NAN */
    TESS_COL_MS,        /* a time in ms; NULL/null when not finite, read back as INFINITY */
    TESS_COL_OUTCOME    /* tess_outcome, stored as its name */
} tess_column_kind;

enum {
    TESS_COL_REQUIRED = 1,  /* an import fails when the field is missing */
    TESS_COL_METRIC = 2     /* lives in tess_kernel_metrics ("metrics" in JSON); -1 when unknown */
};

/* One field of a struct that is one column of a table and one JSON key. */
typedef struct tess_column {
    const char *name;
    tess_column_kind kind;
    size_t offset, size;
    int flags;
} tess_column;

/* Descriptor fields of tess_device (the key and the ceilings are handled apart). */
TESS_INTERNAL extern const tess_column tess_device_columns[];
TESS_INTERNAL extern const int tess_device_ncolumns;
/* Fields of tess_record_row stored in the results table, beside the task,
 * device and config. */
TESS_INTERNAL extern const tess_column tess_result_columns[];
TESS_INTERNAL extern const int tess_result_ncolumns;

/* Sets the field of c in the struct at base to its "unknown" value, which
 * is what NULL in the database and null or absent in JSON stand for: "" for
 * text, NAN for reals, INFINITY for times, -1 for metrics, 0 for counts. */
TESS_INTERNAL void tess_column_set_unknown(const tess_column *c, void *base);

/* A write transaction (BEGIN IMMEDIATE, retried while the database is busy). */
TESS_INTERNAL tess_status tess_records_begin(tess_records *r);
/* Commits, or rolls back and fails. */
TESS_INTERNAL tess_status tess_records_commit(tess_records *r);
/* Rolls back, keeping the calling thread's error message. */
TESS_INTERNAL void tess_records_rollback(tess_records *r);

/* The stored descriptor and ceilings of a device (d and device_id may be NULL). */
TESS_INTERNAL tess_status tess_records_find_device(tess_records *r, const char *key, tess_device *d,
                                                   int64_t *device_id, bool *found);
/* Whether a result with this task, device, config and creation time is stored. */
TESS_INTERNAL tess_status tess_records_has_result(tess_records *r, int64_t task_id,
                                                  int64_t device_id, const char *config,
                                                  const char *created_at, bool *found);
/* Inserts a row (run_id 0: no run) and updates the best config; the caller
 * holds the transaction. */
TESS_INTERNAL tess_status tess_records_insert_row(tess_records *r, int64_t run_id, int64_t task_id,
                                                  int64_t device_id, const tess_record_row *row);

#endif
