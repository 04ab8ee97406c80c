/*
 * sum_cpu.c - C/OpenMP code generation for the sum.
 *
 * Each thread sums a contiguous share of the vector into `accumulators`
 * independent partial sums (breaking the add latency chain), optionally as an
 * `omp simd` reduction, in the data's precision or in double; the threads'
 * results are combined by an OpenMP reduction.
 */
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "core/strbuf.h"
#include "cpu_common.h"
#include "sum.h"

static const char *const acc_types[] = {"data", "double"};

tess_status tess_sum_cpu_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out) {
    (void)op;
    tess_space *s = tess_space_create();
    if (!s) return tess_error(TESS_ERR_NOMEM, "sum space");
    const double simd[] = {0, 1}, accs[] = {1, 2, 4, 8, 16, 32};
    /* No more accumulators than elements: the loop over whole groups would
     * have the constant bound 0, which GCC's OpenMP refuses to compile. */
    int naccs = 1;
    while (naccs < 6 && accs[naccs] <= (double)tess_shape_elements(t->shape, t->ndim)) naccs++;
    tess_status st = tess_cpu_add_threads(s, dev);
    if (!st) st = tess_space_add(s, "simd", 2, simd, 0);
    if (!st) st = tess_space_add(s, "accumulators", naccs, accs, 0);
    if (!st) st = tess_space_add_labels(s, "acc_type", 2, acc_types, 0);
    if (st) {
        tess_space_destroy(s);
        return st;
    }
    *out = s;
    return TESS_OK;
}

tess_status tess_sum_cpu_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                              const tess_config *c, tess_kernel_source *out) {
    (void)op;
    (void)dev;
    int threads = (int)tess_config_get(s, c, "threads");
    int simd = (int)tess_config_get(s, c, "simd");
    int accs = (int)tess_config_get(s, c, "accumulators");
    int acc_double = (int)tess_config_get(s, c, "acc_type") == 1;
    char config[512];
    tess_status st = tess_config_format(s, c, config, sizeof config);
    if (st) return st;
    const char *real = t->dtype == TESS_F64 ? "double" : "float";
    long long n = (long long)tess_shape_elements(t->shape, t->ndim);
    tess_strbuf b = {0};
    tess_strbuf_printf(&b,
        "/* sum: out[0] = sum of %lld %s elements.\n"
        " * config: %s */\n"
        "#include <stddef.h>\n\n"
        "#define N %lldULL\n#define THREADS %d\n#define ACCS %d\n"
        "typedef %s real;\n"
        "typedef %s acc_t;   /* accumulator type */\n\n"
        "void tess_sum(void *const *buffers) {\n"
        "    const real *restrict in = buffers[0];\n"
        "    real *restrict out = buffers[1];\n"
        "    acc_t total = 0;\n"
        "    #pragma omp parallel num_threads(THREADS) reduction(+:total)\n"
        "    {\n"
        "        acc_t part[ACCS] = {0};\n"
        "        /* whole groups of ACCS elements, one partial sum per position */\n"
        "        #pragma omp for schedule(static)\n"
        "        for (size_t g = 0; g < N / ACCS; g++) {\n",
        n, real, config, n, threads, accs, real, acc_double ? "double" : real);
    if (simd) tess_strbuf_puts(&b, "            #pragma omp simd\n");
    tess_strbuf_puts(&b,
        "            for (size_t k = 0; k < ACCS; k++) part[k] += in[g * ACCS + k];\n"
        "        }\n"
        "        acc_t mine = 0;\n"
        "        for (size_t k = 0; k < ACCS; k++) mine += part[k];\n"
        "        /* the tail that does not fill a group */\n"
        "        #pragma omp for schedule(static)\n"
        "        for (size_t i = N / ACCS * ACCS; i < N; i++) mine += in[i];\n"
        "        total += mine;\n"
        "    }\n"
        "    out[0] = (real)total;\n"
        "}\n");
    memset(out, 0, sizeof *out);
    st = tess_strbuf_finish(&b, &out->code);
    if (st) return st;
    out->nlaunches = 1;
    strcpy(out->launch[0].entry, "tess_sum");
    return TESS_OK;
}
