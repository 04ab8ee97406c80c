/*
 * cmd_run.c - `tessera-weather run`: a tracer of a CF netCDF file advected
 * (and diffused) with the app's kernels, by the winds of the file or by
 * solid-body rotation, written as CF output with the input's coordinates and
 * attributes, and pictured at the start and the end.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cf.h"
#include "model.h"
#include "svg.h"
#include "tc1.h"
#include "weather.h"

static void help(void) {
    printf("usage: tessera-weather run IN.nc -o OUT.nc [--var NAME] [--time I] [--alpha A] [--hours H]\n"
           "                              [--every H] [--hdiff K4] [--cfl C] [--dtype f32|f64]\n"
           "                              [--backend cpu|cuda] [--tune N] [--library LIB] [--svg PIC.svg]\n"
           "                              [--db PATH] [--progress]\n\n"
           "Advects the tracer NAME (a variable name or standard_name; default q) of a CF netCDF file on a\n"
           "regular latitude-longitude grid, at time index I (default 0), for H hours (default 24), with\n"
           "conservative second-order flux-form advection and a monotone limiter, then, with --hdiff,\n"
           "COSMO-style limited biharmonic diffusion of coefficient K4 (m^4/s; capped per latitude row where\n"
           "it would not be stable). Missing points (_FillValue, missing_value: land in an ocean field) stay\n"
           "missing and nothing flows through their faces.\n\n"
           "  --alpha A     winds of solid-body rotation (Williamson's test case 1, axis tilted by A radians)\n"
           "                instead of the file's eastward_wind and northward_wind at the same time index\n"
           "  --every H     write the tracer every H hours (default: the end only), and at the start\n"
           "  --cfl C       largest sum of a cell's outflow Courant numbers (default 0.5, the monotone bound)\n"
           "  --tune N      tune each kernel never tuned for this grid with N evaluations first (a grid never\n"
           "                tuned is otherwise warm-started from the most similar tuned grid)\n"
           "  --library LIB merge a kernel library (tessera db export --device ...) into the records first\n"
           "  --svg PIC     map of the tracer's first level at the start and the end\n");
}

/* Mass fluxes per second from cell-centred winds (m/s): face winds are the
 * means of the two cells' values; faces of missing points, and the grid's
 * edges towards the poles, carry none. */
static void wind_fluxes(const grid *g, const cf_field *u, const cf_field *v, const unsigned char *missing, double *mx,
                        double *my) {
    memset(mx, 0, sizeof(double) * (size_t)grid_padded_3d(g));
    memset(my, 0, sizeof(double) * (size_t)grid_padded_3d(g));
    for (int k = 0; k < g->nz; k++)
        for (int j = 0; j < g->nlat; j++)
            for (int i = 0; i < g->nlon; i++) {
                int64_t p = grid_at(g, k, j, i), w = grid_at(g, k, j, (i + g->nlon - 1) % g->nlon);
                int64_t s = j ? grid_at(g, k, j - 1, i) : p;
                int closed_x = missing[p] || missing[w] || u->missing[p] || u->missing[w];
                int closed_y = !j || missing[p] || missing[s] || v->missing[p] || v->missing[s];
                double dlat = g->lat_edge[j + 1] - g->lat_edge[j];
                mx[p] = closed_x ? 0 : 0.5 * (u->q[p] + u->q[w]) / TC1_RADIUS * dlat;
                my[p] = closed_y ? 0 : 0.5 * (v->q[p] + v->q[s]) / TC1_RADIUS * cos(g->lat_edge[j]) * g->dlon;
            }
}

static double seconds_per_unit(const char *units) {
    if (!strncmp(units, "days", 4) || !strncmp(units, "day ", 4)) return 86400;
    if (!strncmp(units, "hours", 5) || !strncmp(units, "hour ", 5)) return 3600;
    if (!strncmp(units, "minutes", 7) || !strncmp(units, "minute ", 7)) return 60;
    return 1;
}

static void extrema_and_mass(const grid *g, const double *q, const unsigned char *missing, double out[3]) {
    out[0] = INFINITY, out[1] = -INFINITY, out[2] = 0;
    for (int k = 0; k < g->nz; k++)
        for (int j = 0; j < g->nlat; j++)
            for (int i = 0; i < g->nlon; i++) {
                int64_t p = grid_at(g, k, j, i);
                if (missing[p]) continue;
                out[0] = fmin(out[0], q[p]);
                out[1] = fmax(out[1], q[p]);
                out[2] += g->area[j] * q[p];
            }
}

typedef struct run_args {
    const char *in, *out, *var, *svg, *library, *db;
    long time, tune;
    double hours, every, k4, cfl, alpha;
    int analytic;
    model_options mo;
    bool progress;
} run_args;

static int parse(int argc, char **argv, run_args *a) {
    static const struct option options[] = {
        {"var", required_argument, 0, 'v'}, {"time", required_argument, 0, 'i'}, {"alpha", required_argument, 0, 'a'},
        {"hours", required_argument, 0, 'H'}, {"every", required_argument, 0, 'e'}, {"hdiff", required_argument, 0, 'k'},
        {"cfl", required_argument, 0, 'c'}, {"dtype", required_argument, 0, 't'}, {"backend", required_argument, 0, 'b'},
        {"tune", required_argument, 0, 'T'}, {"library", required_argument, 0, 'L'}, {"svg", required_argument, 0, 's'},
        {"db", required_argument, 0, 'd'}, {"progress", no_argument, 0, 'p'}, {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":ho:", options, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case 'o': a->out = optarg; break;
        case 'v': a->var = optarg; break;
        case 'i': ok = weather_parse_long("run", "--time", optarg, 0, 1L << 40, &a->time); break;
        case 'a': ok = weather_parse_double("run", "--alpha", optarg, -M_PI, M_PI, &a->alpha), a->analytic = 1; break;
        case 'H': ok = weather_parse_double("run", "--hours", optarg, 1e-3, 1e6, &a->hours); break;
        case 'e': ok = weather_parse_double("run", "--every", optarg, 1e-3, 1e6, &a->every); break;
        case 'k': ok = weather_parse_double("run", "--hdiff", optarg, 0, 1e30, &a->mo.k4); break;
        case 'c': ok = weather_parse_double("run", "--cfl", optarg, 0.01, 1, &a->cfl); break;
        case 't': a->mo.dtype = optarg; break;
        case 'b': a->mo.backend = optarg; break;
        case 'T': ok = weather_parse_long("run", "--tune", optarg, 1, 100000, &a->tune); break;
        case 'L': a->library = optarg; break;
        case 's': a->svg = optarg; break;
        case 'd': a->db = optarg; break;
        case 'p': a->progress = true; break;
        case 'h': help(); return -1;
        case ':': return weather_usage("run", "option %s needs a value", argv[optind - 1]);
        default: return weather_usage("run", "unknown option '%s'", argv[optind - 1]);
        }
        if (!ok) return EXIT_USAGE;
    }
    if (optind == argc) return weather_usage("run", "missing the input file");
    if (optind != argc - 1) return weather_usage("run", "expected one input file, got '%s' too", argv[optind + 1]);
    a->in = argv[optind];
    if (!a->out) return weather_usage("run", "missing -o OUT.nc");
    if (strcmp(a->mo.dtype, "f32") && strcmp(a->mo.dtype, "f64"))
        return weather_usage("run", "--dtype is f32 or f64, not '%s'", a->mo.dtype);
    if (strcmp(a->mo.backend, "cpu") && strcmp(a->mo.backend, "cuda"))
        return weather_usage("run", "--backend is cpu or cuda, not '%s'", a->mo.backend);
    if (a->every > a->hours) return weather_usage("run", "--every %g is longer than the run (--hours %g)", a->every, a->hours);
    a->mo.tune = (int)a->tune;
    return EXIT_OK;
}

/* The run itself, once the inputs are read: returns an exit code. */
static int simulate(const run_args *a, const cf_field *f, const double *mx, const double *my) {
    const grid *g = &f->g;
    double per_s = model_courant_per_second(g, mx, my);
    long outputs = a->every > 0 ? (long)ceil(a->hours / a->every - 1e-9) : 1;
    double span_s = a->hours * 3600 / (double)outputs;
    long per_output = per_s > 0 ? (long)ceil(span_s * per_s / a->cfl) : 1;
    double dt = span_s / (double)per_output;
    tess_context *ctx;
    tess_status st = weather_open(&ctx, a->db);
    if (st) return weather_fail("run", st);
    int count, rc = EXIT_OK;
    if (a->library) {
        if ((st = tess_db_import(ctx, a->library, &count))) {
            tess_close(ctx);
            return weather_fail("run", st);
        }
        printf("  library  %s: %d records added\n", a->library, count);
    }
    model m;
    if ((st = model_open(&m, ctx, g, &a->mo, dt, mx, my))) {
        tess_close(ctx);
        return weather_fail("run", st);
    }
    printf("  advect   sphadv, %s config (%s): %s\n", tess_kernel_origin(m.adv.k), tess_kernel_note(m.adv.k),
           tess_kernel_config(m.adv.k));
    if (m.diffuse)
        printf("  diffuse  sphdiff K4 %.3g m^4/s, capped on %d of %d rows; %s config: %s\n", a->mo.k4, m.capped_rows,
               g->nlat, tess_kernel_origin(m.diff.k), tess_kernel_config(m.diff.k));
    printf("  steps    %ld of %.1f s (%ld between outputs)\n", outputs * per_output, dt, per_output);
    size_t n = (size_t)grid_padded_3d(g);
    double *q = malloc(sizeof(double) * n);
    char err[1024], history[1024];
    snprintf(history, sizeof history, "tessera-weather run %s --var %s --time %ld --hours %g%s --hdiff %g -o %s", a->in,
             a->var, a->time, a->hours, a->analytic ? " --alpha (solid-body winds)" : "", a->mo.k4, a->out);
    const cf_var_desc desc = {f->var, NULL, NULL, NULL};
    cf_out o = {.nc = -1};
    double t0 = f->time_value, unit = seconds_per_unit(f->time_units);
    const double *fields[1] = {q};
    if (!q) rc = weather_error("run", "out of memory");
    else if (cf_out_create(&o, a->out, g, f, a->in, &desc, 1, *f->time_units ? f->time_units : NULL, NULL, history, err,
                           sizeof err) ||
             cf_out_write(&o, t0, (const double *const[]){f->q}, f->missing, err, sizeof err))
        rc = weather_error("run", "%s", err);
    weather_progress p;
    weather_progress_init(&p, "advection", a->progress);
    struct timespec ta, tb;
    clock_gettime(CLOCK_MONOTONIC, &ta);
    if (!rc && (st = model_set(&m, f->q))) rc = weather_fail("run", st);
    for (long k = 1; k <= outputs && !rc; k++) {
        if ((st = model_run(&m, per_output, weather_progress_step, &p)) || (st = model_get(&m, q))) rc = weather_fail("run", st);
        else if (cf_out_write(&o, t0 + (double)k * span_s / unit, fields, f->missing, err, sizeof err))
            rc = weather_error("run", "%s", err);
    }
    clock_gettime(CLOCK_MONOTONIC, &tb);
    if (cf_out_close(&o, err, sizeof err) && !rc) rc = weather_error("run", "%s", err);
    double secs = (double)(tb.tv_sec - ta.tv_sec) + 1e-9 * (double)(tb.tv_nsec - ta.tv_nsec);
    if (!rc) {
        double before[3], after[3];
        extrema_and_mass(g, f->q, f->missing, before);
        extrema_and_mass(g, q, f->missing, after);
        printf("  time     %.2f s, %.3f ms per step\n", secs, 1e3 * secs / (double)(outputs * per_output));
        printf("  tracer   min %.6g -> %.6g, max %.6g -> %.6g, global integral changed by %.3g (relative)\n", before[0],
               after[0], before[1], after[1], before[2] ? (after[2] - before[2]) / before[2] : 0.0);
        printf("  output   %s (%ld times)\n", a->out, outputs + 1);
    }
    if (!rc && a->svg) {
        svg_panel panels[2] = {{g, f->q, f->missing, "start"}, {g, q, f->missing, "end"}};
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < n; i++)
            if (!f->missing[i] && (i / (size_t)g->nlon) % (size_t)(g->nlat + 2 * GRID_PAD) >= GRID_PAD &&
                (i / (size_t)g->nlon) % (size_t)(g->nlat + 2 * GRID_PAD) < (size_t)(g->nlat + GRID_PAD))
                lo = fmin(lo, f->q[i]), hi = fmax(hi, f->q[i]);
        if (!(hi > lo)) hi = lo + 1;
        char title[512];
        snprintf(title, sizeof title, "%s of %s: start and after %g hours", f->var, a->in, a->hours);
        if (svg_write_maps(a->svg, title, panels, 2, 2, lo, hi)) rc = weather_error("run", "cannot write '%s'", a->svg);
        else printf("  picture  %s\n", a->svg);
    }
    free(q);
    model_close(&m);
    tess_close(ctx);
    return rc;
}

int cmd_run(int argc, char **argv) {
    run_args a = {.var = "q", .hours = 24, .cfl = 0.5, .mo = {"f32", "cpu", 0, 0, TC1_RADIUS}};
    int rc = parse(argc, argv, &a);
    if (rc) return rc < 0 ? EXIT_OK : rc;
    tess_status st;
    if ((st = tess_output_check(a.out)) || (a.svg && (st = tess_output_check(a.svg)))) return weather_fail("run", st);
    char err[1024];
    cf_field f, u = {0}, v = {0};
    if (cf_read(a.in, a.var, a.time, &f, err, sizeof err)) return weather_error("run", "%s", err);
    printf("tessera-weather run: '%s' of %s, %d x %d x %d (levels x latitudes x longitudes)%s, %lld missing points%s\n",
           f.var, a.in, f.g.nz, f.g.nlat, f.g.nlon, f.g.global ? "" : ", a regional grid with closed edges",
           (long long)f.nmissing, f.packed ? ", unpacked by scale_factor/add_offset" : "");
    size_t n = (size_t)grid_padded_3d(&f.g);
    double *mx = malloc(sizeof(double) * n), *my = malloc(sizeof(double) * n);
    if (!mx || !my) rc = weather_error("run", "out of memory");
    else if (a.mo.k4 > 0 && f.nmissing)
        rc = weather_error("run", "--hdiff: '%s' of %s has %lld missing points, and the diffusion has no coastlines yet",
                           f.var, a.in, (long long)f.nmissing);
    else if (a.analytic) {
        tc1_fluxes(&f.g, a.alpha, mx, my);
        for (size_t i = 0; i < n; i++)   /* no flux into or out of missing points */
            if (f.missing[i] || f.missing[i % (size_t)f.g.nlon ? i - 1 : i + (size_t)f.g.nlon - 1])
                mx[i] = 0;
        for (size_t i = (size_t)f.g.nlon; i < n; i++)
            if (f.missing[i] || f.missing[i - (size_t)f.g.nlon]) my[i] = 0;
    } else if (cf_read(a.in, "eastward_wind", a.time, &u, err, sizeof err) ||
               cf_read(a.in, "northward_wind", a.time, &v, err, sizeof err)) {
        rc = weather_error("run", "%s (give --alpha A for solid-body winds)", err);
    } else if (u.g.nz != f.g.nz || u.g.nlat != f.g.nlat || u.g.nlon != f.g.nlon || v.g.nz != f.g.nz ||
               v.g.nlat != f.g.nlat || v.g.nlon != f.g.nlon) {
        rc = weather_error("run", "%s: the winds '%s' and '%s' are not on the grid of '%s'", a.in, u.var, v.var, f.var);
    } else {
        wind_fluxes(&f.g, &u, &v, f.missing, mx, my);
    }
    if (!rc) rc = simulate(&a, &f, mx, my);
    free(mx);
    free(my);
    cf_field_free(&f);
    cf_field_free(&u);
    cf_field_free(&v);
    return rc;
}
