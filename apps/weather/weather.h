/*
 * weather.h - what the commands of tessera-weather share: exit codes,
 * messages, option parsing and the context with the app's stencils.
 */
#ifndef WEATHER_H
#define WEATHER_H

#include <stdbool.h>
#include <tessera.h>

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* "tessera-weather CMD: error: ..." on stderr; returns EXIT_USAGE. */
int weather_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The library's message for a failed status; returns EXIT_FAIL. */
int weather_fail(const char *cmd, tess_status st);
/* A message of the app's own; returns EXIT_FAIL. */
int weather_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Parses a number within [lo, hi] for option `opt`; false after saying why. */
bool weather_parse_double(const char *cmd, const char *opt, const char *text, double lo, double hi, double *out);
bool weather_parse_long(const char *cmd, const char *opt, const char *text, long lo, long hi, long *out);
/* Adds the app's stencil directory to $TESSERA_STENCIL_PATH and opens the
 * records (db NULL: $TESSERA_DB or the default). */
tess_status weather_open(tess_context **ctx, const char *db);
/* The progress line of a long run on stderr (on a terminal, or when forced). */
typedef struct weather_progress {
    const char *what;
    bool show, terminal;
    double last;
} weather_progress;
void weather_progress_init(weather_progress *p, const char *what, bool force);
void weather_progress_step(long done, long steps, double elapsed_s, void *user);

int cmd_tc1(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_run(int argc, char **argv);

#endif
