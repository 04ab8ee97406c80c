/*
 * main.c - tessera-md: Lennard-Jones molecular dynamics in reduced units,
 * every part of its time step one of tessera's tuned kernels (engine.c).
 */
#include <getopt.h>
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
    "velocity Verlet over a Verlet list built with cell lists, every part of a step one of tessera's\n"
    "kernels (md_verlet, md_displace, md_bin, md_list, ljforce) on the state where they run.\n"
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
    "  --average-from STEP    mean potential energy and pressure from STEP on, with standard errors;\n"
    "                         with --langevin, an unshifted cut-off and at most 4000 atoms also those\n"
    "                         of the truncated potential's own ensemble (Monte Carlo's), each sample\n"
    "                         weighted by exp(-u(rc) pairs / T): the forces, which have no impulse at\n"
    "                         rc, sample the shifted potential's ensemble\n"
    "Kernels:\n"
    "  --backend cpu|cuda     where the step runs and its state lives (default cpu)\n"
    "  --dtype f32|f64        positions and forces of the kernel (default f32; energies sum in f64)\n"
    "  --layout rows|cols     neighbour list a row per atom or transposed (default rows)\n"
    "  --no-sort              keep the input order (default: atoms sorted by cell before the run)\n"
    "  --tune N               tune every kernel of a step with N evaluations first (records: --db\n"
    "                         or $TESSERA_DB)\n"
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

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct md_run {
    md_system sys;
    md_engine eng;
    md_thermo thermo;
    md_trajectory traj;
    FILE *log;
    tess_context *ctx;
    double seconds;       /* of the time steps */
} md_run;

static bool shown_at(const md_options *o, long step) {
    return step == 0 || step == o->steps || (o->thermo > 0 && step % o->thermo == 0);
}

/* Whether the averages are also reweighted to the truncated potential's ensemble: the pair
 * count each sample needs is an all-pairs loop on the host, and the weights' spread grows
 * as the square root of the atoms. */
static bool reweighting(const md_options *o, long n) {
    return o->average_from >= 0 && o->langevin > 0 && !o->shift && n <= 4000;
}

static int output_sample(md_run *r, const md_options *o, long step, char *err, size_t errlen) {
    if (!shown_at(o, step)) return 0;
    const md_engine *e = &r->eng;
    if (step > 0 && md_engine_thermo(&r->eng, err, errlen)) return 1;
    const double ke = 0.5 * e->v2 / (double)e->n, pe = e->pe / (double)e->n;
    md_sample smp = {step, r->sys.time, md_engine_temperature(e), pe, ke, pe + ke, md_engine_pressure(e), -1};
    if (reweighting(o, e->n) && step >= o->average_from) {
        if (md_engine_download(&r->eng, &r->sys, err, errlen)) return 1;
        smp.pairs = (double)md_pairs_within(&r->sys, o->rc);
    }
    if (md_thermo_add(&r->thermo, &smp)) {
        snprintf(err, errlen, "out of memory keeping thermo samples");
        return 1;
    }
    md_thermo_print(stdout, &smp);
    if (r->log) md_thermo_print(r->log, &smp);
    return 0;
}

static int run_steps(md_run *r, const md_options *o, char *err, size_t errlen) {
    md_system *s = &r->sys;
    const bool terminal = isatty(STDERR_FILENO);
    double start = now(), shown = start;
    for (long step = 1; step <= o->steps; step++) {
        if (md_engine_step(&r->eng, err, errlen)) return 1;
        s->time += o->dt;
        if (output_sample(r, o, step, err, errlen)) return 1;
        if (r->traj.buf && step % o->every == 0 &&
            (md_engine_download(&r->eng, s, err, errlen) || md_trajectory_append(&r->traj, s, err, errlen)))
            return 1;
        if (terminal && now() - shown > 1) {
            shown = now();
            fprintf(stderr, "\r  step %ld of %ld, %.0f s, %.3g atom-steps/s ", step, o->steps, shown - start,
                    (double)s->n * (double)step / (shown - start));
        }
    }
    if (terminal && o->steps > 0) fprintf(stderr, "\r%60s\r", "");
    r->seconds = now() - start;
    return md_engine_download(&r->eng, s, err, errlen);
}

static const char *const kernel_names[MD_NKERNELS] = {"verlet-first", "verlet-second", "displace", "bin", "list",
                                                      "force"};

static void summary(const md_run *r, const md_options *o) {
    const md_system *s = &r->sys;
    const md_engine *e = &r->eng;
    printf("atoms %ld box %.6f density %.6f list-width %ld cells %ld builds %d kernel %s (%s)\n", s->n, s->box,
           e->density, e->m, e->s, e->builds, tess_kernel_config(e->k[MD_FORCE]), tess_kernel_origin(e->k[MD_FORCE]));
    for (int w = 0; w < MD_NKERNELS; w++) {
        char op[200], text[64];
        int64_t shape[3];
        const int nd = md_engine_task(e, w, op, sizeof op, shape);
        printf("  %-13s %s %s: %s (%s)\n", kernel_names[w], op, md_shape_text(shape, nd, text, sizeof text),
               tess_kernel_config(e->k[w]), tess_kernel_origin(e->k[w]));
    }
    if (o->steps > 0) {
        double dev, slope;
        md_thermo_drift(&r->thermo, &dev, &slope);
        printf("steps %ld seconds %.3f atom-steps/s %.4g\n", o->steps, r->seconds,
               (double)s->n * (double)o->steps / r->seconds);
        if (!(o->langevin > 0))   /* NVE: the total energy is conserved */
            printf("energy drift per atom: max |E-E0| %.3e, slope %.3e per time unit, over %.4g time units\n",
                   dev, slope, o->dt * (double)o->steps);
    }
    double mean, error, ess;
    if (o->average_from >= 0 && !md_thermo_average(&r->thermo, o->average_from, 0, 0, &mean, &error, NULL))
        printf("average from step %ld: pe/atom %.5f +- %.5f", o->average_from, mean, error);
    if (o->average_from >= 0 && !md_thermo_average(&r->thermo, o->average_from, 1, 0, &mean, &error, NULL))
        printf(", pressure %.5f +- %.5f\n", mean, error);
    else if (o->average_from >= 0)
        printf("average: fewer than 20 thermo samples from step %ld\n", o->average_from);
    /* The truncated potential's Boltzmann weight over the shifted one's, per sample. */
    const double ir6 = 1 / pow(o->rc, 6), urc = 4 * ir6 * (ir6 - 1), reweight = urc / o->langevin;
    if (reweighting(o, s->n) &&
        !md_thermo_average(&r->thermo, o->average_from, 0, reweight, &mean, &error, &ess)) {
        printf("truncated potential's ensemble (weights exp(-u(rc) pairs / T), u(rc) = %.6f, effective sample "
               "fraction %.3f): pe/atom %.5f +- %.5f",
               urc, ess, mean, error);
        if (!md_thermo_average(&r->thermo, o->average_from, 1, reweight, &mean, &error, NULL))
            printf(", pressure %.5f +- %.5f", mean, error);
        printf("\n");
    }
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
    if (o->sort && md_sort_by_cell(s, o->rc + o->skin)) {
        snprintf(err, errlen, "out of memory sorting the atoms by cell");
        return 1;
    }
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
    const md_engine_config cfg = {.backend = o->backend, .dtype = o->dtype, .rc = o->rc, .skin = o->skin,
                                  .dt = o->dt, .shift = o->shift, .tail = o->tail,
                                  .cols = strcmp(o->layout, "cols") == 0, .langevin = o->langevin,
                                  .damp = o->damp, .thermostat_seed = o->thermostat_seed};
    md_engine_init(&r->eng, r->ctx, &cfg, s);
    if (o->tune > 0 && md_engine_tune(&r->eng, o->tune, err, errlen)) return 1;
    if (md_engine_open(&r->eng, s, err, errlen)) return 1;
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
        rc = output_sample(&r, &o, 0, err, sizeof err);
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
    md_engine_close(&r.eng);
    md_thermo_free(&r.thermo);
    md_system_free(&r.sys);
    tess_close(r.ctx);
    return rc ? (rc == 2 ? 2 : 1) : 0;
}
