/*
 * main.c - tessera-md: Lennard-Jones molecular dynamics in reduced units,
 * its pair forces computed by tessera's tuned ljforce kernel.
 */
#include <getopt.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "amber.h"
#include "md.h"
#include "thermo.h"

static const char usage[] =
    "usage: tessera-md (--restart FILE | --lattice fcc --density RHO --cells N --temperature T [--seed S])\n"
    "                  [options]\n"
    "Lennard-Jones molecular dynamics in reduced units (sigma = epsilon = mass = 1) in a periodic cube,\n"
    "velocity Verlet, forces from tessera's ljforce kernel over a Verlet list built with cell lists.\n"
    "\n"
    "Initial state:\n"
    "  --restart FILE         an AMBER NetCDF restart (coordinates in angstrom, velocities in\n"
    "                         angstrom/picosecond, cubic cell; argon units: sigma 3.405 A,\n"
    "                         epsilon/k 119.8 K, mass 39.948 u)\n"
    "  --lattice fcc          an fcc lattice of --cells N^3 unit cells (4 N^3 atoms) at --density RHO,\n"
    "                         velocities at --temperature T (3N-3 degrees of freedom, no net\n"
    "                         momentum) drawn with --seed S (default 1); also used with --restart\n"
    "                         to draw velocities a restart lacks\n"
    "Model and integration:\n"
    "  --rc R                 cut-off (default 2.5)         --skin S   list skin (default 0.3)\n"
    "  --shift                shift pair energies to 0 at rc  --tail   long-range tail corrections\n"
    "  --steps N              time steps (default 0)         --dt DT    time step (default 0.005)\n"
    "  --langevin T           Langevin thermostat at temperature T, BAOAB splitting (default: none, NVE)\n"
    "  --damp G               its friction (default 1.0)     --thermostat-seed S (default 2)\n"
    "Output:\n"
    "  --thermo N             a thermo line every N steps (default 100; 0: first and last only)\n"
    "  --log FILE             the thermo lines to FILE as well\n"
    "  --trajectory FILE      an AMBER NetCDF trajectory, a frame every --every N steps (default 100)\n"
    "  --restart-out FILE     the final state as an AMBER NetCDF restart\n"
    "  --svg FILE             energy and temperature against time\n"
    "  --average-from STEP    mean potential energy and pressure from STEP on, with standard errors\n"
    "Kernels:\n"
    "  --backend cpu|cuda     where the forces are computed (default cpu)\n"
    "  --dtype f32|f64        positions and forces of the kernel (default f32; energies sum in f64)\n"
    "  --layout rows|cols     neighbour list a row per atom or transposed (default rows)\n"
    "  --no-sort              keep the input order (default: atoms sorted by cell at each list build)\n"
    "  --tune N               tune the force kernel with N evaluations first (records: --db or\n"
    "                         $TESSERA_DB)\n"
    "  --db FILE              the tessera records database\n"
    "Exit status: 0 success, 1 failure (a bad restart, a kernel error), 2 usage error.\n";

typedef struct md_options {
    const char *restart, *lattice, *restart_out, *log, *trajectory, *svg, *backend, *dtype, *layout, *db;
    double density, temperature, rc, skin, dt, langevin, damp;
    long cells, steps, thermo, every, average_from;
    uint64_t seed, thermostat_seed;
    int tune;
    bool shift, tail, sort, have_temperature;
} md_options;

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "tessera-md: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(tessera-md --help lists the options)\n");
    return 2;
}

static int parse_real(const char *text, const char *name, double *out) {
    char *end;
    *out = strtod(text, &end);
    if (end == text || *end || !isfinite(*out)) return usage_error("%s needs a number", name);
    return 0;
}

static int parse_long(const char *text, const char *name, long *out) {
    char *end;
    *out = strtol(text, &end, 10);
    if (end == text || *end || *out < 0) return usage_error("%s needs a non-negative integer", name);
    return 0;
}

static int parse_options(int argc, char **argv, md_options *o) {
    enum { O_RESTART = 256, O_LATTICE, O_DENSITY, O_CELLS, O_TEMPERATURE, O_SEED, O_RC, O_SKIN, O_SHIFT, O_TAIL,
           O_STEPS, O_DT, O_LANGEVIN, O_DAMP, O_TSEED, O_THERMO, O_LOG, O_TRAJ, O_EVERY, O_ROUT, O_SVG, O_AVG,
           O_BACKEND, O_DTYPE, O_LAYOUT, O_NOSORT, O_TUNE, O_DB, O_HELP };
    static const struct option longs[] = {
        {"restart", 1, 0, O_RESTART}, {"lattice", 1, 0, O_LATTICE}, {"density", 1, 0, O_DENSITY},
        {"cells", 1, 0, O_CELLS}, {"temperature", 1, 0, O_TEMPERATURE}, {"seed", 1, 0, O_SEED},
        {"rc", 1, 0, O_RC}, {"skin", 1, 0, O_SKIN}, {"shift", 0, 0, O_SHIFT}, {"tail", 0, 0, O_TAIL},
        {"steps", 1, 0, O_STEPS}, {"dt", 1, 0, O_DT}, {"langevin", 1, 0, O_LANGEVIN}, {"damp", 1, 0, O_DAMP},
        {"thermostat-seed", 1, 0, O_TSEED}, {"thermo", 1, 0, O_THERMO}, {"log", 1, 0, O_LOG},
        {"trajectory", 1, 0, O_TRAJ}, {"every", 1, 0, O_EVERY}, {"restart-out", 1, 0, O_ROUT},
        {"svg", 1, 0, O_SVG}, {"average-from", 1, 0, O_AVG}, {"backend", 1, 0, O_BACKEND},
        {"dtype", 1, 0, O_DTYPE}, {"layout", 1, 0, O_LAYOUT}, {"no-sort", 0, 0, O_NOSORT},
        {"tune", 1, 0, O_TUNE}, {"db", 1, 0, O_DB}, {"help", 0, 0, O_HELP}, {0, 0, 0, 0}};
    *o = (md_options){.rc = 2.5, .skin = 0.3, .dt = 0.005, .damp = 1.0, .thermo = 100, .every = 100,
                      .average_from = -1, .seed = 1, .thermostat_seed = 2, .backend = "cpu", .dtype = "f32",
                      .layout = "rows", .sort = true, .langevin = -1};
    int c, rc = 0;
    long v;
    opterr = 0;
    while (!rc && (c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (c) {
        case O_RESTART: o->restart = optarg; break;
        case O_LATTICE: o->lattice = optarg; break;
        case O_DENSITY: rc = parse_real(optarg, "--density", &o->density); break;
        case O_CELLS: rc = parse_long(optarg, "--cells", &o->cells); break;
        case O_TEMPERATURE:
            rc = parse_real(optarg, "--temperature", &o->temperature);
            o->have_temperature = true;
            break;
        case O_SEED: rc = parse_long(optarg, "--seed", &v); o->seed = (uint64_t)v; break;
        case O_RC: rc = parse_real(optarg, "--rc", &o->rc); break;
        case O_SKIN: rc = parse_real(optarg, "--skin", &o->skin); break;
        case O_SHIFT: o->shift = true; break;
        case O_TAIL: o->tail = true; break;
        case O_STEPS: rc = parse_long(optarg, "--steps", &o->steps); break;
        case O_DT: rc = parse_real(optarg, "--dt", &o->dt); break;
        case O_LANGEVIN: rc = parse_real(optarg, "--langevin", &o->langevin); break;
        case O_DAMP: rc = parse_real(optarg, "--damp", &o->damp); break;
        case O_TSEED: rc = parse_long(optarg, "--thermostat-seed", &v); o->thermostat_seed = (uint64_t)v; break;
        case O_THERMO: rc = parse_long(optarg, "--thermo", &o->thermo); break;
        case O_LOG: o->log = optarg; break;
        case O_TRAJ: o->trajectory = optarg; break;
        case O_EVERY: rc = parse_long(optarg, "--every", &o->every); break;
        case O_ROUT: o->restart_out = optarg; break;
        case O_SVG: o->svg = optarg; break;
        case O_AVG: rc = parse_long(optarg, "--average-from", &o->average_from); break;
        case O_BACKEND: o->backend = optarg; break;
        case O_DTYPE: o->dtype = optarg; break;
        case O_LAYOUT: o->layout = optarg; break;
        case O_NOSORT: o->sort = false; break;
        case O_TUNE: rc = parse_long(optarg, "--tune", &v); o->tune = (int)v; break;
        case O_DB: o->db = optarg; break;
        case O_HELP: fputs(usage, stdout); exit(0);
        default: return usage_error("unknown option or missing value: %s", argv[optind - 1]);
        }
    }
    if (rc) return rc;
    if (optind < argc) return usage_error("unexpected argument '%s'", argv[optind]);
    if (!o->restart == !o->lattice) return usage_error("%s", "give either --restart FILE or --lattice fcc");
    if (o->lattice && strcmp(o->lattice, "fcc") != 0) return usage_error("--lattice %s: only fcc is known", o->lattice);
    if (o->lattice && (o->cells < 1 || !(o->density > 0) || !o->have_temperature))
        return usage_error("%s", "--lattice fcc needs --cells N, --density RHO and --temperature T");
    if (!(o->rc > 0) || !(o->skin > 0) || !(o->dt > 0))
        return usage_error("%s", "--rc, --skin and --dt must be positive");
    if (o->langevin != -1 && (!(o->langevin > 0) || !(o->damp > 0)))
        return usage_error("%s", "--langevin T and --damp G must be positive");
    if (strcmp(o->backend, "cpu") && strcmp(o->backend, "cuda"))
        return usage_error("--backend %s: cpu or cuda", o->backend);
    if (strcmp(o->dtype, "f32") && strcmp(o->dtype, "f64")) return usage_error("--dtype %s: f32 or f64", o->dtype);
    if (strcmp(o->layout, "rows") && strcmp(o->layout, "cols"))
        return usage_error("--layout %s: rows or cols", o->layout);
    if (o->every < 1) return usage_error("%s", "--every must be at least 1");
    return 0;
}

/* A list width for the density: the mean count within rc + skin with room
 * for a liquid's fluctuations, a multiple of 16. */
static long initial_width(double density, double rl, long n) {
    double mean = 4.0 / 3.0 * M_PI * rl * rl * rl * density;
    long m = ((long)(1.35 * mean + 12) + 15) / 16 * 16;
    return m < n - 1 ? m : n - 1 > 0 ? n - 1 : 1;
}

/* Builds the list, widening it (and changing the kernel's task) until every atom's neighbours fit. */
static int rebuild(md_nlist *l, md_system *s, md_forces *ff, bool sort, char *err, size_t errlen) {
    long needed = 0;
    int rc;
    while ((rc = md_nlist_build(l, s, sort, &needed)) == 1)
        if (md_nlist_resize(l, s->n, (needed * 5 / 4 + 15) / 16 * 16)) rc = 2;
    if (rc) {
        snprintf(err, errlen, "out of memory building the neighbour list");
        return 1;
    }
    return md_forces_set_list(ff, s, l, err, errlen);
}

static md_sample sample(const md_system *s, const md_forces *ff, long step) {
    const double ke = md_kinetic(s) / (double)s->n, pe = ff->pe / (double)s->n;
    return (md_sample){step, s->time, md_temperature(s), pe, ke, pe + ke, md_pressure(s, ff)};
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The Langevin thermostat's exact Ornstein-Uhlenbeck step over dt, between
 * the two half drifts of BAOAB (Leimkuhler and Matthews), whose sampling of
 * configurations has the least time-step bias of the Langevin splittings. */
static void langevin(md_system *s, const md_options *o, gsl_rng *rng) {
    const double c1 = exp(-o->damp * o->dt), c2 = sqrt((1 - c1 * c1) * o->langevin);
    for (long i = 0; i < 3 * s->n; i++) s->v[i] = c1 * s->v[i] + c2 * gsl_ran_gaussian(rng, 1.0);
}

/* Moves the atoms by dt * v, wrapped into the box. */
static void drift(md_system *s, double dt) {
    for (long i = 0; i < 3 * s->n; i++) {
        const double x = s->x[i] + dt * s->v[i];
        s->x[i] = x - s->box * floor(x / s->box);
    }
}

typedef struct md_run {
    md_system sys;
    md_nlist list;
    md_forces ff;
    md_thermo thermo;
    md_trajectory traj;
    FILE *log;
    gsl_rng *rng;
    tess_context *ctx;
    double seconds;       /* of the time steps */
} md_run;

static int output_sample(md_run *r, const md_options *o, long step) {
    md_sample smp = sample(&r->sys, &r->ff, step);
    const bool show = step == 0 || step == o->steps || (o->thermo > 0 && step % o->thermo == 0);
    if (!show) return 0;
    if (md_thermo_add(&r->thermo, &smp)) return 1;
    md_thermo_print(stdout, &smp);
    if (r->log) md_thermo_print(r->log, &smp);
    return 0;
}

static int run_steps(md_run *r, const md_options *o, char *err, size_t errlen) {
    md_system *s = &r->sys;
    const double half = 0.5 * o->dt;
    const bool terminal = isatty(STDERR_FILENO);
    double start = now(), shown = start;
    for (long step = 1; step <= o->steps; step++) {
        for (long i = 0; i < 3 * s->n; i++) s->v[i] += half * s->f[i];
        if (r->rng) {
            drift(s, half);
            langevin(s, o, r->rng);
            drift(s, half);
        } else {
            drift(s, o->dt);
        }
        s->time += o->dt;
        if (md_nlist_stale(&r->list, s) && rebuild(&r->list, s, &r->ff, o->sort, err, errlen)) return 1;
        if (md_forces_compute(&r->ff, s, err, errlen)) return 1;
        for (long i = 0; i < 3 * s->n; i++) s->v[i] += half * s->f[i];
        if (output_sample(r, o, step)) {
            snprintf(err, errlen, "out of memory keeping thermo samples");
            return 1;
        }
        if (r->traj.buf && step % o->every == 0 && md_trajectory_append(&r->traj, s, err, errlen)) return 1;
        if (terminal && now() - shown > 1) {
            shown = now();
            fprintf(stderr, "\r  step %ld of %ld, %.0f s, %.3g atom-steps/s ", step, o->steps, shown - start,
                    (double)s->n * (double)step / (shown - start));
        }
    }
    if (terminal && o->steps > 0) fprintf(stderr, "\r%60s\r", "");
    r->seconds = now() - start;
    return 0;
}

static void summary(const md_run *r, const md_options *o) {
    const md_system *s = &r->sys;
    printf("atoms %ld box %.6f density %.6f list-width %ld builds %d kernel %s (%s)\n", s->n, s->box,
           (double)s->n / (s->box * s->box * s->box), r->list.m, r->list.builds, tess_kernel_config(r->ff.kernel),
           tess_kernel_origin(r->ff.kernel));
    if (o->steps > 0) {
        double dev, slope;
        md_thermo_drift(&r->thermo, &dev, &slope);
        printf("steps %ld seconds %.3f atom-steps/s %.4g\n", o->steps, r->seconds,
               (double)s->n * (double)o->steps / r->seconds);
        if (!r->rng)   /* NVE: the total energy is conserved */
            printf("energy drift per atom: max |E-E0| %.3e, slope %.3e per time unit, over %.4g time units\n",
                   dev, slope, o->dt * (double)o->steps);
    }
    double mean, error;
    if (o->average_from >= 0 && !md_thermo_average(&r->thermo, o->average_from, 0, &mean, &error))
        printf("average from step %ld: pe/atom %.5f +- %.5f", o->average_from, mean, error);
    if (o->average_from >= 0 && !md_thermo_average(&r->thermo, o->average_from, 1, &mean, &error))
        printf(", pressure %.5f +- %.5f\n", mean, error);
    else if (o->average_from >= 0)
        printf("average: fewer than 20 thermo samples from step %ld\n", o->average_from);
}

static int setup(md_run *r, const md_options *o, char *err, size_t errlen) {
    int has_velocities = 0, rc;
    if (o->restart) {
        if (md_restart_read(o->restart, &r->sys, &has_velocities, err, errlen)) return 1;
        if (!has_velocities && !o->have_temperature) {
            snprintf(err, errlen, "%s has no velocities: give --temperature T to draw them", o->restart);
            return 1;
        }
    } else if ((rc = md_lattice_fcc(&r->sys, o->cells, o->density, o->temperature, o->seed, err, errlen))) {
        return rc;
    }
    md_system *s = &r->sys;
    if (s->box < 2 * (o->rc + o->skin)) {
        snprintf(err, errlen, "a box of %.4g is less than twice rc + skin (%.4g): too few atoms", s->box,
                 o->rc + o->skin);
        return 1;
    }
    if (o->restart && !has_velocities && md_draw_velocities(s, o->temperature, o->seed, err, errlen)) return 1;
    /* Only tuning writes the records; a run reads them (and an absent store is created, as tessera does). */
    tess_status opened = o->tune > 0 ? TESS_ERR_NOTFOUND : tess_open_readonly(&r->ctx, o->db);
    if (opened == TESS_ERR_NOTFOUND && tess_open(&r->ctx, o->db) != TESS_OK) {
        snprintf(err, errlen, "%s", tess_errmsg());
        return 1;
    }
    if (opened != TESS_OK && opened != TESS_ERR_NOTFOUND) {
        snprintf(err, errlen, "%s", tess_errmsg());
        return 1;
    }
    r->list = (md_nlist){.rc = o->rc, .skin = o->skin, .cols = strcmp(o->layout, "cols") == 0};
    const double density = (double)s->n / (s->box * s->box * s->box);
    if (md_nlist_resize(&r->list, s->n, initial_width(density, o->rc + o->skin, s->n))) {
        snprintf(err, errlen, "cannot allocate the neighbour list");
        return 1;
    }
    r->ff = (md_forces){.backend = o->backend, .f64 = strcmp(o->dtype, "f64") == 0, .shift = o->shift,
                        .tail = o->tail, .rc = o->rc};
    if (md_forces_open(&r->ff, r->ctx, s, &r->list, err, errlen)) return 1;
    if (o->tune > 0) {
        char op[160];
        md_forces_op(&r->ff, op, sizeof op);
        const int64_t shape[2] = {s->n, r->list.m};
        tess_tune_options topt = tess_tune_options_default();
        topt.budget = o->tune;
        tess_tune_report rep;
        if (tess_tune(r->ctx, op, shape, 2, o->dtype, o->backend, &topt, &rep)) {
            snprintf(err, errlen, "tuning %s: %s", op, tess_errmsg());
            return 1;
        }
        printf("tuned %s %ldx%ld: %s, %.4g ms (default %.4g ms)\n", op, s->n, r->list.m, rep.best_config,
               rep.best_ms, rep.default_ms);
    }
    if (rebuild(&r->list, s, &r->ff, o->sort, err, errlen) || md_forces_compute(&r->ff, s, err, errlen)) return 1;
    if (o->langevin > 0) {
        if (!(r->rng = gsl_rng_alloc(gsl_rng_mt19937))) {
            snprintf(err, errlen, "cannot allocate a random number generator");
            return 1;
        }
        gsl_rng_set(r->rng, (unsigned long)o->thermostat_seed);
    }
    if (o->log && !(r->log = fopen(o->log, "w"))) {
        snprintf(err, errlen, "cannot write %s", o->log);
        return 1;
    }
    if (o->trajectory && md_trajectory_create(&r->traj, o->trajectory, s->n, err, errlen)) return 1;
    return 0;
}

int main(int argc, char **argv) {
    md_options o;
    int rc = parse_options(argc, argv, &o);
    if (rc) return rc;
    char err[1024] = "";
    md_run r;
    memset(&r, 0, sizeof r);
    r.traj.ncid = -1;
    rc = setup(&r, &o, err, sizeof err);
    if (!rc) {
        md_thermo_header(stdout);
        if (r.log) md_thermo_header(r.log);
        if (output_sample(&r, &o, 0)) rc = 1;
        if (!rc && r.traj.buf) rc = md_trajectory_append(&r.traj, &r.sys, err, sizeof err);
        if (!rc) rc = run_steps(&r, &o, err, sizeof err);
        if (!rc) summary(&r, &o);
        if (!rc && r.traj.buf) rc = md_trajectory_close(&r.traj, err, sizeof err);
        if (!rc && o.restart_out) rc = md_restart_write(o.restart_out, &r.sys, err, sizeof err);
        if (!rc && o.svg && md_thermo_svg(&r.thermo, o.svg, o.langevin > 0 ? "Langevin NVT" : "NVE")) {
            snprintf(err, sizeof err, "cannot write %s", o.svg);
            rc = 1;
        }
    }
    if (rc) fprintf(stderr, "tessera-md: %s\n", err[0] ? err : "failed");
    if (r.traj.buf) md_trajectory_close(&r.traj, err, sizeof err);
    if (r.log) fclose(r.log);
    gsl_rng_free(r.rng);
    md_forces_close(&r.ff);
    md_nlist_free(&r.list);
    md_thermo_free(&r.thermo);
    md_system_free(&r.sys);
    tess_close(r.ctx);
    return rc ? (rc == 2 ? 2 : 1) : 0;
}
