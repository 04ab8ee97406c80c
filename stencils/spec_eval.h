/* spec_eval.h - what a finished spec means, computed on the host: the float64
 * reference interpreter, FLOP and byte counts, and the verification
 * tolerance and scale.
 *
 * The update at a grid point p: on a fixed boundary band (p closer to the
 * edge of a fixed axis than the stencil reaches) an output takes the value of
 * the input it advances (0 if it advances none); elsewhere it is its
 * statement evaluated at p, with field references wrapping around periodic
 * axes. `steps` updates run one after the other, each output replacing the
 * input it advances. */
#ifndef TESS_SPEC_EVAL_H
#define TESS_SPEC_EVAL_H

#include <stdbool.h>
#include "spec.h"

/* Computes the outputs from the inputs. buffers are the kernel's buffers
 * (tess_spec_nbuffers of them, scratch untouched), of the task's shape and
 * dtype `real`; arithmetic is in double. */
tess_status tess_spec_reference(const tess_spec *s, tess_dtype real, const int64_t *shape,
                                void *const *buffers);

/* Whether grid point p lies on a fixed boundary band for a grid of `shape`. */
bool tess_spec_on_boundary(const tess_spec *s, const int64_t *shape, const int64_t *p);
/* Points the statements are evaluated at (not on a boundary band). */
int64_t tess_spec_interior_points(const tess_spec *s, const int64_t *shape);

/* Operations per point: every binary operator, comparison and function call
 * of every statement counts one (negation none), each statement once. */
int tess_spec_point_flops(const tess_spec *s);
double tess_spec_flops(const tess_spec *s, const int64_t *shape);
/* Compulsory bytes: each input and coefficient read once, each output written once. */
double tess_spec_bytes(const tess_spec *s, tess_dtype real, const int64_t *shape);
/* Relative tolerance for outputs computed in dtype `real`: machine epsilon
 * times the operations behind one output value (intermediates inlined),
 * times the steps. */
double tess_spec_tolerance(const tess_spec *s, tess_dtype real);
/* Magnitude errors are measured against: the largest value any output could
 * take if every subtraction were an addition (sums of term magnitudes), over
 * the inputs in buffers, for the first step. */
tess_status tess_spec_scale(const tess_spec *s, tess_dtype real, const int64_t *shape,
                            void *const *buffers, double *scale);

#endif
