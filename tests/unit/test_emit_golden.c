/* test_emit_golden.c - the generated source of every built-in operator,
 * for the template's default and 40 sampled configs (seed 7 per task) of two shapes
 * and two dtypes on both backends, hashed (source, compiler options, launch
 * geometry) and compared with tests/fixtures/emit-golden.txt. A change that
 * is meant to leave code generation alone must pass; one that changes it on
 * purpose regenerates the file with `test_emit_golden --write`. */
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/backend.h"
#include "core/op.h"
#include "h200.h"
#include "transfer/builtin.h"

#define SAMPLES 40
#define GOLDEN TESS_SOURCE_DIR "/tests/fixtures/emit-golden.txt"

static tess_device cpu_device(void) {
    tess_device d;
    memset(&d, 0, sizeof d);
    strcpy(d.backend, "cpu");
    strcpy(d.name, "test cpu");
    strcpy(d.arch, "x86_64");
    d.units = 16;
    d.l2_bytes = 32 << 20;
    return d;
}

/* One line per config: op dtype shape backend config hash. */
static void dump_task(FILE *out, const tess_op *op, const tess_task *t, const tess_device *dev, gsl_rng *rng) {
    tess_space *s;
    char shape[64];
    tess_shape_format(t->shape, t->ndim, shape, sizeof shape);
    gsl_rng_set(rng, 7);   /* each task's samples are its own, whatever is registered before it */
    if (tess_op_space(op, t, dev, &s)) {
        fprintf(out, "%s %s %s space-error\n", op->name, shape, dev->backend);
        return;
    }
    for (int i = 0; i <= SAMPLES; i++) {
        tess_config c;
        if (i == 0) tess_space_default(s, &c);
        else if (tess_space_sample(s, rng, &c)) break;
        char text[1024], key[33], launches[512] = "";
        tess_config_format(s, &c, text, sizeof text);
        tess_kernel_source src;
        if (tess_op_emit(op, t, dev, s, &c, &src)) {
            fprintf(out, "%s %s %s %s emit-error\n", op->name, shape, dev->backend, text);
            continue;
        }
        for (int l = 0; l < src.nlaunches; l++) {
            const tess_launch *la = &src.launch[l];
            char one[160];
            snprintf(one, sizeof one, "%s/%u,%u,%u/%u,%u,%u/%u;", la->entry, la->grid[0], la->grid[1], la->grid[2],
                     la->block[0], la->block[1], la->block[2], la->shared_bytes);
            strncat(launches, one, sizeof launches - strlen(launches) - 1);
        }
        const char *parts[] = {src.code, src.options, launches};
        tess_cache_key(parts, 3, key);
        fprintf(out, "%s %s %s %s %s %s\n", op->name, tess_dtype_name(t->dtype), shape, dev->backend, text, key);
        tess_kernel_source_free(&src);
    }
    tess_space_destroy(s);
}

/* The built-in operators' lines, in registration order. */
static void dump_all(FILE *out) {
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    const tess_device devs[2] = {cpu_device(), tess_test_h200("NVIDIA H200")};
    for (int i = 0; i < tess_op_count(); i++) {
        const tess_op *op = tess_op_at(i);
        int64_t sizes[2][TESS_MAX_DIMS];
        int ndim;
        CHECK_OK(tess_shape_parse(op->default_shape, sizes[0], &ndim));
        for (int d = 0; d < ndim; d++) sizes[1][d] = sizes[0][d] > 64 ? 64 + 3 * d : sizes[0][d];
        const tess_dtype dtypes[2] = {TESS_F32, TESS_F64};
        for (int si = 0; si < 2; si++)
            for (int di = 0; di < 2; di++)
                for (int b = 0; b < 2; b++) {
                    tess_task t;
                    if (!tess_op_supports_backend(op, devs[b].backend) ||
                        tess_op_make_task(op, dtypes[di], dtypes[di], dtypes[di], sizes[si], ndim, NULL, &t))
                        continue;
                    dump_task(out, op, &t, &devs[b], rng);
                }
    }
    gsl_rng_free(rng);
}

static int by_text(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The lines of text (modified in place), sorted: the order operators are
 * registered in is not part of what is compared. */
static char **sorted_lines(char *text, int *n) {
    char **line = NULL;
    int cap = 0;
    *n = 0;
    for (char *save = NULL, *l = text ? strtok_r(text, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
        if (*n == cap && !(line = realloc(line, (size_t)(cap = 2 * cap + 1024) * sizeof *line))) return NULL;
        line[(*n)++] = l;
    }
    if (line) qsort(line, (size_t)*n, sizeof *line, by_text);
    return line;
}

static char *read_all(FILE *f, size_t *len) {
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        if (*len + 4096 > cap && !(buf = realloc(buf, cap = 2 * cap + 4096))) return NULL;
        size_t n = fread(buf + *len, 1, cap - *len - 1, f);
        if (n == 0) break;
        *len += n;
    }
    buf[*len] = '\0';
    return buf;
}

int main(int argc, char **argv) {
    CHECK_OK(tess_register_builtin());
    if (argc > 1 && strcmp(argv[1], "--write") == 0) {
        FILE *f = fopen(GOLDEN, "w");
        if (!f) return 1;
        dump_all(f);
        return fclose(f) == 0 ? 0 : 1;
    }
    FILE *want_f = fopen(GOLDEN, "r"), *got_f = tmpfile();
    if (!want_f) {
        printf("skipped: %s is missing\n", GOLDEN);
        return 77;
    }
    CHECK(got_f != NULL);
    if (!got_f) return check_finish("test_emit_golden");
    dump_all(got_f);
    rewind(got_f);
    size_t nw, ng;
    char *want = read_all(want_f, &nw), *got = read_all(got_f, &ng);
    fclose(want_f);
    fclose(got_f);
    CHECK(want && got);
    int nwant, ngot, differ = 0;
    char **w = sorted_lines(want, &nwant), **g = sorted_lines(got, &ngot);
    CHECK_MSG(nwant == ngot, "%d configs, %d in %s", ngot, nwant, GOLDEN);
    for (int i = 0; w && g && i < nwant && i < ngot; i++)
        if (strcmp(w[i], g[i]) != 0 && ++differ <= 10) fprintf(stderr, "want %s\n got %s\n", w[i], g[i]);
    CHECK_MSG(differ == 0, "%d of %d configs differ from %s", differ, nwant, GOLDEN);
    printf("%d configs' generated sources compared with %s\n", ngot, GOLDEN);
    free(w);
    free(g);
    free(want);
    free(got);
    return check_finish("test_emit_golden");
}
