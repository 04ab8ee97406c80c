/*
 * cmd_tc1.c - `tessera-weather tc1`: Williamson's test case 1 at several
 * resolutions and flow angles with the app's kernels: the normalized error
 * norms after one revolution, their convergence order, mass conservation and
 * extrema, written as a table, JSON and an SVG picture of the bell.
 */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "model.h"
#include "svg.h"
#include "tc1.h"
#include "weather.h"

#define TC1_MAX 8

static void help(void) {
    printf("usage: tessera-weather tc1 [--rows N,N,...] [--alpha A,A,...] [--dtype f32|f64] [--backend cpu|cuda]\n"
           "                           [--cfl C] [--tune N] [--out DIR] [--db PATH] [--progress]\n\n"
           "Williamson et al. (1992) test case 1: the cosine bell carried once around the sphere (12 days)\n"
           "by solid-body rotation, at each resolution (rows of latitude; twice as many columns) and flow\n"
           "angle. Reports the normalized l1, l2 and linf errors against the initial bell, their order of\n"
           "convergence between successive resolutions, the relative change of the global integral and the\n"
           "extrema before and after.\n\n"
           "  --rows     latitude rows of each resolution (default 32,64,128: 5.6, 2.8, 1.4 degrees)\n"
           "  --alpha    flow angles in radians (default 0,1.5207963: along the equator, and\n"
           "             pi/2 - 0.05, across both poles)\n"
           "  --dtype    of the kernels (default f64, so that mass conservation shows at round-off)\n"
           "  --cfl      largest sum of a cell's outflow Courant numbers (default 0.5, the monotone bound)\n"
           "  --tune N   tune each kernel never tuned for its grid with N evaluations first\n"
           "  --out DIR  write tc1.txt, tc1.json and tc1.svg there (default data/weather)\n");
}

static int parse_list(const char *opt, const char *text, double lo, double hi, double *v, int *n) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    *n = 0;
    for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (*n == TC1_MAX) return weather_usage("tc1", "%s takes at most %d values", opt, TC1_MAX);
        if (!weather_parse_double("tc1", opt, t, lo, hi, &v[(*n)++])) return EXIT_USAGE;
    }
    return *n ? EXIT_OK : weather_usage("tc1", "%s needs at least one value", opt);
}

typedef struct tc1_case {
    int rows;
    double alpha, dt;
    long steps;
    double seconds;
    tc1_norms n;
    double *q0, *q;   /* initial and final, padded (kept for the picture) */
    grid g;
} tc1_case;

/* Runs one case; returns an exit code, having said what failed. */
static int run_case(tess_context *ctx, const model_options *mo, double cfl, bool progress, tc1_case *c) {
    if (grid_init_global(&c->g, 1, c->rows)) return weather_error("tc1", "out of memory");
    int64_t n = grid_padded_3d(&c->g);
    double *mx = malloc(sizeof(double) * (size_t)n), *my = malloc(sizeof(double) * (size_t)n);
    c->q0 = malloc(sizeof(double) * (size_t)n);
    c->q = malloc(sizeof(double) * (size_t)n);
    if (!mx || !my || !c->q0 || !c->q) {
        free(mx);
        free(my);
        return weather_error("tc1", "out of memory");
    }
    tc1_fluxes(&c->g, c->alpha, mx, my);
    tc1_bell(&c->g, c->q0);
    c->steps = (long)ceil(TC1_PERIOD * model_courant_per_second(&c->g, mx, my) / cfl);
    c->dt = TC1_PERIOD / (double)c->steps;
    model m;
    tess_status st = model_open(&m, ctx, &c->g, mo, c->dt, mx, my);
    free(mx);
    free(my);
    if (st) return weather_fail("tc1", st);
    char what[96];
    snprintf(what, sizeof what, "%d x %d, alpha %.4f", c->g.nlat, c->g.nlon, c->alpha);
    weather_progress p;
    weather_progress_init(&p, what, progress);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (!(st = model_set(&m, c->q0)) && !(st = model_run(&m, c->steps, weather_progress_step, &p)))
        st = model_get(&m, c->q);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    c->seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("  %-24s kernel %s (%s)\n", what, tess_kernel_origin(m.adv.k), tess_kernel_config(m.adv.k));
    model_close(&m);
    if (st) return weather_fail("tc1", st);
    tc1_measure(&c->g, c->q, c->q0, c->q0, &c->n);   /* after one revolution the exact solution is the start */
    return EXIT_OK;
}

/* The order of convergence of an error from case a to the finer case b. */
static double order(double ea, double eb, int rows_a, int rows_b) { return log(ea / eb) / log((double)rows_b / rows_a); }

static void report(FILE *f, const tc1_case *cs, int nres, int nalpha, const char *dtype, const char *backend) {
    fprintf(f, "Williamson et al. (1992) test case 1, one revolution (12 days); %s on %s\n", dtype, backend);
    fprintf(f, "%-8s %-7s %-10s %7s %10s %10s %10s %6s %6s %6s %11s %10s %10s %8s\n", "alpha", "grid", "degrees",
            "steps", "l1", "l2", "linf", "o(l1)", "o(l2)", "o(linf)", "mass", "min", "max-max0", "time_s");
    for (int a = 0; a < nalpha; a++)
        for (int r = 0; r < nres; r++) {
            const tc1_case *c = &cs[a * nres + r], *prev = r ? c - 1 : NULL;
            char gridtext[32], o[3][16] = {"-", "-", "-"};
            snprintf(gridtext, sizeof gridtext, "%dx%d", c->g.nlon, c->g.nlat);
            if (prev) {
                snprintf(o[0], 16, "%.2f", order(prev->n.l1, c->n.l1, prev->rows, c->rows));
                snprintf(o[1], 16, "%.2f", order(prev->n.l2, c->n.l2, prev->rows, c->rows));
                snprintf(o[2], 16, "%.2f", order(prev->n.linf, c->n.linf, prev->rows, c->rows));
            }
            fprintf(f, "%-8.4f %-7s %-10.3f %7ld %10.4e %10.4e %10.4e %6s %6s %6s %11.3e %10.3e %10.3e %8.2f\n",
                    c->alpha, gridtext, 180.0 / c->rows, c->steps, c->n.l1, c->n.l2, c->n.linf, o[0], o[1], o[2],
                    c->n.mass_change, c->n.min, c->n.max - c->n.max0, c->seconds);
        }
}

static int write_json(const char *path, const tc1_case *cs, int n, const char *dtype, const char *backend) {
    json_t *cases = json_array();
    for (int i = 0; i < n; i++) {
        const tc1_case *c = &cs[i];
        json_array_append_new(cases, json_pack("{s:i, s:i, s:f, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
            "rows", c->rows, "columns", c->g.nlon, "alpha", c->alpha, "steps", (json_int_t)c->steps, "dt_s", c->dt,
            "l1", c->n.l1, "l2", c->n.l2, "linf", c->n.linf, "mass_change", c->n.mass_change, "min0", c->n.min0,
            "max0", c->n.max0, "min", c->n.min, "max", c->n.max, "seconds", c->seconds));
    }
    json_t *doc = json_pack("{s:s, s:s, s:s, s:o}", "test", "williamson1992-tc1", "dtype", dtype, "backend", backend,
                            "cases", cases);
    int rc = json_dump_file(doc, path, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
    json_decref(doc);
    return rc;
}

static int write_picture(const char *path, const tc1_case *cs, int nres, int nalpha) {
    svg_panel panels[2 * TC1_MAX];
    char labels[2 * TC1_MAX][96];
    int n = 0, r = nres > 1 ? 1 : 0;   /* the middle resolution (or the only one) */
    for (int a = 0; a < nalpha; a++) {
        const tc1_case *c = &cs[a * nres + r];
        snprintf(labels[n], sizeof labels[n], "alpha %.4f, %dx%d: start", c->alpha, c->g.nlon, c->g.nlat);
        panels[n] = (svg_panel){&c->g, c->q0, NULL, labels[n]};
        n++;
        snprintf(labels[n], sizeof labels[n], "after 12 days (l2 %.3g, max %.1f m)", c->n.l2, c->n.max);
        panels[n] = (svg_panel){&c->g, c->q, NULL, labels[n]};
        n++;
    }
    return svg_write_maps(path, "Williamson test case 1: cosine bell (m), start and after one revolution", panels, n, 2,
                          0, TC1_H0);
}

int cmd_tc1(int argc, char **argv) {
    static const struct option options[] = {
        {"rows", required_argument, 0, 'r'}, {"alpha", required_argument, 0, 'a'},
        {"dtype", required_argument, 0, 't'}, {"backend", required_argument, 0, 'b'},
        {"cfl", required_argument, 0, 'c'}, {"tune", required_argument, 0, 'T'},
        {"out", required_argument, 0, 'o'}, {"db", required_argument, 0, 'd'},
        {"progress", no_argument, 0, 'p'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    double rows[TC1_MAX] = {32, 64, 128}, alpha[TC1_MAX] = {0, M_PI / 2 - 0.05}, cfl = 0.5;
    int nres = 3, nalpha = 2;
    long tune = 0;
    const char *out = "data/weather", *db = NULL;
    model_options mo = {"f64", "cpu", 0, 0, TC1_RADIUS};
    bool progress = false;
    optind = 1;
    opterr = 0;
    int c, rc;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (c) {
        case 'r': if ((rc = parse_list("--rows", optarg, 4, 4096, rows, &nres))) return rc; break;
        case 'a': if ((rc = parse_list("--alpha", optarg, -M_PI, M_PI, alpha, &nalpha))) return rc; break;
        case 't': mo.dtype = optarg; break;
        case 'b': mo.backend = optarg; break;
        case 'c': if (!weather_parse_double("tc1", "--cfl", optarg, 0.01, 1, &cfl)) return EXIT_USAGE; break;
        case 'T': if (!weather_parse_long("tc1", "--tune", optarg, 1, 100000, &tune)) return EXIT_USAGE; break;
        case 'o': out = optarg; break;
        case 'd': db = optarg; break;
        case 'p': progress = true; break;
        case 'h': help(); return EXIT_OK;
        case ':': return weather_usage("tc1", "option %s needs a value", argv[optind - 1]);
        default: return weather_usage("tc1", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc) return weather_usage("tc1", "unexpected argument '%s'", argv[optind]);
    if (strcmp(mo.dtype, "f32") && strcmp(mo.dtype, "f64")) return weather_usage("tc1", "--dtype is f32 or f64, not '%s'", mo.dtype);
    if (strcmp(mo.backend, "cpu") && strcmp(mo.backend, "cuda"))
        return weather_usage("tc1", "--backend is cpu or cuda, not '%s'", mo.backend);
    for (int r = 0; r < nres; r++)
        if (rows[r] != floor(rows[r])) return weather_usage("tc1", "--rows takes whole numbers of rows");
    mo.tune = (int)tune;
    mkdir(out, 0777);
    char path[3][4096];
    const char *names[3] = {"tc1.txt", "tc1.json", "tc1.svg"};
    for (int i = 0; i < 3; i++) {
        snprintf(path[i], sizeof path[i], "%s/%s", out, names[i]);
        tess_status st = tess_output_check(path[i]);
        if (st) return weather_fail("tc1", st);
    }

    tess_context *ctx;
    tess_status st = weather_open(&ctx, db);
    if (st) return weather_fail("tc1", st);
    tc1_case cs[TC1_MAX * TC1_MAX];
    memset(cs, 0, sizeof cs);
    rc = EXIT_OK;
    printf("tessera-weather tc1: %d resolutions x %d flow angles, %s on %s\n", nres, nalpha, mo.dtype, mo.backend);
    for (int a = 0; a < nalpha && !rc; a++)
        for (int r = 0; r < nres && !rc; r++) {
            tc1_case *tc = &cs[a * nres + r];
            tc->rows = (int)rows[r];
            tc->alpha = alpha[a];
            rc = run_case(ctx, &mo, cfl, progress, tc);
        }
    tess_close(ctx);
    if (!rc) {
        report(stdout, cs, nres, nalpha, mo.dtype, mo.backend);
        FILE *f = fopen(path[0], "w");
        if (f) report(f, cs, nres, nalpha, mo.dtype, mo.backend);
        if (!f || fclose(f)) rc = weather_error("tc1", "cannot write '%s'", path[0]);
        else if (write_json(path[1], cs, nres * nalpha, mo.dtype, mo.backend))
            rc = weather_error("tc1", "cannot write '%s'", path[1]);
        else if (write_picture(path[2], cs, nres, nalpha)) rc = weather_error("tc1", "cannot write '%s'", path[2]);
        else printf("  wrote %s, %s, %s\n", path[0], path[1], path[2]);
    }
    for (int i = 0; i < TC1_MAX * TC1_MAX; i++) {
        free(cs[i].q0);
        free(cs[i].q);
        grid_free(&cs[i].g);
    }
    return rc;
}
