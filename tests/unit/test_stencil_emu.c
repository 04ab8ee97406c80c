/*
 * test_stencil_emu.c - the CUDA kernels of temporal blocking, checked on
 * the CPU: for each case (stencil, shape, dtype, config) the generated
 * CUDA source is compiled by the system C compiler against cuda_emu.h
 * into a shared object, loaded, and run over every block of every launch;
 * its outputs must match the float64 reference within the stencil's
 * tolerance. Also checked: __ldg reads stay in the buffers, nothing is
 * written past shared memory or the buffers, inputs are left unchanged,
 * barriers do not deadlock. Cases cover rows per thread, blocks with and
 * without warp shuffles, unrolled passes, chunks that do not divide z,
 * periodic axes, lags of two, two state fields and coefficient fields.
 * Skipped without a C compiler.
 */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "check.h"
#include "extra_specs.h"
#include "h200.h"
#include "core/error.h"
#include "core/subprocess.h"
#include "stencils/family.h"

/* A time-blocked config: blocks of one layer (block_z=1), no vectors, shared tiles. */
#define TB_CONFIG(bx, by, px, py, chunk, unroll, tb)                                                       \
    "block_x=" #bx ",block_y=" #by ",block_z=1,ppt_x=" #px ",ppt_y=" #py ",vec=1,stream=1,chunk=" #chunk \
    ",staging=shared,unroll=" #unroll ",min_blocks=1,time_block=" #tb

typedef struct emu_case {
    const char *spec;
    int64_t shape[3];   /* z, y, x */
    tess_dtype dtype;
    const char *config;
} emu_case;

/* Grids hold tiles that touch the boundary and tiles that do not (which run
 * other copies of the plane loop); the emulation is slow, so they are small. */
static const emu_case cases[] = {
    /* Four rows per thread, chunks of 12 and 23 planes of 45, one and two passes per turn. */
    {"heat3d4", {45, 130, 60}, TESS_F32, TB_CONFIG(32, 16, 1, 4, 12, 1, 4)},
    {"heat3d4", {45, 130, 60}, TESS_F64, TB_CONFIG(32, 16, 1, 4, 23, 2, 2)},
    /* Two rows per thread, blocks of 32x4. */
    {"heat3d4", {21, 40, 100}, TESS_F64, TB_CONFIG(32, 4, 1, 2, 8, 1, 2)},
    /* Two columns per thread: no shuffles. */
    {"heat3d4", {21, 40, 260}, TESS_F32, TB_CONFIG(64, 4, 2, 4, 8, 2, 4)},
    /* Periodic along z and x, a lag of two planes; chunks shorter than the warm-up. */
    {"eight", {19, 24, 60}, TESS_F64, TB_CONFIG(32, 4, 1, 4, 4, 1, 4)},
    /* Two state fields; the 27-point box; nothing read along z; periodic along every axis. */
    {"two", {21, 40, 100}, TESS_F64, TB_CONFIG(32, 4, 1, 2, 8, 2, 2)},
    {"box4", {21, 40, 100}, TESS_F32, TB_CONFIG(32, 4, 1, 4, 8, 1, 4)},
    {"flatk", {13, 23, 64}, TESS_F64, TB_CONFIG(32, 4, 1, 2, 4, 2, 2)},
    {"allper", {21, 40, 100}, TESS_F64, TB_CONFIG(32, 4, 1, 4, 8, 2, 4)},
};

static const char *const extra_specs[] = {
    TESS_TEST_SPEC_EIGHT,
    "stencil two\ngrid 16x16x64\nsteps 2\nfield a in\nfield b in\nfield k coef\n"
    "field a_new out advances a\nfield b_new out advances b\n"
    "t = a[0,1,0] - b[0,-1,1]\n"
    "a_new = a + 0.1 * k * (t + a[1,0,-1] - a)\n"
    "b_new = b + 0.1 * (a[0,0,1] - b[-1,1,0] + k[0,0,1] * t[0,0,-1])\n",
    TESS_TEST_SPEC_BOX4,
    /* Nothing read along z, a coefficient field: read from global memory, off the bands only. */
    "stencil flatk\ngrid 16x16x64\nsteps 2\nfield u in\nfield k coef\nfield v out advances u\n"
    "v = u + 0.1 * k * (u[0,0,1] + u[0,0,-1] + u[0,1,0] + u[0,-1,0] - 4 * u)\n",
    /* Every axis periodic, reaches on one side only. */
    "stencil allper\ngrid 16x16x64\nboundary periodic z y x\nsteps 4\nfield u in\nfield k coef\n"
    "field v out advances u\n"
    "v = u + 0.05 * k[0,1,0] * (u[0,2,-1] + u[0,1,0] + u[0,0,-2] + u[1,0,0] + u[-2,1,0] - 5 * u)\n",
};

#define GUARD 16384           /* bytes on either side of each buffer */
#define GUARD_BYTE 0xa5
#define SEED 7

typedef int (*emu_run_fn)(void **buffers);
typedef const char *(*emu_error_fn)(void);

/* The kernel as C: `extern "C"` (which keeps the entries' names unmangled in
 * CUDA C++, as C names always are) is no C, so it is dropped. */
static void write_kernel(FILE *f, const char *code) {
    static const char link[] = "extern \"C\" ";
    for (const char *at; (at = strstr(code, link)); code = at + strlen(link)) fwrite(code, 1, (size_t)(at - code), f);
    fputs(code, f);
}

/* The kernel, a function per launch passing the buffers to its entry, and
 * emu_run: the launches in order, with the buffers' sizes for __ldg's checks. */
static bool write_source(const char *path, const tess_kernel_source *src, const tess_buffer_spec *bs, int nb) {
    FILE *f = fopen(path, "w");
    if (!f) return false;
    fputs("#include \"cuda_emu.h\"\n", f);
    write_kernel(f, src->code);
    for (int k = 0; k < src->nlaunches; k++) {
        fprintf(f, "\nstatic void emu_entry%d(void **b) { %s(", k, src->launch[k].entry);
        for (int i = 0; i < nb; i++) fprintf(f, "%sb[%d]", i ? ", " : "", i);
        fputs("); }\n", f);
    }
    fputs("\nint emu_run(void **b)\n{\n    static const size_t bytes[] = {", f);
    for (int i = 0; i < nb; i++)
        fprintf(f, "%s%lld", i ? ", " : "", (long long)(bs[i].count * tess_dtype_size(bs[i].dtype)));
    fprintf(f, "};\n    emu_buffers(b, bytes, %d);\n    return ", nb);
    for (int k = 0; k < src->nlaunches; k++) {
        const tess_launch *l = &src->launch[k];
        fprintf(f, "%semu_launch(emu_entry%d, b, (emu_dim3){%u, %u, %u}, (emu_dim3){%u, %u, %u}, %u)",
                k ? " ||\n           " : "", k, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
                l->block[2], l->shared_bytes);
    }
    fputs(";\n}\n", f);
    return fclose(f) == 0;
}

/* Compiles `c_path` into `so_path` and loads it (NULL on failure, reported). */
static void *build(const char *c_path, const char *so_path, const char *label) {
    char *argv[] = {(char *)tess_c_compiler(), "-std=gnu11", "-O1", "-fPIC", "-shared", "-w",
                    "-I", TESS_SOURCE_DIR "/tests/unit", "-o", (char *)so_path, (char *)c_path, NULL};
    char *out = NULL;
    int rc = tess_run_capture(argv, &out);
    CHECK_MSG(rc == 0, "%s: %s failed (exit %d) on %s", label, tess_c_compiler(), rc, c_path);
    if (rc && out) fputs(out, stderr);
    free(out);
    if (rc) return NULL;
    void *h = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
    CHECK_MSG(h != NULL, "%s: dlopen: %s", label, dlerror());
    return h;
}

/* Host copies of the op's buffers: those the kernel runs on, each between
 * guards, and the reference's. */
#define EMU_MAX_BUFFERS 32   /* more than any stencil of the tests has */

typedef struct buffers {
    int n;
    tess_buffer_spec spec[EMU_MAX_BUFFERS];
    size_t bytes[EMU_MAX_BUFFERS];
    unsigned char *raw[EMU_MAX_BUFFERS];
    void *run[EMU_MAX_BUFFERS], *ref[EMU_MAX_BUFFERS];
} buffers;

/* The op's buffer declarations, at most EMU_MAX_BUFFERS of them. */
static bool declared_buffers(const tess_op *op, const tess_task *t, tess_buffer_spec *spec, int *n) {
    tess_buffer_list l;
    if (tess_op_buffers(op, t, &l)) return false;
    bool fits = l.n <= EMU_MAX_BUFFERS;
    CHECK_MSG(fits, "%s has %d buffers", op->name, l.n);
    *n = fits ? l.n : 0;
    if (fits) memcpy(spec, l.spec, (size_t)l.n * sizeof *spec);
    tess_buffer_list_free(&l);
    return fits;
}

static void buffers_free(buffers *b) {
    for (int i = 0; i < b->n; i++) {
        free(b->raw[i]);
        free(b->ref[i]);
    }
}

/* Inputs filled (the same in both sets), the rest NaN: what the kernel does
 * not write shows. The reference then computes its outputs. */
static bool buffers_init(buffers *b, const tess_op *op, const tess_task *t) {
    memset(b, 0, sizeof *b);
    if (!declared_buffers(op, t, b->spec, &b->n)) return false;
    for (int i = 0; i < b->n; i++) {
        b->bytes[i] = (size_t)b->spec[i].count * tess_dtype_size(b->spec[i].dtype);
        b->raw[i] = malloc(b->bytes[i] + 2 * GUARD);
        b->ref[i] = malloc(b->bytes[i]);
        if (!b->raw[i] || !b->ref[i]) return false;
        memset(b->raw[i], GUARD_BYTE, b->bytes[i] + 2 * GUARD);
        b->run[i] = b->raw[i] + GUARD;
        memset(b->run[i], 0xff, b->bytes[i]);
        if (b->spec[i].role == TESS_BUF_IN && op->fill_input(op, t, i, b->run[i], SEED * 1000003ULL + (uint64_t)i))
            return false;
        memcpy(b->ref[i], b->run[i], b->bytes[i]);
    }
    return op->reference(op, t, b->ref) == TESS_OK;
}

/* No buffer written past its ends, no input changed. */
static void check_buffers(const buffers *b, const char *label) {
    for (int i = 0; i < b->n; i++) {
        const unsigned char *lo = b->raw[i], *hi = b->raw[i] + GUARD + b->bytes[i];
        size_t q = 0;
        while (q < GUARD && lo[q] == GUARD_BYTE && hi[q] == GUARD_BYTE) q++;
        CHECK_MSG(q == GUARD, "%s: written past the %s of buffer %s", label, lo[q] != GUARD_BYTE ? "start" : "end",
                  b->spec[i].name);
        if (b->spec[i].role == TESS_BUF_IN)
            CHECK_MSG(!memcmp(b->run[i], b->ref[i], b->bytes[i]), "%s: input %s changed", label, b->spec[i].name);
    }
}

/* Output i against the reference: |got - want| <= tol * (scale + |want|), as the evaluator verifies. */
static void compare_output(const buffers *b, int i, const tess_task *t, double tol, double scale, const char *label) {
    const tess_buffer_spec *s = &b->spec[i];
    int64_t wrong = 0, first = -1;
    for (int64_t e = 0; e < s->count; e++) {
        double got = tess_dtype_load(b->run[i], s->dtype, e), want = tess_dtype_load(b->ref[i], s->dtype, e);
        if (!(fabs(got - want) <= tol * (scale + fabs(want))) && !wrong++) first = e;
    }
    int64_t nx = t->shape[2], ny = t->shape[1];
    CHECK_MSG(!wrong, "%s: %lld of %lld values of %s wrong; the first at z=%lld y=%lld x=%lld: %.9g, expected %.9g",
              label, (long long)wrong, (long long)s->count, s->name, (long long)(first / nx / ny),
              (long long)(first / nx % ny), (long long)(first % nx), tess_dtype_load(b->run[i], s->dtype, first),
              tess_dtype_load(b->ref[i], s->dtype, first));
}

/* Runs the loaded kernel on fresh buffers and checks what it computed. */
static void run_and_check(void *so, const tess_op *op, const tess_task *t, const char *label) {
    emu_run_fn run;
    emu_error_fn error;
    void *run_sym = dlsym(so, "emu_run"), *error_sym = dlsym(so, "emu_error");
    CHECK_MSG(run_sym && error_sym, "%s: emu_run or emu_error missing", label);
    if (!run_sym || !error_sym) return;
    memcpy(&run, &run_sym, sizeof run);   /* object to function pointer, as POSIX allows */
    memcpy(&error, &error_sym, sizeof error);
    buffers b;
    bool ready = buffers_init(&b, op, t);
    CHECK_MSG(ready, "%s: buffers: %s", label, tess_errmsg());
    if (ready) {
        int rc = run(b.run);
        CHECK_MSG(rc == 0, "%s: %s", label, error() ? error() : "failed");
        check_buffers(&b, label);
        double tol = op->tolerance(op, t), scale = op->verify_scale ? op->verify_scale(op, t, b.ref) : 1;
        for (int i = 0; i < b.n; i++)
            if (b.spec[i].role == TESS_BUF_OUT) compare_output(&b, i, t, tol, scale, label);
    }
    buffers_free(&b);
}

/* Case c's task, source and label (its task and config); false on failure, reported. */
static bool emit_case(const emu_case *c, tess_task *t, tess_kernel_source *src, char *label, size_t len) {
    const tess_op *op = tess_stencils_op(c->spec);
    CHECK_MSG(op != NULL, "no stencil %s", c->spec);
    if (!op) return false;
    tess_status st = tess_task_init(t, c->spec, c->dtype, c->shape, 3);
    CHECK_MSG(st == TESS_OK, "%s: %s", c->spec, tess_errmsg());
    if (st) return false;
    char key[128];
    tess_task_key(t, key, sizeof key);
    snprintf(label, len, "%s %s", key, c->config);
    tess_device dev = tess_test_h200("NVIDIA H200");
    tess_space *sp = NULL;
    CHECK_OK(tess_op_space(op, t, &dev, &sp));
    if (!sp) return false;
    tess_config cfg;
    st = tess_config_parse(sp, c->config, &cfg);
    CHECK_MSG(st == TESS_OK, "%s: not legal: %s", label, st ? tess_errmsg() : "");
    if (!st) {
        const char *why = tess_space_violation(sp, &cfg);
        CHECK_MSG(!why, "%s: violates %s", label, why);
        st = why ? TESS_ERR_ARG : tess_op_emit(op, t, &dev, sp, &cfg, src);
        CHECK_MSG(st == TESS_OK, "%s: emit: %s", label, tess_errmsg());
    }
    tess_space_destroy(sp);
    return st == TESS_OK;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Case i: emitted, written to dir, compiled, run, checked. Its C file is
 * kept where the case failed. */
static void run_case(int i, const char *dir) {
    double t0 = now_s();
    int failures = check_failures_;
    tess_task t;
    tess_kernel_source src;
    char label[640];
    if (!emit_case(&cases[i], &t, &src, label, sizeof label)) return;
    char c_path[4096], so_path[4096];
    snprintf(c_path, sizeof c_path, "%s/case%d.c", dir, i);
    snprintf(so_path, sizeof so_path, "%s/case%d.so", dir, i);
    tess_buffer_spec bs[EMU_MAX_BUFFERS];
    int nb = 0;
    declared_buffers(tess_stencils_op(t.op), &t, bs, &nb);
    bool written = write_source(c_path, &src, bs, nb);
    CHECK_MSG(written, "%s: cannot write %s", label, c_path);
    void *so = written ? build(c_path, so_path, label) : NULL;
    if (so) {
        run_and_check(so, tess_stencils_op(t.op), &t, label);
        dlclose(so);
    }
    tess_kernel_source_free(&src);
    unlink(so_path);
    if (check_failures_ == failures) unlink(c_path);
    else fprintf(stderr, "%s: its source is %s\n", label, c_path);
    printf("%s: %s (%.1f s)\n", label, check_failures_ == failures ? "ok" : "FAILED", now_s() - t0);
}

/* Whether the compiler runs at all. */
static bool have_compiler(void) {
    char *argv[] = {(char *)tess_c_compiler(), "--version", NULL}, *out = NULL;
    bool ok = tess_run_capture(argv, &out) == 0;
    free(out);
    return ok;
}

int main(void) {
    char dir[] = "/tmp/tessera-emu-XXXXXX";
    if (!mkdtemp(dir)) {
        fprintf(stderr, "cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    if (!have_compiler()) {
        printf("skipped: no C compiler (%s does not run)\n", tess_c_compiler());
        rmdir(dir);
        return 77;
    }
    CHECK_OK(tess_stencils_register_builtin());
    register_extra_specs(extra_specs, sizeof extra_specs / sizeof extra_specs[0]);
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) run_case(i, dir);
    rmdir(dir);   /* left where sources of failed cases are kept */
    return check_finish("test_stencil_emu");
}
