/*
 * cmd_run.c - `tessera run STENCIL`: a multi-step simulation with the
 * dispatched (tuned) kernel, ping-ponging each output with the input it
 * advances; initial fields from a netCDF file or an analytic initial
 * condition, final fields to netCDF; optionally checked against the float64
 * reference run step by step.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "core/error.h"
#include "core/netcdf_io.h"
#include "core/types.h"
#include "stencils/family.h"

static void help(void) {
    printf("usage: tessera run STENCIL [--shape S] [--dtype f32|f64] [--steps N] [--input in.nc]\n"
           "                         [--output out.nc] [--tune N] [--check] [--db PATH]\n\n"
           "Runs N time steps (default 100) of a stencil with the kernel tessera dispatches for the\n"
           "task on the cpu backend (the tuned config, else one predicted from similar tuned tasks,\n"
           "else the default; --tune N first tunes a task never tuned with N evaluations).\n"
           "Each output field is swapped with the input it advances after every step.\n\n"
           "  --input   netCDF file holding the stencil's input and coefficient fields as variables\n"
           "            of the same names, dimensions (z, y, x) of the grid's extents\n"
           "            Without it: inputs start as a Gaussian bump of width n/8 centred in the\n"
           "            grid, coefficients as lo + (hi - lo) * (1 + sin(2 pi x/nx) sin(2 pi y/ny)) / 2\n"
           "            over their declared range\n"
           "  --output  netCDF file (CF conventions) receiving the final fields\n"
           "  --check   also run the float64 reference step by step and report the largest\n"
           "            difference relative to the field's magnitude; exit 1 above the tolerance\n");
}

/* Analytic initial values of field f at point (z, y, x). */
static double initial_value(const tess_spec_field *f, int ndim, const int64_t *shape, const int64_t *p) {
    if (f->role == TESS_FIELD_COEF) {
        double lo = f->fill_lo, hi = f->fill_hi;
        double sx = sin(2 * M_PI * (double)p[ndim - 1] / (double)shape[ndim - 1]);
        double sy = ndim > 1 ? sin(2 * M_PI * (double)p[ndim - 2] / (double)shape[ndim - 2]) : 1;
        return lo + (hi - lo) * 0.5 * (1 + sx * sy);
    }
    double r2 = 0;
    for (int a = 0; a < ndim; a++) {
        double c = 0.5 * (double)(shape[a] - 1), w = (double)shape[a] / 8.0;
        r2 += (p[a] - c) * (p[a] - c) / (w * w);
    }
    return exp(-0.5 * r2);
}

static void fill_initial(const tess_spec_field *f, tess_dtype t, int ndim, const int64_t *shape, void *data) {
    int64_t n = tess_shape_elements(shape, ndim), p[3] = {0, 0, 0};
    for (int64_t i = 0; i < n; i++) {
        int64_t rest = i;
        for (int a = ndim - 1; a >= 0; a--) {
            p[a] = rest % shape[a];
            rest /= shape[a];
        }
        tess_dtype_store(data, t, i, initial_value(f, ndim, shape, p));
    }
}

typedef struct run_state {
    const tess_op *op;
    const tess_spec *spec;
    tess_task task;
    int nbuf;
    tess_buffer_list list;
    tess_buffer_spec *bufs;   /* list.spec */
    void **data;
} run_state;

static void run_state_free(run_state *r) {
    for (int i = 0; r->data && i < r->nbuf; i++) free(r->data[i]);
    free(r->data);
    tess_buffer_list_free(&r->list);
    r->data = NULL;
    r->nbuf = 0;
}

/* Allocates the buffers of a task and sets the fields' initial values. */
static tess_status run_state_init(run_state *r, const tess_op *op, const tess_spec *spec, const tess_task *t,
                                  const char *input) {
    memset(r, 0, sizeof *r);
    r->op = op;
    r->spec = spec;
    r->task = *t;
    tess_status st = tess_op_buffers(op, t, &r->list);
    if (st) return st;
    r->nbuf = r->list.n;
    r->bufs = r->list.spec;
    if (!(r->data = calloc((size_t)r->nbuf, sizeof *r->data))) return tess_error(TESS_ERR_NOMEM, "fields");
    for (int i = 0; i < r->nbuf && !st; i++) {
        r->data[i] = calloc((size_t)r->bufs[i].count, tess_dtype_size(r->bufs[i].dtype));
        if (!r->data[i]) st = tess_error(TESS_ERR_NOMEM, "field '%s'", r->bufs[i].name);
    }
    for (int f = 0; f < spec->nfields && f < r->nbuf && !st; f++) {
        const tess_spec_field *fd = &spec->field[f];
        if (fd->role == TESS_FIELD_OUT) continue;
        if (input)
            st = tess_nc_read_field(input, fd->name, r->bufs[f].dtype, t->ndim, t->shape, r->data[f]);
        else
            fill_initial(fd, r->bufs[f].dtype, t->ndim, t->shape, r->data[f]);
    }
    /* outputs start as copies of the inputs they advance: their fixed boundary values */
    for (int f = 0; f < spec->nfields && !st; f++)
        if (spec->field[f].role == TESS_FIELD_OUT && spec->field[f].advances >= 0)
            memcpy(r->data[f], r->data[spec->field[f].advances],
                   (size_t)r->bufs[f].count * tess_dtype_size(r->bufs[f].dtype));
    if (st) run_state_free(r);
    return st;
}

/* After a step: each output becomes the input it advances. */
static void swap_levels(run_state *r) {
    for (int f = 0; f < r->spec->nfields; f++) {
        int in = r->spec->field[f].advances;
        if (r->spec->field[f].role != TESS_FIELD_OUT || in < 0) continue;
        void *t = r->data[in];
        r->data[in] = r->data[f];
        r->data[f] = t;
    }
}

/* Largest |a - ref| / (1 + max |ref|) over the advanced fields. */
static double compare_states(const run_state *a, const run_state *ref) {
    double worst = 0;
    for (int f = 0; f < a->spec->nfields; f++) {
        int in = a->spec->field[f].advances;
        if (a->spec->field[f].role != TESS_FIELD_OUT || in < 0) continue;
        double mag = 0, err = 0;
        for (int64_t i = 0; i < a->bufs[in].count; i++) {
            double r = tess_dtype_load(ref->data[in], ref->bufs[in].dtype, i);
            double v = tess_dtype_load(a->data[in], a->bufs[in].dtype, i);
            mag = fmax(mag, fabs(r));
            err = fmax(err, fabs(v - r));
        }
        worst = fmax(worst, err / (1 + mag));
    }
    return worst;
}

int cmd_run(int argc, char **argv) {
    static const struct option options[] = {
        {"shape", required_argument, 0, 's'}, {"dtype", required_argument, 0, 't'},
        {"steps", required_argument, 0, 'n'}, {"input", required_argument, 0, 'i'},
        {"output", required_argument, 0, 'o'}, {"tune", required_argument, 0, 'T'},
        {"check", no_argument, 0, 'c'}, {"db", required_argument, 0, 'd'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    cli_task t = {0};
    const char *input = NULL, *output = NULL;
    long steps = 100, tune = 0;
    bool check = false;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":ho:", options, NULL)) != -1) {
        switch (c) {
        case 's': t.shape_text = optarg; break;
        case 't': t.dtype = optarg; break;
        case 'i': input = optarg; break;
        case 'o': output = optarg; break;
        case 'c': check = true; break;
        case 'd': t.db = optarg; break;
        case 'n': if (!cli_parse_int("run", "--steps", optarg, 1, 100000000, &steps)) return EXIT_USAGE; break;
        case 'T': if (!cli_parse_int("run", "--tune", optarg, 1, 100000, &tune)) return EXIT_USAGE; break;
        case 'h': help(); return EXIT_OK;
        case ':': return cli_usage_error("run", "option %s needs a value", argv[optind - 1]);
        default: return cli_usage_error("run", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1) return cli_usage_error("run", optind == argc ? "missing stencil" : "expected one stencil");
    t.op = argv[optind];
    int rc = cli_task_shape("run", &t);
    if (rc) return rc;
    const tess_spec *spec = tess_stencils_spec(t.op);
    const tess_op *op = tess_op_find(t.op);
    if (!spec || !op) return cli_usage_error("run", "'%s' is not a stencil (tessera ops lists them)", t.op);
    tess_dtype dt;
    tess_task task;
    tess_status st = tess_dtype_parse(t.dtype ? t.dtype : "f32", &dt);
    if (!st) st = tess_op_make_task(op, dt, dt, dt, t.shape, t.ndim, NULL, &task);
    if (st) return cli_fail_status(st);

    tess_context *ctx;
    st = tess_open(&ctx, t.db);
    if (st) return cli_fail_status(st);
    tess_kernel *k = NULL;
    run_state state = {0}, ref = {0};
    tess_dispatch_options d = tess_dispatch_options_default();
    d.online_budget = (int)tune;
    st = run_state_init(&state, op, spec, &task, input);
    if (!st) st = tess_dispatch(ctx, t.op, t.shape, t.ndim, t.dtype, "cpu", &d, &k);
    if (st) goto done;
    printf("tessera run %s %s %s, %ld steps\n  kernel   %s config (%s): %s\n", t.op, tess_dtype_name(dt),
           t.shape_text, steps, tess_kernel_origin(k), tess_kernel_note(k), tess_kernel_config(k));
    double t0 = tess_now();
    for (long s = 0; s < steps && !st; s++) {
        st = tess_kernel_run(k, state.data, state.nbuf);
        swap_levels(&state);
    }
    double seconds = tess_now() - t0;
    if (st) goto done;
    double bytes = op->bytes(op, &task) * (double)steps;
    printf("  time     %.3f s, %.3f ms per step, %.2f GB/s effective\n", seconds, 1e3 * seconds / steps,
           bytes / seconds / 1e9);
    if (check) {
        /* the same run in float64 with the reference implementation */
        tess_task task64 = task;
        task64.dtype = TESS_F64;
        tess_task_set_dtypes(&task64, TESS_F64, TESS_F64);
        st = run_state_init(&ref, op, spec, &task64, input);
        for (long s = 0; s < steps && !st; s++) {
            st = op->reference(op, &task64, ref.data);
            swap_levels(&ref);
        }
        if (st) goto done;
        double err = compare_states(&state, &ref), tol = op->tolerance(op, &task) * sqrt((double)steps);
        printf("  check    largest difference from the float64 reference after %ld steps: %.3g "
               "(relative to the field's magnitude; tolerance %.3g)\n", steps, err, tol);
        if (!(err <= tol)) st = tess_error(TESS_ERR_VERIFY, "the run differs from the float64 reference by %.3g", err);
    }
    if (!st && output) {
        tess_nc_field fields[TESS_SPEC_MAX_FIELDS];
        int n = 0;
        for (int f = 0; f < spec->nfields; f++)
            if (spec->field[f].role != TESS_FIELD_OUT)
                fields[n++] = (tess_nc_field){spec->field[f].name, spec->field[f].name, state.bufs[f].dtype, state.data[f]};
        char history[256];
        snprintf(history, sizeof history, "tessera run %s --shape %s --steps %ld", t.op, t.shape_text, steps);
        st = tess_nc_write_fields(output, t.ndim, t.shape, fields, n, spec->summary ? spec->summary : t.op, history);
        if (!st) printf("  output   %s\n", output);
    }
done:
    run_state_free(&state);
    run_state_free(&ref);
    tess_close(ctx);
    return st ? cli_fail_status(st) : EXIT_OK;
}
