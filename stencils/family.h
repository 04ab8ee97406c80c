/*
 * family.h - the stencil family: one operator per stencil spec.
 *
 * Each spec (a .stencil file, or one built through the C API of spec.h)
 * becomes a tess_op named after the stencil, with C/OpenMP and CUDA code
 * generation, the float64 reference interpreter, and counts derived from
 * the spec. An operator name the registry already holds is left to its
 * owner; the family still keeps its own operator (tess_stencils_op).
 * Registration is meant for start-up: it is not thread-safe.
 */
#ifndef TESS_STENCILS_FAMILY_H
#define TESS_STENCILS_FAMILY_H

#include "core/op.h"
#include "spec.h"

/* Parses every *.stencil file of lib_dir (in name order) and registers
 * one operator per stencil. Files that fail to parse are skipped; the
 * first failure is returned (TESS_ERR_FORMAT, "file:line:col: ...") after
 * the others are registered. */
tess_status tess_stencils_register_library(const char *lib_dir);
/* The paths of the *.stencil files of lib_dir, in name order (owned: free
 * them with tess_stencils_free_paths). TESS_ERR_IO if it cannot be read. */
tess_status tess_stencils_library_files(const char *lib_dir, char ***paths, size_t *n);
void tess_stencils_free_paths(char **paths, size_t n);
/* Parses one stencil file and registers it as a new operator. Its stencil's
 * name (the file's name without .stencil when it does not parse) goes to
 * name. A name that an operator or stencil already has is refused
 * (TESS_ERR_ARG): a user's file never silently loses to a built-in. */
tess_status tess_stencils_register_new_file(const char *path, char *name, size_t name_len);
/* Registers the library compiled into the binary (the .stencil files of stencils/templates). */
tess_status tess_stencils_register_builtin(void);
/* Registers one finished spec; the family takes ownership (also on failure).
 * A stencil name the family already has is skipped (the spec is freed). */
tess_status tess_stencils_register_spec(tess_spec *s);

/* The family's operator and spec for a stencil name (NULL if none). */
const tess_op *tess_stencils_op(const char *name);
const tess_spec *tess_stencils_spec(const char *name);
/* The embedded library: number of files, and each file's name and text. */
int tess_stencils_builtin_count(void);
const char *tess_stencils_builtin_file(int i);
const char *tess_stencils_builtin_text(int i);

#endif
