/* gen_util.h - pieces shared by the C/OpenMP and CUDA generators.
 *
 * Generated code names spec identifiers as written (fields, intermediates,
 * parameters as macros); its own names are the reserved lower-case words of
 * spec.c, names in capitals, tess_* names, and names with a double
 * underscore, none of which a spec can use. */
#ifndef TESS_GEN_UTIL_H
#define TESS_GEN_UTIL_H

#include "core/op.h"
#include "spec.h"
#include "core/strbuf.h"

/* A number as a literal of the compute type: "0.5f", "4.0" ... */
void tess_gen_number(tess_strbuf *b, double v, tess_dtype real);
/* The output field instance i computes, or -1 for an intermediate. */
int tess_gen_inst_output(const tess_spec *s, int i);
/* The output that advances field f (f is its previous time level), or -1. */
int tess_gen_advancer(const tess_spec *s, int f);
/* The local variable of instance i: "lap", "lap__xp1", "flx__zm1_yp2". */
void tess_gen_inst_name(const tess_spec *s, int i, char *buf, size_t len);
/* Prints a reference that is written the same in every generator (a
 * parameter, or an instance of an intermediate) and returns true; false for
 * field references, which each generator prints its own way. */
bool tess_gen_print_named_ref(tess_strbuf *b, const tess_spec *s, const tess_expr *e);
/* C type of field f's elements: "float" or "double". */
const char *tess_gen_ctype(const tess_spec *s, int f, tess_dtype real);
/* "z + 1", "x - 2", "y": grid coordinate `var` moved by off. */
void tess_gen_coord(tess_strbuf *b, const char *var, int off);
/* Header comment: what was generated, for which task and config, and the
 * statements as specified. */
void tess_gen_header(tess_strbuf *b, const tess_spec *s, const tess_task *t, const char *backend,
                     const char *config);
/* #defines of the grid extents (NZ, NY, NX), the boundary bands (LO_X,
 * HI_X, ...) and the parameters, and the real typedef and helpers
 * (tess_min, tess_max, tess_abs, tess_sqrt); `qual` prefixes the helpers
 * ("static inline" or "__device__ __forceinline__"). With `fminmax`, min
 * and max are fmin and fmax (one instruction each on a GPU, where the
 * compare and select take two); for the finite values a verified kernel
 * computes, both give the same result. */
void tess_gen_prelude(tess_strbuf *b, const tess_spec *s, const tess_task *t, const char *qual, bool fminmax);
/* The tunable value `name` of config c (0 if the space has no such parameter). */
int tess_gen_param(const tess_space *sp, const tess_config *c, const char *name);
/* Label of categorical parameter `name` in c ("" if none). */
const char *tess_gen_label(const tess_space *sp, const tess_config *c, const char *name);
/* Accepts a task for a spec: rank, dtype and extents the stencil fits in. */
tess_status tess_gen_check_task(const tess_spec *s, const tess_task *t);

#endif
