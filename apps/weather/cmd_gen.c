/*
 * cmd_gen.c - `tessera-weather gen`: Williamson's test case 1 (the cosine
 * bell and the solid-body winds) on a latitude-longitude grid, written as a
 * CF netCDF file that `tessera-weather run` (or any CF reader) takes.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cf.h"
#include "tc1.h"
#include "weather.h"

static void help(void) {
    printf("usage: tessera-weather gen -o FILE.nc [--rows N] [--levels L] [--alpha A]\n\n"
           "Writes Williamson et al. (1992) test case 1's initial state as a CF netCDF file: the cosine\n"
           "bell 'q' (m), and the winds 'u' and 'v' (standard names eastward_wind and northward_wind, m/s)\n"
           "of solid-body rotation about an axis tilted by A radians (default 0), on N rows of latitude\n"
           "(default 64, 2.8 degrees) and 2N columns of cell centres, L identical levels (default 1).\n");
}

int cmd_gen(int argc, char **argv) {
    static const struct option options[] = {{"rows", required_argument, 0, 'r'}, {"levels", required_argument, 0, 'l'},
                                            {"alpha", required_argument, 0, 'a'}, {"help", no_argument, 0, 'h'},
                                            {0, 0, 0, 0}};
    long rows = 64, levels = 1;
    double alpha = 0;
    const char *out = NULL;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":ho:", options, NULL)) != -1) {
        switch (c) {
        case 'r': if (!weather_parse_long("gen", "--rows", optarg, 4, 8192, &rows)) return EXIT_USAGE; break;
        case 'l': if (!weather_parse_long("gen", "--levels", optarg, 1, 1024, &levels)) return EXIT_USAGE; break;
        case 'a': if (!weather_parse_double("gen", "--alpha", optarg, -M_PI, M_PI, &alpha)) return EXIT_USAGE; break;
        case 'o': out = optarg; break;
        case 'h': help(); return EXIT_OK;
        case ':': return weather_usage("gen", "option %s needs a value", argv[optind - 1]);
        default: return weather_usage("gen", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc) return weather_usage("gen", "unexpected argument '%s'", argv[optind]);
    if (!out) return weather_usage("gen", "missing -o FILE.nc");
    tess_status st = tess_output_check(out);
    if (st) return weather_fail("gen", st);
    grid g;
    if (grid_init_global(&g, (int)levels, (int)rows)) return weather_error("gen", "out of memory");
    int64_t n = grid_padded_3d(&g);
    double *q = malloc(sizeof(double) * (size_t)n), *u = malloc(sizeof(double) * (size_t)n),
           *v = malloc(sizeof(double) * (size_t)n);
    int rc = EXIT_OK;
    if (!q || !u || !v) rc = weather_error("gen", "out of memory");
    char err[1024], history[256];
    if (!rc) {
        tc1_bell(&g, q);
        for (int k = 0; k < g.nz; k++)
            for (int j = 0; j < g.nlat; j++)
                for (int i = 0; i < g.nlon; i++) {
                    int64_t p = grid_at(&g, k, j, i);
                    tc1_wind(g.lon[i], g.lat[j], alpha, &u[p], &v[p]);
                }
        const cf_var_desc vars[3] = {{"q", NULL, "cosine bell (Williamson et al. 1992, test case 1)", "m"},
                                     {"u", "eastward_wind", "eastward wind", "m s-1"},
                                     {"v", "northward_wind", "northward wind", "m s-1"}};
        const double *fields[3] = {q, u, v};
        snprintf(history, sizeof history, "tessera-weather gen --rows %ld --levels %ld --alpha %.17g", rows, levels, alpha);
        cf_out o;
        if (cf_out_create(&o, out, &g, NULL, NULL, vars, 3, NULL, "Williamson et al. (1992) test case 1", history, err,
                          sizeof err) ||
            cf_out_write(&o, 0, fields, NULL, err, sizeof err))
            rc = weather_error("gen", "%s", err);
        if (cf_out_close(&o, err, sizeof err) && !rc) rc = weather_error("gen", "%s", err);
        if (!rc)
            printf("wrote %s: %d x %d x %d, alpha %.4f\n", out, g.nz, g.nlat, g.nlon, alpha);
    }
    free(q);
    free(u);
    free(v);
    grid_free(&g);
    return rc;
}
