/*
 * fuzz_stencil_parse.c - libFuzzer target for the stencil format. Any input
 * must either fail with a message or give a spec that (1) prints to text
 * which parses back to the same text, (2) evaluates on a small grid, and
 * (3) generates C/OpenMP and CUDA source for its default configs; crashes,
 * leaks and undefined behaviour are what the sanitizers report.
 * Built and run by run_stencil_fuzz.sh.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "stencils/gen_cpu.h"
#include "stencils/gen_cuda.h"
#include "stencils/spec.h"
#include "stencils/spec_eval.h"

static void round_trip(const tess_spec *s) {
    char *a = NULL, *b = NULL;
    tess_spec *again = NULL;
    if (tess_spec_format(s, &a) != TESS_OK) abort();
    if (tess_spec_parse(a, strlen(a), "printed", &again) != TESS_OK) abort();
    if (tess_spec_format(again, &b) != TESS_OK || strcmp(a, b) != 0) abort();
    free(a);
    free(b);
    tess_spec_destroy(again);
}

/* A grid just larger than the stencil's reach, evaluated on zeros. */
static void evaluate(const tess_spec *s, tess_task *t) {
    int64_t shape[TESS_SPEC_MAX_RANK];
    for (int a = 0; a < s->rank; a++) shape[a] = s->lo[a] + s->hi[a] + 2;
    if (tess_task_init(t, "fuzz", TESS_F64, shape, s->rank) != TESS_OK) abort();
    void *bufs[TESS_SPEC_MAX_FIELDS];
    int n = tess_spec_nbuffers(s);
    for (int i = 0; i < n; i++) {
        int f = i < s->nfields ? i : 0;
        bufs[i] = calloc((size_t)tess_spec_field_count(s, f, shape), sizeof(double));
    }
    double scale;
    if (tess_spec_reference(s, TESS_F64, shape, bufs) != TESS_OK) abort();
    if (tess_spec_scale(s, TESS_F64, shape, bufs, &scale) != TESS_OK) abort();
    (void)tess_spec_flops(s, shape);
    (void)tess_spec_tolerance(s, TESS_F64);
    for (int i = 0; i < n; i++) free(bufs[i]);
}

static void generate(const tess_spec *s, const tess_task *t) {
    tess_device dev = {.units = 2};
    tess_space *sp = NULL;
    tess_config c;
    tess_kernel_source k;
    if (tess_stencil_cpu_space(s, t, &dev, &sp) == TESS_OK) {
        tess_space_default(sp, &c);
        if (tess_stencil_cpu_emit(s, t, sp, &c, &k) == TESS_OK) free(k.code);
        tess_space_destroy(sp);
    }
    tess_stencil_cuda_limits lim;
    tess_stencil_cuda_limits_init(s, t->dtype, &lim);
    if (tess_stencil_cuda_space(s, t, &dev, &lim, &sp) == TESS_OK) {
        tess_space_default(sp, &c);
        if (tess_stencil_cuda_emit(s, t, sp, &c, &k) == TESS_OK) free(k.code);
        tess_space_destroy(sp);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tess_spec *s = NULL;
    if (tess_spec_parse((const char *)data, size, "fuzz.stencil", &s) != TESS_OK) return 0;
    tess_task t;
    round_trip(s);
    evaluate(s, &t);
    generate(s, &t);
    tess_spec_destroy(s);
    return 0;
}
