/*
 * main.c - tessera-fluid: lid-driven cavities and channel flow with the
 * lattice Boltzmann operators (lbm_d2q9, lbm_d3q19) of tessera, from a
 * netCDF input (mask and parameters) or a named case, run with the tuned
 * stream-collide kernel on the CPU or the GPU, written as CF netCDF, an SVG
 * picture and a table of the profiles beside the literature.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fluid.h"

static void usage(FILE *fp) {
    fprintf(fp,
        "usage: tessera-fluid (--case NAME [case options] | --input FILE) [run options]\n"
        "\n"
        "Runs a lattice Boltzmann flow to steady state with tessera's stream-collide kernel\n"
        "(one fused step: pull streaming, bounce-back walls, Ladd's moving walls and inlets,\n"
        "pressure outlets, BGK or TRT collision), verified against a float64 reference step\n"
        "when it is tuned or first used, and compares the result with the literature.\n"
        "\n"
        "input (one of):\n"
        "  --case NAME         cavity2d (D2Q9 lid-driven cavity), cavity3d (D3Q19 cube with a lid)\n"
        "                      or channel (D2Q9 plane channel, velocity inlet, pressure outlet)\n"
        "  --input FILE        netCDF: an integer variable 'mask' on (y, x) or (z, y, x) with cell\n"
        "                      kinds 0 fluid, 1 wall, 2 moving wall or inlet (moves at 'velocity'\n"
        "                      along x), 3 outlet, and global attributes lattice (d2q9 or d3q19),\n"
        "                      reynolds, velocity, length (cells Re is measured on), steps,\n"
        "                      output_interval and optionally tolerance\n"
        "case options:\n"
        "  --size N            fluid cells across the cavity or the channel (default 129; the\n"
        "                      channel is 8 N long)\n"
        "  --re R              Reynolds number U N / nu (default 100)\n"
        "  --velocity U        lid or inlet speed in lattice units (default 0.1 for the cavities,\n"
        "                      0.05 for the channel, whose density rises by 36 U^2 L / (Re H) along it)\n"
        "  --write-input FILE  write the case's input file (then run, unless --no-run)\n"
        "  --no-run            only write the input\n"
        "run options:\n"
        "  --steps S           at most S steps (default: the input's steps)\n"
        "  --interval K        output frame every K steps (default: the input's output_interval)\n"
        "  --tolerance T       steady when the velocity changes by less than T U over 1000 steps\n"
        "                      (default: the input's, else 1e-6; 0: run every step)\n"
        "  --backend B         cpu or cuda (default cpu)\n"
        "  --dtype D           population storage: f32 (default), f64, or f16 (cuda)\n"
        "  --collision C       bgk (default) or trt\n"
        "  --layout L          soa (default) or aos\n"
        "  --tune N            tune the kernel with N evaluations first (results go to the records)\n"
        "  --db PATH           records database (default $TESSERA_DB)\n"
        "  --check N           run the float64 reference for the first N steps beside the kernel\n"
        "                      and fail above its tolerance\n"
        "  --output FILE       CF netCDF: u, v (w), rho, vorticity per frame, mask, history\n"
        "  --svg FILE          picture: speed field and the profiles with the reference\n"
        "  --table FILE        the profiles beside the reference, as text\n"
        "  --max-deviation D   fail (exit 1) when a cavity's centreline deviates from Ghia et al.\n"
        "                      (1982) by more than D U at any of their points\n"
        "  --max-l2 E          fail when the channel's profile is further than E (L2, relative)\n"
        "                      from Poiseuille's parabola\n"
        "  --max-mass-drift M  fail when the fluid's mass changes by more than M (relative)\n"
        "  --progress          a progress line on standard error (default on a terminal)\n"
        "\n"
        "Exit status: 0 done, 1 failure or a bound exceeded, 2 usage error.\n"
        "Example: tessera-fluid --case cavity2d --size 129 --re 100 --table cavity.txt --svg cavity.svg\n");
}

static int usage_error(const char *fmt, const char *what) {
    fprintf(stderr, "tessera-fluid: error: ");
    fprintf(stderr, fmt, what);
    fprintf(stderr, "\n(tessera-fluid --help lists the options)\n");
    return FLUID_USAGE;
}

static bool parse_double(const char *opt, const char *text, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v >= lo && v <= hi)) {
        fprintf(stderr, "tessera-fluid: error: %s '%s' is not a number in [%g, %g]\n", opt, text, lo, hi);
        return false;
    }
    *out = v;
    return true;
}

static bool parse_long(const char *opt, const char *text, long lo, long hi, long *out) {
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi) {
        fprintf(stderr, "tessera-fluid: error: %s '%s' is not a whole number in [%ld, %ld]\n", opt, text, lo, hi);
        return false;
    }
    *out = v;
    return true;
}

static bool one_of(const char *text, const char *a, const char *b, const char *c) {
    return strcmp(text, a) == 0 || strcmp(text, b) == 0 || (c && strcmp(text, c) == 0);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);   /* each summary line as it comes, also into a file */
    fluid_options o = fluid_options_default();
    const char *case_name = NULL, *input = NULL, *write_input = NULL;
    long size = 129, steps = -1, interval = -1;
    double re = 100, velocity = 0, tolerance = -1;   /* velocity 0: the case's default */
    bool no_run = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return FLUID_OK;
        }
        if (strcmp(a, "--no-run") == 0) { no_run = true; continue; }
        if (strcmp(a, "--progress") == 0) { o.progress = true; continue; }
        if (strncmp(a, "--", 2) != 0) return usage_error("unexpected argument '%s'", a);
        if (i + 1 >= argc) return usage_error("%s needs a value", a);
        const char *v = argv[++i];
        bool ok = true;
        if (strcmp(a, "--case") == 0) case_name = v;
        else if (strcmp(a, "--input") == 0) input = v;
        else if (strcmp(a, "--write-input") == 0) write_input = v;
        else if (strcmp(a, "--size") == 0) ok = parse_long(a, v, 4, 4096, &size);
        else if (strcmp(a, "--re") == 0) ok = parse_double(a, v, 1e-3, 1e5, &re);
        else if (strcmp(a, "--velocity") == 0) ok = parse_double(a, v, 1e-6, 0.3, &velocity);
        else if (strcmp(a, "--steps") == 0) ok = parse_long(a, v, 1, 2000000000L, &steps);
        else if (strcmp(a, "--interval") == 0) ok = parse_long(a, v, 1, 2000000000L, &interval);
        else if (strcmp(a, "--tolerance") == 0) ok = parse_double(a, v, 0, 1, &tolerance);
        else if (strcmp(a, "--check") == 0) ok = parse_long(a, v, 1, 1000000, &o.check_steps);
        else if (strcmp(a, "--tune") == 0) ok = parse_long(a, v, 1, 100000, &o.tune_budget);
        else if (strcmp(a, "--max-deviation") == 0) ok = parse_double(a, v, 0, 10, &o.max_deviation);
        else if (strcmp(a, "--max-l2") == 0) ok = parse_double(a, v, 0, 10, &o.max_l2);
        else if (strcmp(a, "--max-mass-drift") == 0) ok = parse_double(a, v, 0, 1, &o.max_mass_drift);
        else if (strcmp(a, "--backend") == 0) {
            if (!one_of(v, "cpu", "cuda", NULL)) return usage_error("--backend '%s' is neither cpu nor cuda", v);
            o.backend = v;
        } else if (strcmp(a, "--dtype") == 0) {
            if (!one_of(v, "f32", "f64", "f16")) return usage_error("--dtype '%s' is not f32, f64 or f16", v);
            o.dtype = v;
        } else if (strcmp(a, "--collision") == 0) {
            if (!one_of(v, "bgk", "trt", NULL)) return usage_error("--collision '%s' is neither bgk nor trt", v);
            o.collision = v;
        } else if (strcmp(a, "--layout") == 0) {
            if (!one_of(v, "soa", "aos", NULL)) return usage_error("--layout '%s' is neither soa nor aos", v);
            o.layout = v;
        } else if (strcmp(a, "--db") == 0) o.db = v;
        else if (strcmp(a, "--output") == 0) o.output = v;
        else if (strcmp(a, "--svg") == 0) o.svg = v;
        else if (strcmp(a, "--table") == 0) o.table = v;
        else return usage_error("unknown option '%s'", a);
        if (!ok) return FLUID_USAGE;
    }
    if (!case_name == !input) return usage_error("%s", "give either --case or --input");
    if (input && (write_input || no_run)) return usage_error("%s", "--write-input and --no-run go with --case");
    if (no_run && !write_input) return usage_error("%s", "--no-run needs --write-input");
    if (!o.progress) o.progress = isatty(STDERR_FILENO);
    if (strcmp(o.dtype, "f16") == 0 && strcmp(o.backend, "cuda") != 0)
        return usage_error("--dtype f16 is for the cuda backend (the cpu kernels store %s)", "f32 or f64");

    /* Every file the run writes is checked before anything runs. */
    const char *outs[] = {write_input, o.output, o.svg, o.table};
    for (size_t k = 0; k < sizeof outs / sizeof outs[0]; k++)
        if (outs[k] && tess_output_check(outs[k]) != TESS_OK) {
            fprintf(stderr, "tessera-fluid: error: %s\n", tess_errmsg());
            return FLUID_FAIL;
        }

    fluid_case c;
    char err[1024] = "";
    if (velocity == 0) velocity = case_name && strcmp(case_name, "channel") == 0 ? 0.05 : 0.1;
    int st = case_name ? fluid_case_build(case_name, size, re, velocity, &c, err, sizeof err)
                       : fluid_case_read(input, &c, err, sizeof err);
    if (st) {
        fprintf(stderr, "tessera-fluid: error: %s\n", err);
        return st;
    }
    if (write_input) {
        st = fluid_case_write(&c, write_input, err, sizeof err);
        if (st) fprintf(stderr, "tessera-fluid: error: %s\n", err);
        else printf("  input    %s (%s, %s)\n", write_input, c.name, c.lat->name);
    }
    if (steps > 0) c.steps = steps;
    if (interval > 0) c.interval = interval;
    if (tolerance >= 0) c.tolerance = tolerance;
    if (!st && !no_run) st = fluid_run(&c, &o);
    fluid_case_free(&c);
    return st;
}
