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

/* Specs more than one test registers. eight: periodic along z and x, reads
 * an intermediate a plane up (a lag of two planes between fused steps). */
#define TESS_TEST_SPEC_EIGHT                                                                  \
    "stencil eight\ngrid 9x10x11\nboundary periodic z x\nsteps 8\nfield u in\nfield v out advances u\n" \
    "lap = u[1,0,0] + u[-1,0,0] + u[0,1,0] + u[0,-1,0] + u[0,0,1] + u[0,0,-1] - 6 * u\n"           \
    "v = u + 0.1 * lap + 0.01 * lap[0,0,1]\n"
/* box4: the 27-point box in four steps. */
#define TESS_TEST_SPEC_BOX4                                                                                     \
    "stencil box4\ngrid 8x9x40\nsteps 4\nfield u in\nfield v out advances u\n"                              \
    "v = (u[-1,-1,-1] + u[-1,-1,0] + u[-1,-1,1] + u[-1,0,-1] + u[-1,0,0] + u[-1,0,1] + u[-1,1,-1] + u[-1,1,0]" \
    " + u[-1,1,1] + u[0,-1,-1] + u[0,-1,0] + u[0,-1,1] + u[0,0,-1] + u + u[0,0,1] + u[0,1,-1] + u[0,1,0]"      \
    " + u[0,1,1] + u[1,-1,-1] + u[1,-1,0] + u[1,-1,1] + u[1,0,-1] + u[1,0,0] + u[1,0,1] + u[1,1,-1] + u[1,1,0]" \
    " + u[1,1,1]) / 27\n"

static inline void register_extra_specs(const char *const *specs, size_t n) {
    for (size_t i = 0; i < n; i++) {
        tess_spec *s;
        CHECK_OK(tess_spec_parse(specs[i], strlen(specs[i]), "extra", &s));
        CHECK_OK(tess_stencils_register_spec(s));
    }
}

#endif
