/*
 * cmd_run.c - `tessera run STENCIL`: a multi-step simulation with the
 * dispatched (tuned) kernel on the cpu or cuda backend, each output trading
 * places with the input it advances after every step; initial fields from a
 * netCDF file or an analytic initial condition, final fields to netCDF;
 * optionally checked against the float64 reference run step by step; with
 * --ranks, split into slabs along the slowest axis (tess_split_run). Uses
 * the public API (tessera.h) only.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"

#define RUN_MAX_BUFFERS 8

static void help(void) {
    printf("usage: tessera run STENCIL [--shape S] [--dtype f32|f64] [--backend cpu|cuda] [--steps N]\n"
           "                         [--input in.nc] [--output out.nc] [--tune N] [--check] [--progress]\n"
           "                         [--ranks N [--split CONFIG]] [--db PATH]\n\n"
           "Runs N time steps (default 100) of a stencil with the kernel tessera dispatches for the\n"
           "task on the backend (default cpu; cuda runs on the GPU, the fields in device memory):\n"
           "the tuned config, else one predicted from similar tuned tasks, else the default; --tune N\n"
           "first tunes a task never tuned with N evaluations. Each output field is swapped with the\n"
           "input it advances after every step.\n\n"
           "  --input    netCDF file holding the stencil's input and coefficient fields as variables\n"
           "             of the same names, float or double (or CF-packed integers), on dimensions\n"
           "             named z, y, x (or with coordinate variables of CF axis Z, Y, X) of the\n"
           "             grid's extents; a field with _FillValue or missing_value points is refused.\n"
           "             Without it: inputs start as a Gaussian bump of width n/8 centred in the\n"
           "             grid, coefficients as lo + (hi - lo) * (1 + sin(2 pi x/nx) sin(2 pi y/ny)) / 2\n"
           "             over their declared range. data/samples/ holds sample inputs.\n"
           "  --output   netCDF file (CF conventions) receiving the final fields; checked before the\n"
           "             run starts, written before the check\n"
           "  --check    also run the float64 reference step by step and report the largest\n"
           "             difference relative to the field's magnitude; exit 1 above the tolerance or\n"
           "             on any NaN or infinity\n"
           "  --progress show the reference's progress (always shown on a terminal)\n"
           "  --ranks    split the grid into N slabs along its slowest axis (1 to %d), each with\n"
           "             halos of the stencil's reach times its fused steps, each launch the kernel\n"
           "             dispatched for its window of planes: the fields equal those of the whole\n"
           "             run. cpu: the ranks run in this process, one after another; cuda: one\n"
           "             process per rank, each on its own GPU (CUDA_VISIBLE_DEVICES: the rank's\n"
           "             entry of the list, else GPU N), the halos through NCCL\n"
           "  --split    the overlap parameters: overlap=split (the interior while the halos are\n"
           "             in flight, then the boundary planes; default) or none (exchange, then\n"
           "             whole slabs), halo_chunks=1|2|4|8 (messages per halo), exchange_every=\n"
           "             1|2|4|8 (applications between exchanges, halos that much deeper)\n",
           TESS_SPLIT_MAX_RANKS);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The fields of a task on the host. */
typedef struct run_fields {
    tess_buffer_info buf[RUN_MAX_BUFFERS];
    int n;
    void *host[RUN_MAX_BUFFERS];
} run_fields;

typedef struct run_grid {
    const char *op;
    int ndim;
    const int64_t *shape;
    const char *dims[3];
} run_grid;

static void run_fields_free(run_fields *r) {
    for (int i = 0; i < r->n; i++) free(r->host[i]);
    r->n = 0;
}

static void store(void *data, const char *dtype, int64_t i, double v) {
    if (strcmp(dtype, "f64") == 0) ((double *)data)[i] = v;
    else ((float *)data)[i] = (float)v;
}

/* Analytic initial values of buffer b: a Gaussian bump for state, a smooth
 * field over the declared range for coefficients. */
static void fill_initial(const tess_buffer_info *b, const int64_t *shape, void *data) {
    int rank = b->rank;
    for (int64_t i = 0; i < b->count; i++) {
        int64_t p[3] = {0, 0, 0}, rest = i;
        for (int a = rank - 1; a >= 0; a--) {
            p[a] = rest % shape[a];
            rest /= shape[a];
        }
        double v;
        if (!b->advanced) {
            double sx = sin(2 * M_PI * (double)p[rank - 1] / (double)shape[rank - 1]);
            double sy = rank > 1 ? sin(2 * M_PI * (double)p[rank - 2] / (double)shape[rank - 2]) : 1;
            v = b->lo + (b->hi - b->lo) * 0.5 * (1 + sx * sy);
        } else {
            double r2 = 0;
            for (int a = 0; a < rank; a++) {
                double c = 0.5 * (double)(shape[a] - 1), w = (double)shape[a] / 8.0;
                r2 += (p[a] - c) * (p[a] - c) / (w * w);
            }
            v = exp(-0.5 * r2);
        }
        store(data, b->dtype, i, v);
    }
}

/* The first input that is not a field of the grid (one f32 or f64 value per
 * point of its axes), which netCDF input and output cannot carry; NULL if none. */
static const tess_buffer_info *first_non_field(const run_fields *r, const run_grid *g) {
    for (int i = 0; i < r->n; i++) {
        const tess_buffer_info *b = &r->buf[i];
        if (b->role != TESS_BUFFER_INPUT) continue;
        int64_t points = 1;
        for (int a = g->ndim - b->rank; a < g->ndim; a++) points *= g->shape[a];
        if (b->count != points || (strcmp(b->dtype, "f32") != 0 && strcmp(b->dtype, "f64") != 0)) return b;
    }
    return NULL;
}

/* Allocates the buffers of the task in dtype and sets the fields' initial
 * values; returns an exit code (0: fine), having said what failed. */
static int run_fields_init(run_fields *r, const run_grid *g, const char *dtype, const char *input) {
    memset(r, 0, sizeof *r);
    tess_status st = tess_op_list_buffers(g->op, g->shape, g->ndim, dtype, r->buf, RUN_MAX_BUFFERS, &r->n);
    /* The analytic fields suit floating-point state and coefficients; an operator
     * with integer inputs (cell kinds, labels, lists) gets its own test inputs
     * throughout, which are valid together. */
    bool own_inputs = false;
    for (int i = 0; i < r->n && !st; i++)
        if (r->buf[i].role == TESS_BUFFER_INPUT && (r->buf[i].dtype[0] == 'i' || r->buf[i].dtype[0] == 'u'))
            own_inputs = true;   /* i32, u8 */
    for (int i = 0; i < r->n && !st; i++) {
        const tess_buffer_info *b = &r->buf[i];
        if (!(r->host[i] = calloc((size_t)b->count + 1, b->elem_bytes))) {
            fprintf(stderr, "tessera: error: cannot allocate field '%s' (%lld bytes): out of memory\n", b->name,
                    (long long)b->count * (long long)b->elem_bytes);
            return EXIT_FAIL;
        }
        if (b->role != TESS_BUFFER_INPUT) continue;
        const int64_t *shape = g->shape + g->ndim - b->rank;
        if (input) st = tess_netcdf_read(input, b->name, b->dtype, b->rank, shape, g->dims + g->ndim - b->rank, r->host[i]);
        else if (own_inputs) st = tess_op_fill_input(g->op, g->shape, g->ndim, dtype, i, r->host[i], 1);
        else fill_initial(b, shape, r->host[i]);
    }
    /* outputs start as copies of the inputs they advance: their fixed boundary values */
    for (int i = 0; i < r->n && !st; i++)
        if (r->buf[i].advances >= 0)
            memcpy(r->host[i], r->host[r->buf[i].advances], (size_t)r->buf[i].count * r->buf[i].elem_bytes);
    return st ? cli_fail_status(st) : EXIT_OK;
}

static void print_progress(long done, long steps, double elapsed_s, void *user) {
    bool *terminal = user;
    static double last;
    if (done < steps && elapsed_s - last < 1 && done > 1) return;
    last = elapsed_s;
    fprintf(stderr, "%s  check    float64 reference: step %ld of %ld, %.1f s", *terminal ? "\r" : "", done, steps,
            elapsed_s);
    if (!*terminal || done == steps) fputc('\n', stderr);
}

/* "(z, y, x) = (1, 2, 3)" for element i of buffer b. */
static void point_text(const run_grid *g, const tess_buffer_info *b, int64_t i, char *buf, size_t len) {
    int64_t p[3] = {0, 0, 0};
    const int64_t *shape = g->shape + g->ndim - b->rank;
    for (int a = b->rank - 1; a >= 0; a--) {
        p[a] = i % shape[a];
        i /= shape[a];
    }
    char names[32] = "", at[96] = "";
    for (int a = 0; a < b->rank; a++) {
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", a ? ", " : "", g->dims[g->ndim - b->rank + a]);
        snprintf(at + strlen(at), sizeof at - strlen(at), "%s%lld", a ? ", " : "", (long long)p[a]);
    }
    snprintf(buf, len, "(%s) = (%s)", names, at);
}

/* Compares the advanced fields of a run with the reference's; 0 when within tol, else prints why and returns 1. */
static int compare_runs(const run_grid *g, const run_fields *run, const run_fields *ref, long steps, double tol) {
    double worst = 0;
    int failed = 0;
    for (int i = 0; i < run->n; i++) {
        const tess_buffer_info *b = &run->buf[i];
        if (!b->advanced) continue;
        tess_comparison c;
        tess_status st = tess_reference_compare(b->dtype, run->host[i], ref->host[i], b->count, &c);
        if (st) return cli_fail_status(st);
        char at[160];
        point_text(g, b, c.worst, at, sizeof at);
        if (c.nonfinite || c.ref_nonfinite) {
            fprintf(stderr, "tessera: error: after %ld steps '%s' holds %lld NaN or infinite values in the run and %lld "
                    "in the float64 reference (first at %s)%s\n", steps, b->name, (long long)c.nonfinite,
                    (long long)c.ref_nonfinite, at,
                    c.ref_nonfinite ? ": they come from the inputs or the stencil, not from rounding" : "");
            failed = 1;
        }
        worst = fmax(worst, c.max_diff);
        if (!failed && !(c.max_diff <= tol)) {
            fprintf(stderr, "tessera: error: the run differs from the float64 reference by %.3g in '%s' at %s "
                    "(tolerance %.3g)\n", c.max_diff, b->name, at, tol);
            failed = 1;
        }
    }
    printf("  check    largest difference from the float64 reference after %ld steps: %.3g "
           "(relative to the field's magnitude; tolerance %.3g)\n", steps, worst, tol);
    return failed;
}

static tess_status write_output(const char *path, const run_grid *g, const run_fields *r, const char *history) {
    tess_netcdf_var vars[RUN_MAX_BUFFERS];
    int n = 0;
    for (int i = 0; i < r->n; i++)
        if (r->buf[i].role == TESS_BUFFER_INPUT)
            vars[n++] = (tess_netcdf_var){r->buf[i].name, NULL, r->buf[i].dtype, r->buf[i].rank, r->host[i]};
    return tess_netcdf_write(path, g->ndim, g->shape, g->dims, vars, n, g->op, history);
}

/* Runs the fields split into slabs and says how it went. */
static tess_status run_split(tess_context *ctx, const run_grid *g, const char *dtype, const char *backend,
                             const tess_split_options *o, run_fields *r, long steps, double *seconds) {
    tess_split_report rep;
    tess_status st = tess_split_run(ctx, g->op, g->shape, g->ndim, dtype, backend, o, r->host, r->n, steps, &rep);
    if (st) return st;
    *seconds = rep.seconds;
    printf("  split    %d slab%s along %s (planes", rep.ranks, rep.ranks > 1 ? "s" : "", rep.axis);
    for (int k = 0; k < rep.ranks; k++) printf(" %lld-%lld", (long long)rep.lo[k], (long long)rep.hi[k] - 1);
    printf("), halos of %d plane%s, %s transport, overlap %s, halo_chunks %d, exchange_every %d\n", rep.depth,
           rep.depth == 1 ? "" : "s", rep.transport, o->overlap ? "split" : "none", o->halo_chunks, o->exchange_every);
    printf("  kernel   dispatched for each of %d window shapes\n", rep.kernels);
    printf("  halos    %ld exchanges, %ld messages, %.3f MB, %.3f s waiting\n", rep.exchanges, rep.messages,
           rep.halo_bytes / 1e6, rep.wait_seconds);
    return TESS_OK;
}

/* Runs the kernel for `steps` steps on the fields, in device memory for cuda. */
static tess_status run_kernel(tess_kernel *k, bool on_device, run_fields *r, long steps, double *seconds) {
    void *arrays[RUN_MAX_BUFFERS] = {0};
    tess_status st = TESS_OK;
    for (int i = 0; i < r->n && !st; i++) {
        size_t bytes = (size_t)r->buf[i].count * r->buf[i].elem_bytes;
        if (!on_device) arrays[i] = r->host[i];
        else if (!(st = tess_kernel_alloc(k, bytes + 1, &arrays[i])))
            st = tess_kernel_upload(k, arrays[i], r->host[i], bytes);
    }
    double t0 = now_s();
    for (long s = 0; s < steps && !st; s++) {
        st = tess_kernel_run(k, arrays, r->n);
        tess_op_advance(r->buf, r->n, arrays);
    }
    *seconds = now_s() - t0;
    if (!on_device) {
        memcpy(r->host, arrays, sizeof arrays);   /* the last time level in the inputs' places */
        return st;
    }
    for (int i = 0; i < r->n && !st; i++)
        if (r->buf[i].role != TESS_BUFFER_SCRATCH)
            st = tess_kernel_download(k, r->host[i], arrays[i], (size_t)r->buf[i].count * r->buf[i].elem_bytes);
    for (int i = 0; i < r->n; i++) tess_kernel_free(k, arrays[i]);
    return st;
}

int cmd_run(int argc, char **argv) {
    static const struct option options[] = {
        {"shape", required_argument, 0, 's'}, {"dtype", required_argument, 0, 't'},
        {"backend", required_argument, 0, 'b'}, {"steps", required_argument, 0, 'n'},
        {"input", required_argument, 0, 'i'}, {"output", required_argument, 0, 'o'},
        {"tune", required_argument, 0, 'T'}, {"check", no_argument, 0, 'c'},
        {"progress", no_argument, 0, 'p'}, {"db", required_argument, 0, 'd'},
        {"ranks", required_argument, 0, 'R'}, {"split", required_argument, 0, 'S'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    cli_task t = {0};
    const char *input = NULL, *output = NULL, *backend = "cpu", *split = NULL;
    long steps = 100, tune = 0, ranks = 0;
    bool check = false, progress = false;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":ho:", options, NULL)) != -1) {
        switch (c) {
        case 's': t.shape_text = optarg; break;
        case 't': t.dtype = optarg; break;
        case 'b': backend = optarg; break;
        case 'i': input = optarg; break;
        case 'o': output = optarg; break;
        case 'c': check = true; break;
        case 'p': progress = true; break;
        case 'd': t.db = optarg; break;
        case 'n': if (!cli_parse_int("run", "--steps", optarg, 1, 100000000, &steps)) return EXIT_USAGE; break;
        case 'T': if (!cli_parse_int("run", "--tune", optarg, 1, 100000, &tune)) return EXIT_USAGE; break;
        case 'R':
            if (!cli_parse_int("run", "--ranks", optarg, 1, TESS_SPLIT_MAX_RANKS, &ranks)) return EXIT_USAGE;
            break;
        case 'S': split = optarg; break;
        case 'h': help(); return EXIT_OK;
        case ':': return cli_usage_error("run", "option %s needs a value", argv[optind - 1]);
        default: return cli_usage_error("run", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1) return cli_usage_error("run", optind == argc ? "missing stencil" : "expected one stencil");
    if (strcmp(backend, "cpu") != 0 && strcmp(backend, "cuda") != 0)
        return cli_usage_error("run", "--backend is cpu or cuda, not '%s'", backend);
    if (split && !ranks) return cli_usage_error("run", "--split needs --ranks");
    if (tune && ranks)
        return cli_usage_error("run", "--tune tunes the whole grid's task, which a split run does not launch: tune "
                               "its windows' tasks with tessera tune");
    t.op = argv[optind];
    int rc = cli_task_shape("run", &t);
    if (rc) return rc;
    const char *dtype = t.dtype ? t.dtype : "f32";
    run_grid g = {t.op, t.ndim, t.shape, {NULL, NULL, NULL}};
    char dims[4][TESS_EXTENT_NAME_MAX];

    /* what the run needs, checked before anything runs */
    run_fields state = {0}, ref = {0};
    tess_status st = tess_op_list_buffers(t.op, t.shape, t.ndim, dtype, state.buf, RUN_MAX_BUFFERS, &state.n);
    if (st) return cli_fail_status(st);
    bool advances = false;
    for (int i = 0; i < state.n; i++) advances = advances || state.buf[i].advances >= 0;
    if (!advances || t.ndim > 3)
        return cli_usage_error("run", "'%s' is not a stencil: run steps operators whose outputs advance their inputs "
                               "(tessera ops lists them)", t.op);
    if ((st = tess_op_extent_names(t.op, t.shape, t.ndim, dims))) return cli_fail_status(st);
    const tess_buffer_info *odd = (input || output) ? first_non_field(&state, &g) : NULL;
    if (odd)
        return cli_usage_error("run", "--input and --output exchange grid fields of f32 or f64, and %s's buffer '%s' "
                               "is not one (%s, %lld values); its own app reads and writes such runs",
                               t.op, odd->name, odd->dtype, (long long)odd->count);
    tess_split_options so = tess_split_options_default();
    so.ranks = (int)ranks;
    if (ranks && split && (st = tess_split_options_parse(t.op, t.shape, t.ndim, split, &so))) return cli_fail_status(st);
    if (ranks && (st = tess_split_check(t.op, t.shape, t.ndim, backend, &so, NULL))) return cli_fail_status(st);
    for (int a = 0; a < t.ndim; a++) g.dims[a] = dims[a];
    if (output && (st = tess_output_check(output))) return cli_fail_status(st);
    double bytes, tol;
    if ((st = tess_op_counts(t.op, t.shape, t.ndim, dtype, &bytes, NULL, &tol))) return cli_fail_status(st);
    if ((rc = run_fields_init(&state, &g, dtype, input))) {
        run_fields_free(&state);
        return rc;
    }

    tess_context *ctx;
    st = tess_open(&ctx, t.db);
    if (st) {
        run_fields_free(&state);
        return cli_fail_status(st);
    }
    double seconds;
    if (ranks) {
        printf("tessera run %s %s %s on %s, %ld steps\n", t.op, dtype, t.shape_text, backend, steps);
        st = run_split(ctx, &g, dtype, backend, &so, &state, steps, &seconds);
    } else {
        tess_kernel *k = NULL;
        tess_dispatch_options d = tess_dispatch_options_default();
        d.online_budget = (int)tune;
        st = tess_dispatch(ctx, t.op, t.shape, t.ndim, dtype, backend, &d, &k);
        if (st) goto done;
        printf("tessera run %s %s %s on %s, %ld steps\n  kernel   %s config (%s): %s\n", t.op, dtype, t.shape_text,
               backend, steps, tess_kernel_origin(k), tess_kernel_note(k), tess_kernel_config(k));
        st = run_kernel(k, strcmp(backend, "cuda") == 0, &state, steps, &seconds);
    }
    if (st) goto done;
    printf("  time     %.3f s, %.3f ms per step, %.2f GB/s effective\n", seconds, 1e3 * seconds / (double)steps,
           bytes * (double)steps / seconds / 1e9);
    if (output) {
        char history[512];
        int n = snprintf(history, sizeof history, "tessera run %s --shape %s --dtype %s --backend %s --steps %ld%s%s",
                         t.op, t.shape_text, dtype, backend, steps, input ? " --input " : "", input ? input : "");
        if (ranks && n > 0 && (size_t)n < sizeof history)
            snprintf(history + n, sizeof history - (size_t)n, " --ranks %ld%s%s", ranks, split ? " --split " : "",
                     split ? split : "");
        st = write_output(output, &g, &state, history);
        if (st) goto done;
        printf("  output   %s\n", output);
    }
    if (check) {
        bool terminal = isatty(STDERR_FILENO);
        rc = run_fields_init(&ref, &g, "f64", input);
        if (!rc) st = tess_reference_steps(t.op, t.shape, t.ndim, ref.host, ref.n, steps,
                                           progress || terminal ? print_progress : NULL, &terminal);
        if (!rc && !st) rc = compare_runs(&g, &state, &ref, steps, tol * sqrt((double)steps));
    }
done:
    run_fields_free(&state);
    run_fields_free(&ref);
    tess_close(ctx);
    if (st) return cli_fail_status(st);
    return rc;
}
