/*
 * extra_specs.h - registers stencil specs written in a test (beside the
 * library), each parse and registration checked.
 */
#ifndef TESS_TEST_EXTRA_SPECS_H
#define TESS_TEST_EXTRA_SPECS_H

#include <string.h>
#include "check.h"
#include "stencils/family.h"
#include "stencils/spec.h"

static inline void register_extra_specs(const char *const *specs, size_t n) {
    for (size_t i = 0; i < n; i++) {
        tess_spec *s;
        CHECK_OK(tess_spec_parse(specs[i], strlen(specs[i]), "extra", &s));
        CHECK_OK(tess_stencils_register_spec(s));
    }
}

#endif
