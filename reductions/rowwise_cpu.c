/*
 * rowwise_cpu.c - C/OpenMP code generation for the row-wise operators.
 *
 * The threads share the rows (a static schedule); each row is read in the
 * passes its operator needs (softmax, log_softmax: max, sum, write; online:
 * max and sum together, then write; cross-entropy: the same without the
 * write, then one loss and log-sum-exp per row; layernorm: mean, variance,
 * write; rmsnorm: mean of squares, write; add_rmsnorm: the sum written and
 * its squares summed, then y from the sum as written), summed in f32, while
 * it stays in the core's cache.
 * Tunables:
 *   threads     OpenMP threads
 *   simd        `omp simd` on the passes (reductions included)
 *   online      softmax kinds: the max and the sum in one pass
 *   exp         softmax kinds: libm's expf, or exp_poly (templates/exp_poly.c,
 *               as exact, and vectorized by `omp simd`)
 *   keep_exp    softmax, online=0: the sum's exponentials kept as floats
 *               on the thread's stack for the output (one exp per element
 *               instead of two; rows of at most 64 Ki elements: 256 KiB)
 * Shortcuts, with an error budget:
 *   max_sub     softmax: 0 skips subtracting the row's max (unsafe for large logits)
 *   fast_math   compile with -ffast-math (vectorized, reassociated exp and sqrt)
 */
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "core/strbuf.h"
#include "accuracy.h"
#include "cpu_common.h"
#include "rowwise.h"

extern const char tess_src_reductions_templates_storage_c[];
extern const char tess_src_reductions_templates_exp_poly_c[];

static const char *const exp_labels[] = {"libm", "poly"};

#define MAX_KEPT_EXPS 65536   /* floats of a row's exponentials on a thread's stack */

/* online needs the max; kept exponentials come from a pass of their own */
static bool online_alone(const double *v, void *user) {
    const int *p = user;   /* indices of online, max_sub and keep_exp (-1: absent) */
    if (p[1] >= 0 && v[p[0]] == 1 && v[p[1]] == 0) return false;
    return p[2] < 0 || v[p[0]] == 0 || v[p[2]] == 0;
}

tess_status tess_rowwise_cpu_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out) {
    const bool softmax = tess_rowwise_is_softmax(op), shortcuts = tess_error_budget(t) > 0;
    tess_space *s = tess_space_create();
    if (!s) return tess_error(TESS_ERR_NOMEM, "%s cpu space", op->name);
    const double flag[] = {0, 1};
    tess_status st = tess_cpu_add_threads(s, dev);
    if (!st) st = tess_space_add(s, "simd", 2, flag, 1);
    if (!st && softmax) st = tess_space_add(s, "online", 2, flag, 0);
    /* recorded before exp existed: libm's */
    if (!st && softmax) st = tess_space_add_labels(s, "exp", 2, exp_labels, 1);
    if (!st && softmax) st = tess_space_set_optional(s, "exp", 0);
    /* recorded before keep_exp existed: exponentials computed twice */
    const bool keep = tess_rowwise_of(op)->kind == TESS_ROW_SOFTMAX && t->shape[1] <= MAX_KEPT_EXPS;
    if (!st && keep) st = tess_space_add(s, "keep_exp", 2, flag, 0);
    if (!st && keep) st = tess_space_set_optional(s, "keep_exp", 0);
    if (!st && softmax && shortcuts) st = tess_shortcut_add(s, "max_sub", 1, 0);
    if (!st && shortcuts) st = tess_shortcut_add(s, "fast_math", 0, 1);
    if (!st && softmax) {
        const int idx[3] = {tess_space_param_index(s, "online"), tess_space_param_index(s, "max_sub"),
                            tess_space_param_index(s, "keep_exp")};
        st = tess_space_add_constraint_copy(s, online_alone, idx, sizeof idx,
                                            "online needs max_sub=1 and keep_exp=0");
    }
    if (st) {
        tess_space_destroy(s);
        return st;
    }
    *out = s;
    return TESS_OK;
}

/* Prints the loop over the row's columns, with `omp simd` and a reduction when asked. */
static void print_loop(tess_strbuf *b, bool simd, const char *reduction, const char *body) {
    if (simd && reduction) tess_strbuf_printf(b, "        #pragma omp simd reduction(%s)\n", reduction);
    else if (simd) tess_strbuf_puts(b, "        #pragma omp simd\n");
    tess_strbuf_printf(b, "        for (long long c = 0; c < C; c++) %s\n", body);
}

static void print_softmax(tess_strbuf *b, tess_rowwise_kind kind, bool simd, bool online, bool max_sub, bool keep) {
    const bool ce = kind == TESS_ROW_CROSS_ENTROPY;
    tess_strbuf_puts(b, "    const storage_t *restrict x = buffers[0];\n");
    if (ce)
        tess_strbuf_puts(b,
            "    const int *restrict labels = buffers[1];\n"
            "    float *restrict loss = buffers[2], *restrict lse = buffers[3];\n");
    else
        tess_strbuf_puts(b, "    storage_t *restrict y = buffers[1];\n");
    tess_strbuf_puts(b,
        "    #pragma omp parallel for num_threads(THREADS) schedule(static)\n"
        "    for (long long r = 0; r < R; r++) {\n"
        "        const storage_t *restrict xr = x + r * C;\n");
    if (!ce) tess_strbuf_puts(b, "        storage_t *restrict yr = y + r * C;\n");
    tess_strbuf_puts(b, "        float m = 0, s = 0;\n");
    if (online) {
        tess_strbuf_puts(b,
            "        /* one pass: the sum rescaled whenever the max grows */\n"
            "        m = load_real(xr, 0);\n"
            "        for (long long c = 0; c < C; c++) {\n"
            "            float v = load_real(xr, c);\n"
            "            if (v > m) {\n"
            "                s = s * EXP(m - v) + 1;\n"
            "                m = v;\n"
            "            } else {\n"
            "                s += EXP(v - m);\n"
            "            }\n"
            "        }\n");
    } else {
        if (max_sub) {
            tess_strbuf_puts(b, "        m = load_real(xr, 0);\n");
            /* a comparison, not fmaxf: that is a call per element unless NaNs are ruled out */
            print_loop(b, simd, "max : m", "{ const float v = load_real(xr, c); m = v > m ? v : m; }");
        }
        if (keep) {
            tess_strbuf_puts(b, "        float ex[C];   /* the row's exponentials, for the output */\n");
            print_loop(b, simd, "+ : s", "{ ex[c] = EXP(load_real(xr, c) - m); s += ex[c]; }");
        } else {
            print_loop(b, simd, "+ : s", "s += EXP(load_real(xr, c) - m);");
        }
    }
    switch (kind) {
    case TESS_ROW_CROSS_ENTROPY:
        tess_strbuf_puts(b,
            "        lse[r] = m + logf(s);\n"
            "        loss[r] = lse[r] - load_real(xr, labels[r]);\n");
        break;
    case TESS_ROW_LOG_SOFTMAX:
        tess_strbuf_puts(b, "        const float shift = m + logf(s);\n");
        print_loop(b, simd, NULL, "store_real(yr, c, load_real(xr, c) - shift);");
        break;
    default:
        tess_strbuf_puts(b, "        const float inv = 1 / s;\n");
        print_loop(b, simd, NULL, keep ? "store_real(yr, c, ex[c] * inv);" : "store_real(yr, c, EXP(load_real(xr, c) - m) * inv);");
    }
    tess_strbuf_puts(b, "    }\n");
}

static void print_norm(tess_strbuf *b, tess_rowwise_kind kind, bool simd) {
    const bool layer = kind == TESS_ROW_LAYERNORM, add = kind == TESS_ROW_ADD_RMSNORM;
    tess_strbuf_puts(b, "    const storage_t *restrict x = buffers[0];\n");
    if (add)
        tess_strbuf_puts(b,
            "    const storage_t *restrict res = buffers[1];\n"
            "    const storage_t *restrict w = buffers[2];\n"
            "    storage_t *restrict y = buffers[3], *restrict h = buffers[4];\n");
    else
        tess_strbuf_printf(b,
            "    const storage_t *restrict w = buffers[1];\n"
            "%s"
            "    storage_t *restrict y = buffers[%d];\n",
            layer ? "    const storage_t *restrict bias = buffers[2];\n" : "", layer ? 3 : 2);
    tess_strbuf_printf(b,
        "    #pragma omp parallel for num_threads(THREADS) schedule(static)\n"
        "    for (long long r = 0; r < R; r++) {\n"
        "        const storage_t *restrict xr = x + r * C;\n"
        "        storage_t *restrict yr = y + r * C;\n"
        "        float mean = 0, q = 0;\n");
    if (layer) {
        print_loop(b, simd, "+ : mean", "mean += load_real(xr, c);");
        tess_strbuf_puts(b, "        mean *= 1.0f / C;\n");
    }
    if (add) {
        /* the sum is normalized as stored: written, then read back */
        tess_strbuf_puts(b,
            "        const storage_t *restrict rr = res + r * C;\n"
            "        storage_t *restrict hr = h + r * C;\n");
        print_loop(b, simd, "+ : q",
                   "{ store_real(hr, c, load_real(xr, c) + load_real(rr, c)); q += load_real(hr, c) * load_real(hr, c); }");
    } else {
        print_loop(b, simd, "+ : q", "q += (load_real(xr, c) - mean) * (load_real(xr, c) - mean);");
    }
    tess_strbuf_puts(b, "        const float rstd = 1 / sqrtf(q * (1.0f / C) + EPS);\n");
    print_loop(b, simd, NULL,
               layer ? "store_real(yr, c, (load_real(xr, c) - mean) * rstd * load_real(w, c) + load_real(bias, c));"
               : add ? "store_real(yr, c, load_real(hr, c) * rstd * load_real(w, c));"
                     : "store_real(yr, c, load_real(xr, c) * rstd * load_real(w, c));");
    tess_strbuf_puts(b, "    }\n");
}

tess_status tess_rowwise_cpu_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                                  const tess_config *c, tess_kernel_source *out) {
    (void)dev;
    const tess_rowwise_info *info = tess_rowwise_of(op);
    const int threads = (int)tess_config_get(s, c, "threads"), simd = (int)tess_config_get(s, c, "simd");
    const bool online = (int)tess_config_get_or(s, c, "online", 0), max_sub = (int)tess_config_get_or(s, c, "max_sub", 1),
               exp_poly = (int)tess_config_get_or(s, c, "exp", 0) == 1,
               keep = (int)tess_config_get_or(s, c, "keep_exp", 0) == 1;
    char config[512];
    tess_status st = tess_config_format(s, c, config, sizeof config);
    if (st) return st;
    tess_strbuf b = {0};
    tess_strbuf_printf(&b,
        "/* %s over %lld rows of %lld %s elements, generated by tessera.\n"
        " * config: %s */\n"
        "#define %s\n",
        op->name, (long long)t->shape[0], (long long)t->shape[1], tess_dtype_name(t->dtype), config,
        tess_storage_macro(t));
    tess_strbuf_puts(&b, tess_src_reductions_templates_storage_c);
    tess_strbuf_printf(&b,
        "#include <math.h>\n\n"
        "#define R %lldLL\n#define C %lldLL\n#define THREADS %d\n",
        (long long)t->shape[0], (long long)t->shape[1], threads);
    const bool softmax = tess_rowwise_is_softmax(op);
    if (!softmax) tess_strbuf_printf(&b, "#define EPS %.9gf\n", tess_rowwise_eps(t));
    if (exp_poly) tess_strbuf_printf(&b, "#define EXP(x) exp_poly(x)\n%s", tess_src_reductions_templates_exp_poly_c);
    else if (softmax) tess_strbuf_puts(&b, "#define EXP(x) expf(x)\n");
    tess_strbuf_printf(&b, "\nvoid tess_%s(void *const *buffers) {\n", op->name);
    if (softmax) print_softmax(&b, info->kind, simd, online, max_sub, keep);
    else print_norm(&b, info->kind, simd);
    tess_strbuf_puts(&b, "}\n");
    st = tess_strbuf_finish(&b, &out->code);
    if (st) return st;
    if ((int)tess_config_get_or(s, c, "fast_math", 0)) tess_cpu_set_fast_math(out);
    out->nlaunches = 1;
    snprintf(out->launch[0].entry, sizeof out->launch[0].entry, "tess_%s", op->name);
    return TESS_OK;
}
