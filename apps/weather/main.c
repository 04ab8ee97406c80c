/*
 * main.c - tessera-weather: tracers advected and diffused on the sphere by
 * tessera stencils tuned per grid; the commands, and what they share.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "weather.h"

static void help(void) {
    printf("usage: tessera-weather COMMAND [options]\n\n"
           "Tracers on the sphere: conservative second-order flux-form advection with a monotone limiter\n"
           "and COSMO-style limited biharmonic diffusion on latitude-longitude grids, each a tessera\n"
           "stencil tuned for the grid (stencils sphadv and sphdiff).\n\n"
           "commands:\n"
           "  tc1   Williamson et al. (1992) test case 1 at three resolutions and two flow angles:\n"
           "        error norms, convergence order, mass and extrema, written with an SVG picture\n"
           "  gen   write test case 1's initial state (bell and winds) as a CF netCDF file\n"
           "  run   advect (and diffuse) a tracer of a CF netCDF file, writing CF output and a picture\n\n"
           "`tessera-weather COMMAND --help` lists each command's options. Exit status: 0 on success,\n"
           "1 on failure, 2 on a usage error. Records and the compile cache are tessera's ($TESSERA_DB,\n"
           "$TESSERA_CACHE).\n");
}

int weather_usage(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tessera-weather %s: error: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (tessera-weather %s --help)\n", cmd);
    va_end(ap);
    return EXIT_USAGE;
}

int weather_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tessera-weather %s: error: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return EXIT_FAIL;
}

int weather_fail(const char *cmd, tess_status st) {
    const char *msg = tess_errmsg();
    return weather_error(cmd, "%s", *msg ? msg : tess_status_name(st));
}

bool weather_parse_double(const char *cmd, const char *opt, const char *text, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !isfinite(v) || v < lo || v > hi) {
        weather_usage(cmd, "%s takes a number from %g to %g, not '%s'", opt, lo, hi, text);
        return false;
    }
    *out = v;
    return true;
}

bool weather_parse_long(const char *cmd, const char *opt, const char *text, long lo, long hi, long *out) {
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi) {
        weather_usage(cmd, "%s takes an integer from %ld to %ld, not '%s'", opt, lo, hi, text);
        return false;
    }
    *out = v;
    return true;
}

/* The stencils beside the program (the build tree), else where the install puts them. */
static void stencil_dir(char *dir, size_t len) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(dir, len, "weather-stencils");
        return;
    }
    exe[n] = 0;
    const char *bin = dirname(exe);
    snprintf(dir, len, "%s/weather-stencils", bin);
    if (access(dir, R_OK) != 0) snprintf(dir, len, "%s/../share/tessera/weather", bin);
}

tess_status weather_open(tess_context **ctx, const char *db) {
    char dir[PATH_MAX], path[2 * PATH_MAX + 2];
    stencil_dir(dir, sizeof dir);
    const char *user = getenv("TESSERA_STENCIL_PATH");
    if (!user) user = "";
    /* once only: a stencil registered twice would take its own name */
    snprintf(path, sizeof path, ":%s:", user);
    char needle[PATH_MAX + 2];
    snprintf(needle, sizeof needle, ":%s:", dir);
    if (!strstr(path, needle)) {
        snprintf(path, sizeof path, "%s%s%s", dir, *user ? ":" : "", user);
        setenv("TESSERA_STENCIL_PATH", path, 1);
    }
    return tess_open(ctx, db);
}

void weather_progress_init(weather_progress *p, const char *what, bool force) {
    p->what = what;
    p->terminal = isatty(STDERR_FILENO);
    p->show = force || p->terminal;
    p->last = -1;
}

void weather_progress_step(long done, long steps, double elapsed_s, void *user) {
    weather_progress *p = user;
    if (!p->show || (done < steps && elapsed_s - p->last < 1)) return;
    p->last = elapsed_s;
    fprintf(stderr, "%s  %s: step %ld of %ld, %.1f s", p->terminal ? "\r" : "", p->what, done, steps, elapsed_s);
    if (!p->terminal || done == steps) fputc('\n', stderr);
}

int main(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        if (argc < 2) {
            fprintf(stderr, "tessera-weather: error: missing command (tessera-weather --help)\n");
            return EXIT_USAGE;
        }
        help();
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "tc1")) return cmd_tc1(argc - 1, argv + 1);
    if (!strcmp(argv[1], "gen")) return cmd_gen(argc - 1, argv + 1);
    if (!strcmp(argv[1], "run")) return cmd_run(argc - 1, argv + 1);
    fprintf(stderr, "tessera-weather: error: unknown command '%s' (tessera-weather --help)\n", argv[1]);
    return EXIT_USAGE;
}
