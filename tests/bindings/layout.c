/*
 * layout.c - the layout of tessera.h's structs as the C compiler lays them
 * out, for the tests of the bindings, which mirror them (the Fortran module's
 * bind(C) types, the Python package's ctypes structures): a struct changed in
 * tessera.h but not in a binding fails their tests.
 */
#include <stddef.h>
#include <string.h>
#include <tessera.h>

#define FIELD(s, f) {#s, #f, offsetof(s, f)}

static const struct {
    const char *type, *field;
    size_t offset;
} fields[] = {
    FIELD(tess_tune_options, strategy), FIELD(tess_tune_options, budget),
    FIELD(tess_tune_options, seconds), FIELD(tess_tune_options, seed),
    FIELD(tess_tune_options, batch), FIELD(tess_tune_options, window),
    FIELD(tess_tune_options, transfer), FIELD(tess_tune_options, full_timing),
    FIELD(tess_tune_options, fix), FIELD(tess_tune_options, compile_timeout_s),
    FIELD(tess_tune_options, error_budget), FIELD(tess_tune_options, progress),
    FIELD(tess_tune_options, progress_user), FIELD(tess_tune_options, cancel),
    FIELD(tess_tune_report, best_config), FIELD(tess_tune_report, best_ms),
    FIELD(tess_tune_report, best_gbps), FIELD(tess_tune_report, best_gflops),
    FIELD(tess_tune_report, default_ms), FIELD(tess_tune_report, ceiling_gbps),
    FIELD(tess_tune_report, ceiling_gflops), FIELD(tess_tune_report, bound),
    FIELD(tess_tune_report, bound_ms), FIELD(tess_tune_report, fraction_of_ceiling),
    FIELD(tess_tune_report, evaluations), FIELD(tess_tune_report, elapsed_s),
    FIELD(tess_tune_report, status_counts), FIELD(tess_tune_report, stop_reason),
    FIELD(tess_tune_report, device), FIELD(tess_tune_report, warm_configs),
    FIELD(tess_tune_report, transfer_from), FIELD(tess_tune_report, best_spread),
    FIELD(tess_tune_report, default_spread), FIELD(tess_tune_report, working_set_bytes),
    FIELD(tess_tune_report, cache_bytes), FIELD(tess_tune_report, best_error),
    FIELD(tess_tune_report, best_exact_config), FIELD(tess_tune_report, best_exact_ms),
    FIELD(tess_tune_report, best_exact_error),
    FIELD(tess_dispatch_options, online_budget), FIELD(tess_dispatch_options, online_seconds),
    FIELD(tess_dispatch_options, verify),
    FIELD(tess_buffer_info, name), FIELD(tess_buffer_info, role), FIELD(tess_buffer_info, dtype),
    FIELD(tess_buffer_info, elem_bytes), FIELD(tess_buffer_info, count), FIELD(tess_buffer_info, rank),
    FIELD(tess_buffer_info, advances), FIELD(tess_buffer_info, advanced), FIELD(tess_buffer_info, lo),
    FIELD(tess_buffer_info, hi),
    FIELD(tess_comparison, max_diff), FIELD(tess_comparison, worst), FIELD(tess_comparison, nonfinite),
    FIELD(tess_comparison, ref_nonfinite),
    FIELD(tess_op_info, name), FIELD(tess_op_info, family), FIELD(tess_op_info, summary),
    FIELD(tess_op_info, default_shape), FIELD(tess_op_info, backends), FIELD(tess_op_info, extents),
    FIELD(tess_op_info, attrs),
    FIELD(tess_db_task, task), FIELD(tess_db_task, device), FIELD(tess_db_task, evaluations),
    FIELD(tess_db_task, ok), FIELD(tess_db_task, best_ms), FIELD(tess_db_task, best_config),
};

/* sizeof the struct named type, 0 for a name not listed. */
size_t tess_test_sizeof(const char *type) {
    static const struct {
        const char *type;
        size_t size;
    } sizes[] = {
        {"tess_tune_options", sizeof(tess_tune_options)},
        {"tess_tune_report", sizeof(tess_tune_report)},
        {"tess_dispatch_options", sizeof(tess_dispatch_options)},
        {"tess_buffer_info", sizeof(tess_buffer_info)},
        {"tess_comparison", sizeof(tess_comparison)},
        {"tess_op_info", sizeof(tess_op_info)},
        {"tess_db_task", sizeof(tess_db_task)},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (strcmp(sizes[i].type, type) == 0) return sizes[i].size;
    return 0;
}

/* The field's offset in the struct, (size_t)-1 for a pair not listed. */
size_t tess_test_offsetof(const char *type, const char *field) {
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (strcmp(fields[i].type, type) == 0 && strcmp(fields[i].field, field) == 0) return fields[i].offset;
    return (size_t)-1;
}

/* The number of fields listed for type: a binding's structure must have as many. */
int tess_test_field_count(const char *type) {
    int n = 0;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) n += strcmp(fields[i].type, type) == 0;
    return n;
}
