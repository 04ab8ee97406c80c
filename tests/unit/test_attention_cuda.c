/*
 * test_attention_cuda.c - every CUDA template of the attention family
 * compiles with NVRTC: for sm_90 (an H200) the default and two sampled
 * configs of each task below, for sm_80 (an A100) the defaults of the first five:
 *   - prefill: the wgmma kernel on sm_90 and the mma kernel (bf16 and f16,
 *     D 64 and 128, causal and not, GQA; the mma kernel also pinned on
 *     sm_90) and the simple kernel (f32, odd shapes that the tensor-core
 *     kernels refuse, D up to 256);
 *   - decode: paged and unpaged, bf16/f16/f32, GQA, odd D, and 16 query heads
 *     of D 256 per K/V head (a block serving part of the group).
 * Also checked: the spaces offer the tensor-core kernels only where they
 * apply, the default is the newest of them there (wgmma on sm_90, mma on
 * sm_80), the wgmma sources declare Q, K and V's tensor maps for sm_90a, and
 * a device below sm_80 gets the simple kernel alone; decode's kernels take Skv as a run-time scalar. NVRTC needs
 * no GPU; without it (or the toolkit at build time) the test is skipped.
 */
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "a100.h"
#include "check.h"
#include "h200.h"
#include "attention/attention.h"
#include "core/backend.h"
#include "core/error.h"

extern tess_status tess_cuda_register(void) __attribute__((weak));


static bool nvrtc_missing;

static tess_task make_task(const tess_op *op, tess_dtype d, const int64_t *shape, int ndim, const char *attrs) {
    tess_task t;
    memset(&t, 0, sizeof t);
    CHECK_OK(tess_op_make_task(op, d, d, d, shape, ndim, attrs, &t));
    return t;
}

static void compile_one(const tess_backend_ops *be, const tess_device *dev, const tess_op *op, const tess_task *t,
                        const tess_space *s, const tess_config *c, int *compiled) {
    char text[256], key[TESS_KEY_MAX];
    tess_config_format(s, c, text, sizeof text);
    tess_task_key(t, key, sizeof key);
    tess_kernel_source src;
    memset(&src, 0, sizeof src);
    CHECK_OK(tess_op_emit(op, t, dev, s, c, &src));
    tess_blob bin = {0};
    char *log = NULL;
    tess_status st = be->compile(dev, &src, &bin, &log);
    if (st == TESS_ERR_UNAVAILABLE) nvrtc_missing = true;
    else CHECK_MSG(st == TESS_OK, "%s %s %s: %s\n%s", dev->arch, key, text, tess_errmsg(), log ? log : "");
    for (int i = 0; st == TESS_OK && i < src.nlaunches; i++)
        CHECK_MSG(memmem(bin.data, bin.size, src.launch[i].entry, strlen(src.launch[i].entry)), "%s missing",
                  src.launch[i].entry);
    if (st == TESS_OK) ++*compiled;
    free(log);
    tess_blob_free(&bin);
    tess_kernel_source_free(&src);
}

/* The default, then `samples` random configs; `want_kernel`: the default's kernel label ("" for decode);
 * `pin`: parameters held (NULL: none), which may make the default illegal (the wgmma kernel's pingpong
 * with the mma kernel pinned): it is then left out, and the samples are of the pinned kernel. */
static void compile_pinned(const tess_backend_ops *be, const tess_device *dev, const tess_op *op, tess_dtype d,
                           const int64_t *shape, int ndim, const char *attrs, const char *pin, const char *want_kernel,
                           int samples, gsl_rng *rng) {
    tess_task t = make_task(op, d, shape, ndim, attrs);
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(op, &t, dev, &s));
    if (!s) return;
    if (pin) CHECK_OK(tess_space_pin(s, pin));
    tess_config c;
    tess_space_default(s, &c);
    const bool dflt = tess_space_valid(s, &c);
    CHECK_MSG(dflt || pin, "%s default: %s", op->name, tess_space_violation(s, &c));
    const int p = *want_kernel ? tess_space_param_index(s, "kernel") : -1;
    int compiled = 0;
    for (int i = dflt ? -1 : 0; i < samples && !nvrtc_missing; i++) {
        if (i >= 0) CHECK_OK(tess_space_sample(s, rng, &c));
        if (p >= 0 && (i < 0 || !dflt))   /* the default's kernel, or the samples' when the pin left it out */
            CHECK_MSG(strcmp(tess_space_param_label(s, p, c.v[p]), want_kernel) == 0, "%s %s: kernel %s",
                      dev->arch, attrs ? attrs : "", tess_space_param_label(s, p, c.v[p]));
        compile_one(be, dev, op, &t, s, &c, &compiled);
    }
    if (!nvrtc_missing) printf("%s %s %s %s: %d configs compiled\n", dev->arch, op->name, tess_dtype_name(d),
                               attrs ? attrs : "", compiled);
    tess_space_destroy(s);
}

static void compile_space(const tess_backend_ops *be, const tess_device *dev, const tess_op *op, tess_dtype d,
                          const int64_t *shape, int ndim, const char *attrs, const char *want_kernel, int samples,
                          gsl_rng *rng) {
    compile_pinned(be, dev, op, d, shape, ndim, attrs, NULL, want_kernel, samples, rng);
}

/* The wgmma kernel's source: sm_90a, three tensor maps (q, k, v) of 64-column boxes by the tiles' rows. */
static void check_wgmma_source(const tess_device *dev) {
    const int64_t shape[] = {2, 8, 256, 512, 128};
    tess_task t = make_task(&tess_op_attention, TESS_BF16, shape, 5, "kv_heads=2");
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(&tess_op_attention, &t, dev, &s));
    if (!s) return;
    tess_config c;
    tess_space_default(s, &c);
    tess_kernel_source src;
    memset(&src, 0, sizeof src);
    CHECK_OK(tess_op_emit(&tess_op_attention, &t, dev, s, &c, &src));
    CHECK(strcmp(src.min_arch, "sm_90a") == 0 && src.ntensor_maps == 3 && src.launch[0].block[0] == 384);
    const uint64_t rows[3] = {2 * 8 * 256, 2 * 2 * 512, 2 * 2 * 512};
    for (int i = 0; i < src.ntensor_maps && i < 3; i++) {
        const tess_tensor_map *m = &src.tensor_map[i];
        CHECK_MSG(m->buffer == i && m->dims[0] == 128 && m->dims[1] == rows[i] && m->box[0] == 64 && m->box[1] == 128 &&
                  m->swizzle == 128, "tensor map %d", i);
    }
    tess_kernel_source_free(&src);
    tess_space_destroy(s);
}

/* Decode's sources take Skv as their one run-time extent. */
static void check_runtime_extent(const tess_device *dev) {
    const int64_t shape[] = {2, 8, 1000, 128};
    tess_task t = make_task(&tess_op_attention_decode, TESS_BF16, shape, 4, "page_size=64,kv_heads=2");
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(&tess_op_attention_decode, &t, dev, &s));
    if (!s) return;
    tess_config c;
    tess_space_default(s, &c);
    tess_kernel_source src;
    memset(&src, 0, sizeof src);
    CHECK_OK(tess_op_emit(&tess_op_attention_decode, &t, dev, s, &c, &src));
    CHECK(src.runtime_extents == (UINT32_C(1) << 2) && src.nlaunches == 2);
    const int i = tess_kernel_source_find_scalar(&src, "Skv");
    CHECK(i >= 0 && src.scalar[i].type == TESS_SCALAR_I64 && src.scalar[i].value.i64 == 1000);
    tess_kernel_source_free(&src);
    tess_space_destroy(s);
}

int main(void) {
    if (!tess_cuda_register) {
        printf("skipped: built without the CUDA toolkit\n");
        return 77;
    }
    CHECK_OK(tess_cuda_register());
    const tess_backend_ops *be = tess_backend_find("cuda");
    CHECK(be != NULL);
    if (!be) return check_finish("test_attention_cuda");
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 17);
    const tess_device devs[2] = {tess_test_a100("NVIDIA A100"), tess_test_h200("NVIDIA H200")};
    const int64_t d128[] = {2, 8, 256, 512, 128}, d64[] = {1, 4, 128, 128, 64}, odd[] = {2, 3, 37, 45, 24},
                  d256[] = {1, 2, 33, 70, 256};
    const int64_t dec[] = {4, 8, 4096, 128}, dec_odd[] = {3, 6, 333, 40}, dec_wide[] = {2, 32, 512, 256};
    /* sm_90: the default and two samples of each task; sm_80: the defaults */
    for (int v = 1; v >= 0 && !nvrtc_missing; v--) {
        const tess_device *dev = &devs[v];
        const int n = v == 1 ? 2 : 0;
        const char *tensor_cores = v == 1 ? "wgmma" : "mma";
        compile_space(be, dev, &tess_op_attention, TESS_BF16, d128, 5, NULL, tensor_cores, n, rng);
        compile_space(be, dev, &tess_op_attention, TESS_BF16, d128, 5, "causal=1,kv_heads=2", tensor_cores, n, rng);
        compile_space(be, dev, &tess_op_attention, TESS_F16, d64, 5, "causal=1", tensor_cores, n, rng);
        compile_space(be, dev, &tess_op_attention, TESS_F32, d128, 5, NULL, "simple", n, rng);
        compile_space(be, dev, &tess_op_attention_decode, TESS_BF16, dec, 4, NULL, "", n, rng);
        if (v == 0) continue;
        compile_pinned(be, dev, &tess_op_attention, TESS_BF16, d128, 5, "causal=1", "kernel=mma", "mma", n, rng);
        compile_pinned(be, dev, &tess_op_attention, TESS_F16, d128, 5, "kv_heads=1", "kernel=wgmma", "wgmma", 3, rng);
        compile_space(be, dev, &tess_op_attention, TESS_BF16, odd, 5, "causal=1,kv_heads=3", "simple", n, rng);
        compile_space(be, dev, &tess_op_attention, TESS_F16, d256, 5, "causal=1", "simple", n, rng);
        compile_space(be, dev, &tess_op_attention_decode, TESS_BF16, dec, 4, "page_size=0,kv_heads=2", "", n, rng);
        compile_space(be, dev, &tess_op_attention_decode, TESS_F16, dec, 4, "page_size=256,kv_heads=1", "", n, rng);
        compile_space(be, dev, &tess_op_attention_decode, TESS_F32, dec_odd, 4, "page_size=32,kv_heads=3", "", n, rng);
        compile_space(be, dev, &tess_op_attention_decode, TESS_BF16, dec_wide, 4, "kv_heads=2", "", 0, rng);
    }
    /* below sm_80: the simple kernel alone */
    tess_device old = tess_test_a100("an sm_75 device");
    strcpy(old.arch, "sm_75");
    old.cc_major = 7;
    old.cc_minor = 5;
    tess_task t = make_task(&tess_op_attention, TESS_BF16, d128, 5, NULL);
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(&tess_op_attention, &t, &old, &s));
    if (s) CHECK(tess_space_param_size(s, tess_space_param_index(s, "kernel")) == 1);
    tess_space_destroy(s);
    check_runtime_extent(&devs[1]);
    check_wgmma_source(&devs[1]);
    gsl_rng_free(rng);
    if (nvrtc_missing) {
        printf("skipped: %s\n", tess_errmsg());
        return check_failures_ ? 1 : 77;
    }
    return check_finish("test_attention_cuda");
}
