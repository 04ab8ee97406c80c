/*
 * md_verlet.c - the halves of a velocity-Verlet step as an operator
 * (md_step.h): task checks, buffers, the float64 reference and the C/OpenMP
 * and CUDA generators (templates/md_verlet.c.in, templates/md_verlet.cu).
 * The CUDA kernels of the first half take one thread per atom; the second
 * half one block per chunk of atoms, which sums the chunk's thermo terms.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "core/strbuf.h"
#include "md_step.h"
#include "templates/md_noise.h"

extern const char tess_src_reductions_pairs_templates_md_noise_h[];
extern const char tess_src_reductions_pairs_templates_md_verlet_c_in[];
extern const char tess_src_reductions_pairs_templates_md_verlet_cu[];

/* The verification scalars: a time step, and the thermostat at T = 1 with friction 1. */
#define DT 0.005
#define SEED 1
#define STEP 1

static const tess_attr_spec verlet_attrs[] = {
    {"half", TESS_ATTR_WORD, "first", "first,second", "first: kick, drift, pack positions; second: kick, thermo sums"},
    {"thermostat", TESS_ATTR_WORD, "none", "none,langevin", "half=first: plain drift, or BAOAB's Langevin step"},
    {"density", TESS_ATTR_REAL, "0.8442", NULL, "atoms per sigma^3 of the default box"},
};

typedef struct verlet_kind {
    bool first, langevin;
} verlet_kind;

static verlet_kind kind_of(const tess_task *t) {
    const char *half = tess_task_attr(t, "half"), *thermostat = tess_task_attr(t, "thermostat");
    return (verlet_kind){!half || strcmp(half, "first") == 0, thermostat && strcmp(thermostat, "langevin") == 0};
}

static tess_status verlet_check(const tess_op *op, const tess_task *t) {
    (void)op;
    tess_md_params p;
    tess_status st = tess_md_params_get(t, &p);
    if (!st) st = tess_md_check_common(t, 1, &p);
    if (!st && !kind_of(t).first && kind_of(t).langevin)
        st = tess_error(TESS_ERR_ARG, "md_verlet: thermostat=langevin belongs to half=first");
    return st;
}

static tess_status add_ranged(tess_buffer_list *out, const char *name, tess_buffer_role role, tess_dtype d,
                              int64_t count, double lo, double hi) {
    tess_status st = tess_buffer_list_add(out, name, role, d, count);
    if (!st) {
        out->spec[out->n - 1].lo = lo;
        out->spec[out->n - 1].hi = hi;
    }
    return st;
}

static tess_status verlet_buffers(const tess_op *op, const tess_task *t, tess_buffer_list *out) {
    (void)op;
    tess_md_params p;
    tess_status st = tess_md_params_get(t, &p);
    if (st) return st;
    const int64_t n = p.n;
    if (kind_of(t).first) {
        st = add_ranged(out, "x", TESS_BUF_INOUT, TESS_F64, 3 * n, 0, p.box);
        if (!st) st = tess_buffer_list_add(out, "v", TESS_BUF_INOUT, TESS_F64, 3 * n);
        if (!st) st = tess_buffer_list_add(out, "f", TESS_BUF_IN, t->dtype, 3 * n);
        if (!st) st = tess_buffer_list_add(out, "pos", TESS_BUF_OUT, t->dtype, 4 * n);
        /* f32: the positions rounded once, within an ulp of where the f64 state is */
        if (!st && t->dtype == TESS_F32) out->spec[out->n - 1].tolerance = 1e-6;
        return st;
    }
    st = tess_buffer_list_add(out, "v", TESS_BUF_INOUT, TESS_F64, 3 * n);
    if (!st) st = tess_buffer_list_add(out, "f", TESS_BUF_IN, t->dtype, 3 * n);
    if (!st) st = tess_buffer_list_add(out, "ev", TESS_BUF_IN, TESS_F64, 2 * n);
    return st ? st : tess_buffer_list_add(out, "sums", TESS_BUF_OUT, TESS_F64, 3 * tess_md_chunks(n));
}

static double c1_of(void) { return exp(-1.0 * DT); }
static double c2_of(void) { return sqrt(1 - c1_of() * c1_of()); }

static tess_status verlet_reference(const tess_op *op, const tess_task *t, void *const *bufs) {
    (void)op;
    tess_md_params p;
    tess_status st = tess_md_params_get(t, &p);
    if (st) return st;
    const verlet_kind k = kind_of(t);
    const double h = 0.5 * DT;
    if (k.first) {
        double *x = bufs[0], *v = bufs[1];
        for (long long i = 0; i < p.n; i++) {
            for (int d = 0; d < 3; d++) {
                const long long e = 3 * i + d;
                v[e] += h * tess_dtype_load(bufs[2], t->dtype, e);
                if (k.langevin) {
                    x[e] += h * v[e];
                    v[e] = c1_of() * v[e] + c2_of() * md_noise(SEED, STEP, (uint64_t)e);
                    x[e] += h * v[e];
                } else {
                    x[e] += DT * v[e];
                }
                x[e] -= p.box * floor(x[e] / p.box);
                tess_dtype_store(bufs[3], t->dtype, 4 * i + d, x[e]);
            }
            tess_dtype_store(bufs[3], t->dtype, 4 * i + 3, 0);
        }
        return TESS_OK;
    }
    double *v = bufs[0], *sums = bufs[3];
    const double *ev = bufs[2];
    memset(sums, 0, (size_t)(3 * tess_md_chunks(p.n)) * sizeof *sums);
    for (long long i = 0; i < p.n; i++) {
        double *chunk = sums + 3 * (i / TESS_MD_CHUNK);
        for (int d = 0; d < 3; d++) {
            v[3 * i + d] += h * tess_dtype_load(bufs[1], t->dtype, 3 * i + d);
            chunk[0] += v[3 * i + d] * v[3 * i + d];
        }
        chunk[1] += ev[2 * i];
        chunk[2] += ev[2 * i + 1];
    }
    return TESS_OK;
}

static double verlet_flops(const tess_op *op, const tess_task *t) {
    (void)op;
    const verlet_kind k = kind_of(t);
    return (double)t->shape[0] * 3 * (k.first ? (k.langevin ? 12 : 6) : 4);
}

static double verlet_bytes(const tess_op *op, const tess_task *t) {
    (void)op;
    const double n = (double)t->shape[0], r = (double)tess_dtype_size(t->dtype);
    /* first: x and v read and written, f read, pos written; second: v, f, ev */
    return kind_of(t).first ? n * (4 * 24 + 3 * r + 4 * r) : n * (2 * 24 + 3 * r + 16) + 24.0 * (double)tess_md_chunks(t->shape[0]);
}

static double verlet_tolerance(const tess_op *op, const tess_task *t) {
    (void)op;
    (void)t;
    return 1e-12;
}

/* The scalars both generators pass, in the templates' order. */
static tess_status add_scalars(const tess_task *t, tess_kernel_source *out) {
    tess_md_params p;
    tess_status st = tess_md_params_get(t, &p);
    const verlet_kind k = kind_of(t);
    if (!st) st = tess_kernel_source_add_scalar(out, "dt", TESS_SCALAR_F64, DT);
    if (!st && k.first) st = tess_kernel_source_add_scalar(out, "box", TESS_SCALAR_F64, p.box);
    if (!st && k.langevin) st = tess_kernel_source_add_scalar(out, "c1", TESS_SCALAR_F64, c1_of());
    if (!st && k.langevin) st = tess_kernel_source_add_scalar(out, "c2", TESS_SCALAR_F64, c2_of());
    if (!st && k.langevin) st = tess_kernel_source_add_scalar(out, "seed", TESS_SCALAR_I64, SEED);
    if (!st && k.langevin) st = tess_kernel_source_add_scalar(out, "step", TESS_SCALAR_I64, STEP);
    return st;
}

static void header(tess_strbuf *b, const tess_task *t, const tess_space *s, const tess_config *c, const char *what) {
    char config[256] = "";
    tess_config_format(s, c, config, sizeof config);
    const verlet_kind k = kind_of(t);
    tess_strbuf_printf(b,
                       "/* md_verlet: %s half of velocity Verlet%s for %lld atoms (%s forces), %s, generated by "
                       "tessera.\n * config: %s */\n"
                       "#define N %lldLL\n#define REAL %s\n#define FIRST %d\n#define LANGEVIN %d\n",
                       k.first ? "the first" : "the second", k.langevin ? " with Langevin's thermostat" : "",
                       (long long)t->shape[0], tess_dtype_name(t->dtype), what, config, (long long)t->shape[0],
                       t->dtype == TESS_F64 ? "double" : "float", k.first, k.langevin);
}

static tess_status verlet_cpu_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out) {
    (void)op;
    (void)t;
    return tess_md_cpu_threads_space(dev, out);
}

static tess_status verlet_cpu_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                                   const tess_config *c, tess_kernel_source *out) {
    (void)op;
    (void)dev;
    tess_strbuf b = {0};
    header(&b, t, s, c, "C/OpenMP");
    tess_strbuf_printf(&b, "#define THREADS %d\n#define CHUNK %d\n#include <math.h>\n\n",
                       (int)tess_config_get(s, c, "threads"), TESS_MD_CHUNK);
    tess_strbuf_puts(&b, tess_src_reductions_pairs_templates_md_noise_h);
    tess_strbuf_puts(&b, tess_src_reductions_pairs_templates_md_verlet_c_in);
    memset(out, 0, sizeof *out);
    tess_status st = tess_strbuf_finish(&b, &out->code);
    if (!st) st = add_scalars(t, out);
    if (st) return st;
    out->nlaunches = 1;
    strcpy(out->launch[0].entry, "md_verlet");
    return TESS_OK;
}

static tess_status verlet_cuda_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out) {
    (void)op;
    (void)dev;
    return kind_of(t).first ? tess_md_cuda_block_space(out) : tess_md_cuda_chunk_space(out);
}

static tess_status verlet_cuda_emit(const tess_op *op, const tess_task *t, const tess_device *dev,
                                    const tess_space *s, const tess_config *c, tess_kernel_source *out) {
    (void)op;
    const int block = (int)tess_config_get(s, c, "block");
    const bool first = kind_of(t).first;
    const long long grid = first ? ((long long)t->shape[0] + block - 1) / block : tess_md_chunks(t->shape[0]);
    tess_strbuf b = {0};
    header(&b, t, s, c, dev->arch[0] ? dev->arch : "cuda");
    tess_strbuf_printf(&b, "#define BLOCK %d\n#define CHUNK %d\n#define MD_FN static __device__ __forceinline__\n\n",
                       block, TESS_MD_CHUNK);
    tess_strbuf_puts(&b, tess_src_reductions_pairs_templates_md_noise_h);
    tess_strbuf_puts(&b, tess_src_reductions_pairs_templates_md_verlet_cu);
    memset(out, 0, sizeof *out);
    tess_status st = tess_strbuf_finish(&b, &out->code);
    if (!st) st = add_scalars(t, out);
    if (st) return st;
    snprintf(out->options, sizeof out->options, "--minimal");
    return tess_kernel_source_add_launch(out, "md_verlet", (unsigned)grid, (unsigned)block, 0);
}

static const tess_op_backend verlet_impl[] = {
    {.backend = "cpu", .space = verlet_cpu_space, .emit = verlet_cpu_emit},
    {.backend = "cuda", .space = verlet_cuda_space, .emit = verlet_cuda_emit},
};

const tess_op tess_op_md_verlet = {
    .name = "md_verlet",
    .family = "reductions",
    .summary = "a half of a velocity-Verlet step (first: x, v, f, pos; second: v, f, ev, sums per chunk; scalars dt, box, ...)",
    .default_shape = "32000",
    .extents = "N",
    .attrs = verlet_attrs,
    .nattrs = sizeof verlet_attrs / sizeof verlet_attrs[0],
    .impl = verlet_impl,
    .nimpl = 2,
    .check_task = verlet_check,
    .buffers = verlet_buffers,
    .reference = verlet_reference,
    .flops = verlet_flops,
    .bytes = verlet_bytes,
    .tolerance = verlet_tolerance,
};
