/* cli.h - shared pieces of the tessera command-line tool. */
#ifndef TESS_CLI_H
#define TESS_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "core/tessera.h"

/* 130: stopped by Ctrl-C (128 + SIGINT, as shells report it). */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_INTERRUPTED = 130 };

/* Prints "tessera: error: <message>" and returns the exit code for st. */
int cli_fail(const char *what);
int cli_fail_status(tess_status st);
/* Prints a usage error with a hint to --help and returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Parses a positive integer option value; false (after printing) if malformed. */
bool cli_parse_int(const char *cmd, const char *opt, const char *text, long lo, long hi, long *out);
bool cli_parse_double(const char *cmd, const char *opt, const char *text, double lo, double *out);

/* Options shared by the commands that name a task. */
typedef struct cli_task {
    const char *op;
    const char *shape_text;     /* NULL: the operator's default shape */
    const char *dtype;
    const char *backend;        /* NULL: the best present */
    const char *db;             /* NULL: $TESSERA_DB or the default path */
    char shape_buf[128];        /* the parsed shape, normalized */
    int64_t shape[TESS_SHAPE_MAX];
    int ndim;
} cli_task;

/* Fills the shape from shape_text or the operator's default (after the
 * built-ins are registered) and points shape_text at its normalized text;
 * returns an exit code (0 = fine). */
int cli_task_shape(const char *cmd, cli_task *t);

/* Ctrl-C stops a search after the candidates in flight: points opt->cancel
 * at a flag the handler sets; a second Ctrl-C ends the process. */
void cli_catch_interrupt(tess_tune_options *opt);
/* Whether Ctrl-C was pressed since cli_catch_interrupt. */
bool cli_interrupted(void);

/* word when n is 1, else words. */
const char *cli_plural(long n, const char *word, const char *words);

/* A config "a=1,b=zy" as a JSON object {"a": 1, "b": "zy"} (new reference). */
json_t *cli_config_json(const char *config);
/* Exports the records (or, with library, the device's kernel library) to
 * output, else standard output; a file left unfinished is removed. An exit code. */
int cli_export(tess_context *ctx, const char *output, const char *task, const char *device_key, bool library);
/* Prints a JSON document on standard output and releases it; an exit code. */
int cli_print_json(json_t *doc);

int cmd_tune(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_ops(int argc, char **argv);
int cmd_strategies(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_db(int argc, char **argv);
int cmd_cache(int argc, char **argv);
int cmd_tune_all(int argc, char **argv);
int tess_cmd_bench(int argc, char **argv);
int tess_cmd_bench_transfer(int argc, char **argv);

#endif
