/*
 * space.h - parameter spaces: named parameters with finite value lists,
 * constraints between them, enumeration, uniform sampling, neighbourhoods
 * and the encoding of a config as a feature vector.
 *
 * A config is a fixed-size vector of value *indices*, one per parameter, so
 * configs are cheap to copy, compare and hash. Values are numbers (doubles);
 * a categorical parameter (loop order, staging kind) has labels, and its
 * numeric value is the label's index.
 */
#ifndef TESS_SPACE_H
#define TESS_SPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>
#include "tessera.h"

#define TESS_MAX_PARAMS 32
#define TESS_MAX_VALUES 4096
#define TESS_PARAM_NAME_MAX 48

typedef struct tess_config {
    uint16_t v[TESS_MAX_PARAMS];   /* value index of each parameter; unused slots are 0 */
} tess_config;

typedef struct tess_space tess_space;

/* A constraint receives the numeric values of all parameters, in the order
 * they were added, and says whether the combination is legal. */
typedef bool (*tess_constraint_fn)(const double *values, void *user);

tess_space *tess_space_create(void);
void tess_space_destroy(tess_space *s);

/* Adds a numeric parameter. default_index selects the template's default value. */
tess_status tess_space_add(tess_space *s, const char *name, int n, const double *values,
                           int default_index);
/* Adds a parameter taking the powers of two lo, 2lo, ..., hi (lo, hi powers of two). */
tess_status tess_space_add_pow2(tess_space *s, const char *name, long lo, long hi, long dflt);
/* Adds a categorical parameter; its numeric value is the label index. */
tess_status tess_space_add_labels(tess_space *s, const char *name, int n,
                                  const char *const *labels, int default_index);
/* Makes a parameter optional: a config text that leaves it out means the
 * value `absent` (its numeric value; for labels, the label's index). For
 * parameters added to a space after configs of it were recorded: `absent` is
 * the behaviour before. Formatting still writes every parameter. */
tess_status tess_space_set_optional(tess_space *s, const char *name, double absent);
/* Sets the optional parameters of c to their absent values: what a config
 * text that names none of them means. */
void tess_space_fill_absent(const tess_space *s, tess_config *c);
/* Marks a parameter as a shortcut (a fast intrinsic, an approximation,
 * offered under an error budget) whose value `exact` computes exactly. */
tess_status tess_space_set_shortcut(tess_space *s, const char *name, double exact);
/* Whether c takes no shortcut: every shortcut parameter at its exact value. */
bool tess_space_config_exact(const tess_space *s, const tess_config *c);
/* Adds a constraint. `what` describes it for messages (e.g. "block_x*block_y <= 1024").
 * The user pointer is borrowed and must outlive the space. */
tess_status tess_space_add_constraint(tess_space *s, tess_constraint_fn fn, void *user,
                                      const char *what);
/* The same with a copy of `size` bytes at data as the user pointer: the
 * space owns it (for constraints that depend on the device as well). */
tess_status tess_space_add_constraint_copy(tess_space *s, tess_constraint_fn fn, const void *data, size_t size,
                                           const char *what);
/* Pins parameters to one value each ("name=value,..."): configs with any
 * other value are illegal, and the pinned value becomes the default. */
tess_status tess_space_pin(tess_space *s, const char *text);
/* Restricts the space to an explicit list of legal points (replayed spaces);
 * constraints still apply. The list is copied. */
tess_status tess_space_set_points(tess_space *s, const tess_config *points, size_t n);

int tess_space_nparams(const tess_space *s);
const char *tess_space_param_name(const tess_space *s, int p);
int tess_space_param_size(const tess_space *s, int p);                 /* number of values */
double tess_space_param_value(const tess_space *s, int p, int index);
const char *tess_space_param_label(const tess_space *s, int p, int index); /* NULL if numeric */
int tess_space_param_index(const tess_space *s, const char *name);      /* -1 if unknown */
/* Index of `value` among parameter p's values, or -1. */
int tess_space_value_index(const tess_space *s, int p, double value);

/* Product of the value counts, before constraints. */
double tess_space_cardinality(const tess_space *s);
bool tess_space_valid(const tess_space *s, const tess_config *c);
/* Which constraint c violates (its description), or NULL if valid. */
const char *tess_space_violation(const tess_space *s, const tess_config *c);

/* Numeric values of c, in parameter order (values has nparams entries). */
void tess_space_values(const tess_space *s, const tess_config *c, double *values);
/* Value of the named parameter in c; NAN if there is no such parameter. */
double tess_config_get(const tess_space *s, const tess_config *c, const char *name);
/* The same, or `absent` for a parameter the space lacks (spaces that gain
 * parameters only for some tasks, such as shortcuts under an error budget). */
double tess_config_get_or(const tess_space *s, const tess_config *c, const char *name, double absent);
/* The template's default config. */
void tess_space_default(const tess_space *s, tess_config *c);

/* All legal points, in lexicographic order of indices. Fails with TESS_ERR_ARG
 * if there are more than `limit`. *out is malloc'd; the caller frees it. */
tess_status tess_space_enumerate(const tess_space *s, size_t limit, tess_config **out, size_t *n);
/* Number of legal points (enumerates; capped like enumerate). */
tess_status tess_space_count(const tess_space *s, size_t limit, size_t *n);
/* A uniformly random legal point, without enumerating huge spaces (rejection
 * sampling; falls back to an enumerated list, built once and kept in the
 * space, when constraints reject most points; not thread-safe). */
tess_status tess_space_sample(const tess_space *s, gsl_rng *rng, tess_config *out);

typedef enum tess_neighborhood {
    TESS_NEIGH_ADJACENT,  /* one parameter moved to the next smaller or larger value */
    TESS_NEIGH_HAMMING    /* one parameter changed to any other value */
} tess_neighborhood;

/* Legal neighbours of c; writes at most max of them, *n is how many. */
tess_status tess_space_neighbors(const tess_space *s, const tess_config *c,
                                 tess_neighborhood kind, tess_config *out, int max, int *n);

/* Feature encoding: one feature per parameter in [0, 1]: log-scaled position
 * for positive numeric parameters, index position otherwise. */
int tess_space_nfeatures(const tess_space *s);
void tess_space_encode(const tess_space *s, const tess_config *c, double *features);

/* "name=value,name=value" (labels for categorical parameters). */
tess_status tess_config_format(const tess_space *s, const tess_config *c, char *buf, size_t len);
/* Parses the format above; every parameter must be given, with a legal
 * value, but optional ones (left out: their absent value). */
tess_status tess_config_parse(const tess_space *s, const char *text, tess_config *out);

bool tess_config_equal(const tess_config *a, const tess_config *b);
uint64_t tess_config_hash(const tess_config *c);

/* A set of configs (open addressing), for "never propose twice". */
typedef struct tess_config_set tess_config_set;
tess_config_set *tess_config_set_create(void);
void tess_config_set_destroy(tess_config_set *set);
/* Returns true if c was added, false if it was already present. */
bool tess_config_set_add(tess_config_set *set, const tess_config *c);
bool tess_config_set_contains(const tess_config_set *set, const tess_config *c);
size_t tess_config_set_size(const tess_config_set *set);

#endif
