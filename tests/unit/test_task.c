/* test_task.c - task keys (unchanged for one dtype and no attributes, roles
 * and attributes otherwise), their parsing, extent names, and the tasks an
 * operator's declarations make: attributes typed, defaulted, canonical. */
#include <string.h>
#include "check.h"
#include "core/op.h"
#include "reductions/sum.h"

static void test_keys(void) {
    tess_task t;
    char key[TESS_KEY_MAX];
    CHECK_OK(tess_task_init(&t, "heat3d", TESS_F32, (const int64_t[]){256, 128, 64}, 3));
    CHECK_OK(tess_task_key(&t, key, sizeof key));
    CHECK_MSG(strcmp(key, "heat3d:f32:256x128x64") == 0, "%s", key);
    tess_task_set_dtypes(&t, TESS_F32, TESS_BF16);
    CHECK_OK(tess_task_set_attr(&t, "layout", "tn"));
    CHECK_OK(tess_task_set_attr(&t, "causal", "1"));
    CHECK_OK(tess_task_key(&t, key, sizeof key));
    CHECK_MSG(strcmp(key, "heat3d:f32,f32,bf16:256x128x64:causal=1,layout=tn") == 0, "%s", key);
    tess_task back;
    CHECK_OK(tess_task_parse_key(key, &back));
    CHECK(tess_task_equal(&t, &back) && back.out_dtype == TESS_BF16 && back.nattrs == 2);
    CHECK(strcmp(tess_task_attr(&back, "layout"), "tn") == 0 && !tess_task_attr(&back, "eps"));
    CHECK(tess_task_parse_key("heat3d:f32", &back) == TESS_ERR_FORMAT);
    CHECK(tess_task_parse_key("heat3d:f32:8x8:causal", &back) == TESS_ERR_FORMAT);
    CHECK(tess_task_set_attr(&t, "bad:name", "1") == TESS_ERR_ARG);
    CHECK(tess_task_set_attr(&t, "eps", "1,2") == TESS_ERR_ARG);
    CHECK_OK(tess_task_name_extents(&t, "w,z,y,x"));
    CHECK(strcmp(t.dim[0], "z") == 0 && tess_task_extent(&t, "x") == 64 && tess_task_extent(&t, "w") == -1);
    CHECK(tess_task_name_extents(&t, "y,x") == TESS_ERR_ARG);
}

static const tess_attr_spec attrs[] = {
    {.name = "eps", .type = TESS_ATTR_REAL, .dflt = "1e-5"},
    {.name = "causal", .type = TESS_ATTR_BOOL, .dflt = "false"},
    {.name = "layout", .type = TESS_ATTR_WORD, .dflt = "nn", .choices = "nn,tn"},
};

static void test_made_tasks(void) {
    tess_op op = tess_op_sum;
    op.name = "sum_with_attrs";
    op.attrs = attrs;
    op.nattrs = 3;
    CHECK_OK(tess_op_check_complete(&op));
    tess_task t;
    char key[TESS_KEY_MAX];
    CHECK_OK(tess_op_make_task(&op, TESS_F32, TESS_DTYPE_COUNT, TESS_DTYPE_COUNT, (const int64_t[]){100}, 1,
                               "eps=-0.0,causal=true", &t));
    CHECK_OK(tess_task_key(&t, key, sizeof key));
    CHECK_MSG(strcmp(key, "sum_with_attrs:f32:100:causal=1,eps=0,layout=nn") == 0, "%s", key);
    CHECK(strcmp(t.dim[0], "x") == 0);
    double eps;
    CHECK_OK(tess_op_make_task(&op, TESS_F32, TESS_F32, TESS_F32, (const int64_t[]){100}, 1, NULL, &t));
    CHECK_OK(tess_task_attr_real(&t, "eps", 0, &eps));
    CHECK(eps == 1e-5 && strcmp(tess_task_attr(&t, "eps"), "1e-05") == 0);
    CHECK(tess_op_make_task(&op, TESS_F32, TESS_F32, TESS_F32, (const int64_t[]){100}, 1, "layout=tt", &t) ==
          TESS_ERR_ARG);
    CHECK(strstr(tess_errmsg(), "one of nn,tn") != NULL);
    CHECK(tess_op_make_task(&op, TESS_F32, TESS_F32, TESS_F32, (const int64_t[]){100}, 1, "nosuch=1", &t) ==
          TESS_ERR_ARG);
    CHECK(strstr(tess_errmsg(), "eps, causal, layout") != NULL);
    /* one dtype in every role unless the operator takes roles */
    CHECK(tess_op_make_task(&op, TESS_F32, TESS_F64, TESS_F32, (const int64_t[]){100}, 1, NULL, &t) == TESS_ERR_ARG);
    op.dtype_roles = true;
    CHECK_OK(tess_op_make_task(&op, TESS_F32, TESS_F64, TESS_F32, (const int64_t[]){100}, 1, NULL, &t));
    CHECK_OK(tess_task_key(&t, key, sizeof key));
    CHECK_MSG(strcmp(key, "sum_with_attrs:f32,f64,f32:100:causal=0,eps=1e-05,layout=nn") == 0, "%s", key);
    /* declarations that could never make a task are refused at registration */
    tess_attr_spec bad = {.name = "eps", .type = TESS_ATTR_REAL, .dflt = "small"};
    op.attrs = &bad;
    op.nattrs = 1;
    CHECK(tess_op_check_complete(&op) == TESS_ERR_ARG);
    op.nattrs = 0;
    op.name = "a:b";
    CHECK(tess_op_check_complete(&op) == TESS_ERR_ARG);
}

static void test_arch(void) {
    int cc;
    bool specific;
    CHECK_OK(tess_arch_parse("sm_90a", &cc, &specific));
    CHECK(cc == 90 && specific);
    CHECK_OK(tess_arch_parse("sm_80", &cc, &specific));
    CHECK(cc == 80 && !specific);
    CHECK(tess_arch_parse("sm_9", &cc, &specific) == TESS_ERR_ARG);
    CHECK(tess_arch_parse("sm_90b", &cc, &specific) == TESS_ERR_ARG);
}

int main(void) {
    test_keys();
    test_made_tasks();
    test_arch();
    return check_finish("test_task");
}
