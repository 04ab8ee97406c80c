/* test_space.c - parameter spaces: enumeration, sampling, neighbours,
 * encoding, config text and config sets. */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/space.h"

/* block_x * block_y <= limit, over the first two parameters. */
static bool threads_at_most(const double *v, void *user) {
    return v[0] * v[1] <= *(const double *)user;
}

/* unroll (third parameter) divides block_x. */
static bool unroll_divides(const double *v, void *user) {
    (void)user;
    return fmod(v[0], v[2]) == 0;
}

static tess_space *make_space(double *limit) {
    tess_space *s = tess_space_create();
    const double unroll[] = {1, 2, 3, 4};
    const char *const order[] = {"xyz", "zyx", "yxz"};
    CHECK_OK(tess_space_add_pow2(s, "block_x", 1, 256, 32));
    CHECK_OK(tess_space_add_pow2(s, "block_y", 1, 64, 4));
    CHECK_OK(tess_space_add(s, "unroll", 4, unroll, 0));
    CHECK_OK(tess_space_add_labels(s, "order", 3, order, 0));
    if (limit) {
        CHECK_OK(tess_space_add_constraint(s, threads_at_most, limit, "block_x*block_y <= limit"));
        CHECK_OK(tess_space_add_constraint(s, unroll_divides, NULL, "unroll divides block_x"));
    }
    return s;
}

/* Counts legal points by nested loops over the values, independently of the odometer. */
static size_t brute_force_count(double limit) {
    size_t n = 0;
    for (double bx = 1; bx <= 256; bx *= 2)
        for (double by = 1; by <= 64; by *= 2)
            for (int u = 1; u <= 4; u++)
                if (bx * by <= limit && fmod(bx, u) == 0) n += 3;
    return n;
}

/* Lexicographic order of value indices. */
static int compare(const tess_config *a, const tess_config *b) {
    for (int p = 0; p < TESS_MAX_PARAMS; p++)
        if (a->v[p] != b->v[p]) return a->v[p] < b->v[p] ? -1 : 1;
    return 0;
}

static void test_parameters(void) {
    tess_space *s = make_space(NULL);
    CHECK(tess_space_nparams(s) == 4);
    CHECK(tess_space_param_size(s, 0) == 9);
    CHECK(tess_space_param_size(s, 1) == 7);
    CHECK_NEAR(tess_space_cardinality(s), 9 * 7 * 4 * 3, 0);
    CHECK(tess_space_param_index(s, "unroll") == 2);
    CHECK(tess_space_param_index(s, "nope") == -1);
    CHECK(strcmp(tess_space_param_name(s, 3), "order") == 0);
    CHECK(strcmp(tess_space_param_label(s, 3, 1), "zyx") == 0);
    CHECK(tess_space_param_label(s, 0, 1) == NULL);
    CHECK_NEAR(tess_space_param_value(s, 0, 8), 256, 0);
    CHECK(tess_space_value_index(s, 1, 16) == 4);
    CHECK(tess_space_value_index(s, 1, 3) == -1);

    tess_config d;
    tess_space_default(s, &d);
    CHECK_NEAR(tess_config_get(s, &d, "block_x"), 32, 0);
    CHECK_NEAR(tess_config_get(s, &d, "block_y"), 4, 0);
    CHECK_NEAR(tess_config_get(s, &d, "unroll"), 1, 0);
    CHECK(isnan(tess_config_get(s, &d, "missing")));

    /* bad definitions are refused */
    const double dup[] = {1, 1};
    CHECK(tess_space_add(s, "dup", 2, dup, 0) == TESS_ERR_ARG);
    CHECK(tess_space_add(s, "block_x", 1, dup, 0) == TESS_ERR_ARG);
    CHECK(tess_space_add(s, "bad name", 1, dup, 0) == TESS_ERR_ARG);
    CHECK(tess_space_add(s, "x", 1, dup, 1) == TESS_ERR_ARG);
    CHECK(tess_space_add_pow2(s, "p", 3, 64, 4) == TESS_ERR_ARG);
    CHECK(tess_space_add_pow2(s, "p", 4, 64, 128) == TESS_ERR_ARG);
    const char *const same[] = {"a", "a"};
    CHECK(tess_space_add_labels(s, "l", 2, same, 0) == TESS_ERR_ARG);
    CHECK(tess_space_nparams(s) == 4);
    tess_space_destroy(s);
}

static void test_enumeration(void) {
    tess_space *s = make_space(NULL);
    size_t n = 0;
    CHECK_OK(tess_space_count(s, 100000, &n));
    CHECK(n == 9 * 7 * 4 * 3);
    CHECK(tess_space_count(s, 10, &n) == TESS_ERR_ARG);
    tess_space_destroy(s);

    const double limits[] = {1024, 64, 8, 1};
    for (size_t t = 0; t < sizeof limits / sizeof limits[0]; t++) {
        double limit = limits[t];
        s = make_space(&limit);
        tess_config *all = NULL;
        CHECK_OK(tess_space_enumerate(s, 100000, &all, &n));
        CHECK_MSG(n == brute_force_count(limit), "limit %g: %zu vs %zu", limit, n, brute_force_count(limit));
        size_t counted = 0;
        CHECK_OK(tess_space_count(s, 100000, &counted));
        CHECK(counted == n);
        bool ordered = true, legal = true;
        for (size_t i = 0; i < n; i++) {
            legal &= tess_space_valid(s, &all[i]);
            if (i) ordered &= compare(&all[i - 1], &all[i]) < 0;
        }
        CHECK(legal);
        CHECK(ordered);
        free(all);
        tess_space_destroy(s);
    }
}

static void test_violation(void) {
    double limit = 64;
    tess_space *s = make_space(&limit);
    tess_config c;
    CHECK_OK(tess_config_parse(s, "block_x=8,block_y=8,unroll=2,order=xyz", &c));
    CHECK(tess_space_valid(s, &c));
    c.v[0] = 4;   /* block_x = 16: 16 * 8 > 64 */
    CHECK(!tess_space_valid(s, &c));
    CHECK(strcmp(tess_space_violation(s, &c), "block_x*block_y <= limit") == 0);
    c.v[0] = 3;
    c.v[2] = 2;   /* unroll 3 does not divide 8 */
    CHECK(strcmp(tess_space_violation(s, &c), "unroll divides block_x") == 0);
    c.v[2] = 9;   /* out of range */
    CHECK(!tess_space_valid(s, &c));
    tess_space_destroy(s);
}

/* Chi-square statistic of uniform sampling over the legal points of a small
 * constrained space whose constraints reject most points (exercises the cached list). */
static double sampling_chi2(double limit, size_t *npoints, int draws, bool *all_legal) {
    tess_space *s = make_space(&limit);
    tess_config *all = NULL;
    size_t n = 0;
    CHECK_OK(tess_space_enumerate(s, 100000, &all, &n));
    int *hits = calloc(n, sizeof *hits);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 7);
    *all_legal = true;
    for (int d = 0; d < draws; d++) {
        tess_config c;
        CHECK_OK(tess_space_sample(s, rng, &c));
        *all_legal &= tess_space_valid(s, &c);
        size_t lo = 0, hi = n;   /* locate c in the sorted list */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            int cmp = compare(&all[mid], &c);
            if (cmp == 0) {
                hits[mid]++;
                break;
            }
            if (cmp < 0) lo = mid + 1;
            else hi = mid;
        }
    }
    double expected = (double)draws / (double)n, chi2 = 0;
    for (size_t i = 0; i < n; i++) chi2 += (hits[i] - expected) * (hits[i] - expected) / expected;
    *npoints = n;
    gsl_rng_free(rng);
    free(hits);
    free(all);
    tess_space_destroy(s);
    return chi2;
}

static void test_sampling(void) {
    /* acceptance 1.6% (served from the cached legal list), 12% and 55% (rejection) */
    const double limits[] = {2, 16, 1024};
    for (int t = 0; t < 3; t++) {
        size_t n = 0;
        bool legal = false;
        int draws = 20000;
        double chi2 = sampling_chi2(limits[t], &n, draws, &legal);
        CHECK(legal);
        /* chi-square with n-1 degrees of freedom: mean n-1, sd sqrt(2(n-1)); allow 5 sd */
        double dof = (double)n - 1;
        CHECK_MSG(chi2 < dof + 5 * sqrt(2 * dof), "limit %g: chi2 %.1f with %zu points", limits[t], chi2, n);
    }

    /* a space with no legal point reports it */
    double none = 0;
    tess_space *s = make_space(&none);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    tess_config c;
    CHECK(tess_space_sample(s, rng, &c) == TESS_ERR_NOTFOUND);
    tess_space_destroy(s);

    /* a huge space is sampled without enumerating it */
    s = tess_space_create();
    for (int p = 0; p < 12; p++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", p);
        CHECK_OK(tess_space_add_pow2(s, name, 1, 1024, 1));
    }
    CHECK(tess_space_cardinality(s) > 1e12);
    for (int i = 0; i < 100; i++) CHECK_OK(tess_space_sample(s, rng, &c));
    gsl_rng_free(rng);
    tess_space_destroy(s);
}

static void test_points(void) {
    double limit = 64;
    tess_space *s = make_space(&limit);
    tess_config pts[4];
    CHECK_OK(tess_config_parse(s, "block_x=8,block_y=8,unroll=2,order=xyz", &pts[0]));
    CHECK_OK(tess_config_parse(s, "block_x=4,block_y=2,unroll=4,order=zyx", &pts[1]));
    pts[2] = pts[0];                      /* repeat: kept once */
    pts[3] = pts[1];
    pts[3].v[0] = 8;                      /* block_x = 256: breaks the constraint */
    CHECK_OK(tess_space_set_points(s, pts, 4));
    size_t n = 0;
    tess_config *all = NULL;
    CHECK_OK(tess_space_enumerate(s, 100, &all, &n));
    CHECK(n == 2);
    if (n == 2) {
        CHECK(tess_config_equal(&all[0], &pts[1]));   /* lexicographic: block_x index 2 < 3 */
        CHECK(tess_config_equal(&all[1], &pts[0]));
    }
    free(all);
    CHECK(!tess_space_valid(s, &pts[3]));
    tess_config off = pts[0];
    off.v[2] = 0;   /* legal by the constraints but not recorded */
    CHECK(!tess_space_valid(s, &off));
    CHECK(strcmp(tess_space_violation(s, &off), "not a recorded point") == 0);

    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    int first = 0;
    for (int i = 0; i < 400; i++) {
        tess_config c;
        CHECK_OK(tess_space_sample(s, rng, &c));
        CHECK(tess_config_equal(&c, &pts[0]) || tess_config_equal(&c, &pts[1]));
        first += tess_config_equal(&c, &pts[0]);
    }
    CHECK(first > 140 && first < 260);
    gsl_rng_free(rng);

    int nn = 0;
    tess_config nb[64];
    CHECK_OK(tess_space_neighbors(s, &pts[0], TESS_NEIGH_HAMMING, nb, 64, &nn));
    CHECK(nn == 0);   /* the two recorded points differ in three parameters */
    tess_space_destroy(s);
}

static int differing(const tess_config *a, const tess_config *b) {
    int d = 0;
    for (int p = 0; p < TESS_MAX_PARAMS; p++) d += a->v[p] != b->v[p];
    return d;
}

static void test_neighbors(void) {
    double limit = 256;
    tess_space *s = make_space(&limit);
    tess_config *all = NULL;
    size_t n = 0;
    CHECK_OK(tess_space_enumerate(s, 100000, &all, &n));
    bool legal = true, one_step = true, one_param = true, complete = true;
    for (size_t i = 0; i < n; i++) {
        tess_config nb[256];
        int k = 0;
        CHECK_OK(tess_space_neighbors(s, &all[i], TESS_NEIGH_ADJACENT, nb, 256, &k));
        for (int j = 0; j < k; j++) {
            legal &= tess_space_valid(s, &nb[j]);
            one_param &= differing(&nb[j], &all[i]) == 1;
            for (int p = 0; p < 4; p++) one_step &= abs((int)nb[j].v[p] - (int)all[i].v[p]) <= 1;
        }
        CHECK_OK(tess_space_neighbors(s, &all[i], TESS_NEIGH_HAMMING, nb, 256, &k));
        int expected = 0;   /* legal points at Hamming distance one, by brute force */
        for (size_t m = 0; m < n; m++) expected += differing(&all[m], &all[i]) == 1;
        complete &= k == expected;
        for (int j = 0; j < k; j++) {
            legal &= tess_space_valid(s, &nb[j]);
            one_param &= differing(&nb[j], &all[i]) == 1;
        }
    }
    CHECK(legal);
    CHECK(one_step);
    CHECK(one_param);
    CHECK(complete);

    tess_config c, nb[4];
    int k = 0;
    CHECK_OK(tess_config_parse(s, "block_x=1,block_y=1,unroll=1,order=xyz", &c));
    CHECK_OK(tess_space_neighbors(s, &c, TESS_NEIGH_ADJACENT, nb, 2, &k));
    CHECK(k == 2);   /* capped at max */
    free(all);
    tess_space_destroy(s);
}

static void test_encoding(void) {
    tess_space *s = tess_space_create();
    const double mixed[] = {-1, 0, 5};
    CHECK_OK(tess_space_add_pow2(s, "tile", 1, 256, 1));
    CHECK_OK(tess_space_add(s, "shift", 3, mixed, 0));
    const char *const kinds[] = {"none", "shared", "registers"};
    CHECK_OK(tess_space_add_labels(s, "staging", 3, kinds, 0));
    const double one[] = {7};
    CHECK_OK(tess_space_add(s, "fixed", 1, one, 0));
    CHECK(tess_space_nfeatures(s) == 4);
    tess_config c;
    CHECK_OK(tess_config_parse(s, "tile=16,shift=0,staging=registers,fixed=7", &c));
    double f[4];
    tess_space_encode(s, &c, f);
    CHECK_NEAR(f[0], 0.5, 1e-12);   /* log position: 16 is halfway from 1 to 256 */
    CHECK_NEAR(f[1], 0.5, 1e-12);   /* index position for non-positive values */
    CHECK_NEAR(f[2], 1.0, 1e-12);
    CHECK_NEAR(f[3], 0.0, 1e-12);
    tess_config *all = NULL;
    size_t n = 0;
    CHECK_OK(tess_space_enumerate(s, 1000, &all, &n));
    bool in_unit = true;
    for (size_t i = 0; i < n; i++) {
        tess_space_encode(s, &all[i], f);
        for (int p = 0; p < 4; p++) in_unit &= f[p] >= 0 && f[p] <= 1;
    }
    CHECK(in_unit);
    free(all);
    tess_space_destroy(s);
}

static void test_text(void) {
    double limit = 128;
    const double frac[] = {0.1, 0.25, 1e-7};
    tess_space *s = tess_space_create();
    CHECK_OK(tess_space_add_pow2(s, "block_x", 1, 256, 32));
    CHECK_OK(tess_space_add_pow2(s, "block_y", 1, 64, 4));
    const double unroll[] = {1, 2, 3, 4};
    CHECK_OK(tess_space_add(s, "unroll", 4, unroll, 0));
    const char *const order[] = {"xyz", "zyx", "yxz"};
    CHECK_OK(tess_space_add_labels(s, "order", 3, order, 0));
    CHECK_OK(tess_space_add(s, "alpha", 3, frac, 0));
    CHECK_OK(tess_space_add_constraint(s, threads_at_most, &limit, "block_x*block_y <= 128"));

    tess_config *all = NULL;
    size_t n = 0;
    CHECK_OK(tess_space_enumerate(s, 100000, &all, &n));
    bool round_trip = true;
    for (size_t i = 0; i < n; i++) {
        char buf[256];
        tess_config back;
        CHECK_OK(tess_config_format(s, &all[i], buf, sizeof buf));
        round_trip &= tess_config_parse(s, buf, &back) == TESS_OK && tess_config_equal(&back, &all[i]);
    }
    CHECK(round_trip);
    free(all);

    char buf[256];
    tess_config c;
    tess_space_default(s, &c);
    CHECK_OK(tess_config_format(s, &c, buf, sizeof buf));
    CHECK(strcmp(buf, "block_x=32,block_y=4,unroll=1,order=xyz,alpha=0.1") == 0);
    CHECK(tess_config_format(s, &c, buf, 10) == TESS_ERR_ARG);

    /* any order and spaces are accepted */
    CHECK_OK(tess_config_parse(s, " alpha = 1e-7 , order=yxz,unroll=4,block_y=2,block_x=64", &c));
    CHECK_NEAR(tess_config_get(s, &c, "alpha"), 1e-7, 0);
    CHECK_NEAR(tess_config_get(s, &c, "order"), 2, 0);

    struct {
        const char *text, *says;
    } bad[] = {
        {"block_x=32,block_y=4,unroll=1,order=xyz", "'alpha' is missing"},
        {"block_x=32,block_y=4,unroll=1,order=xyz,alpha=0.1,tile=2", "unknown parameter 'tile'"},
        {"block_x=33,block_y=4,unroll=1,order=xyz,alpha=0.1", "'33' is not a value of 'block_x'"},
        {"block_x=32,block_y=4,unroll=1,order=abc,alpha=0.1", "'abc' is not a value of 'order'"},
        {"block_x=32,block_y=4,unroll=x,order=xyz,alpha=0.1", "'x' is not a value of 'unroll'"},
        {"block_x=32,block_x=4,unroll=1,order=xyz,alpha=0.1", "'block_x' given twice"},
        {"block_x=256,block_y=4,unroll=1,order=xyz,alpha=0.1", "block_x*block_y <= 128"},
        {"block_x,block_y=4", "not name=value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(tess_config_parse(s, bad[i].text, &c) != TESS_OK);
        CHECK_MSG(strstr(tess_errmsg(), bad[i].says) != NULL, "'%s' gave '%s'", bad[i].text, tess_errmsg());
    }
    tess_space_destroy(s);
}

static void test_config_set(void) {
    tess_config_set *set = tess_config_set_create();
    CHECK(tess_config_set_size(set) == 0);
    tess_config c;
    memset(&c, 0, sizeof c);
    bool added = true, found = true;
    for (int i = 0; i < 5000; i++) {
        c.v[0] = (uint16_t)(i % 100);
        c.v[5] = (uint16_t)(i / 100);
        added &= tess_config_set_add(set, &c);
    }
    CHECK(added);
    CHECK(tess_config_set_size(set) == 5000);
    bool again = false;
    for (int i = 0; i < 5000; i++) {
        c.v[0] = (uint16_t)(i % 100);
        c.v[5] = (uint16_t)(i / 100);
        found &= tess_config_set_contains(set, &c);
        again |= tess_config_set_add(set, &c);
    }
    CHECK(found);
    CHECK(!again);
    c.v[0] = 100;
    CHECK(!tess_config_set_contains(set, &c));
    CHECK(tess_config_set_size(set) == 5000);

    tess_config a, b;
    memset(&a, 0, sizeof a);
    b = a;
    CHECK(tess_config_equal(&a, &b) && tess_config_hash(&a) == tess_config_hash(&b));
    b.v[31] = 1;
    CHECK(!tess_config_equal(&a, &b) && tess_config_hash(&a) != tess_config_hash(&b));
    tess_config_set_destroy(set);
}

/* Pinned parameters: only their value is legal, it becomes the default,
 * sampling and enumeration respect it, bad text is refused. */
static void test_pin(void) {
    double limit = 256;
    tess_space *s = make_space(&limit);
    CHECK(tess_space_pin(s, "unroll=5") == TESS_ERR_ARG);
    CHECK(tess_space_pin(s, "nosuch=1") == TESS_ERR_ARG);
    CHECK(tess_space_pin(s, "unroll") == TESS_ERR_FORMAT);
    CHECK_OK(tess_space_pin(s, "unroll=2, order=zyx"));
    tess_config c;
    tess_space_default(s, &c);
    CHECK(tess_config_get(s, &c, "unroll") == 2 && tess_config_get(s, &c, "order") == 1);
    CHECK(tess_space_valid(s, &c));
    c.v[2] = 0;
    const char *why = tess_space_violation(s, &c);
    CHECK_MSG(why && strstr(why, "unroll=2"), "violation: %s", why ? why : "none");
    tess_config *all = NULL;
    size_t n = 0;
    CHECK_OK(tess_space_enumerate(s, 100000, &all, &n));
    size_t expect = 0;   /* block_x even, block_x * block_y <= limit */
    for (double bx = 2; bx <= 256; bx *= 2)
        for (double by = 1; by <= 64; by *= 2) expect += bx * by <= limit;
    CHECK_MSG(n == expect, "%zu pinned configs, expected %zu", n, expect);
    free(all);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    bool pinned = true;
    for (int i = 0; i < 200; i++) {
        CHECK_OK(tess_space_sample(s, rng, &c));
        pinned &= tess_config_get(s, &c, "unroll") == 2 && tess_config_get(s, &c, "order") == 1;
    }
    CHECK(pinned);
    gsl_rng_free(rng);
    tess_space_destroy(s);
}

/* A parameter added after configs were recorded: optional, so a text without
 * it means the value that was the behaviour before (not its default); texts
 * still name it. A constraint on a copy of its data, which may go out of
 * scope. */
static void test_optional(void) {
    tess_space *s = tess_space_create();
    CHECK_OK(tess_space_add_pow2(s, "block_x", 1, 256, 32));
    CHECK_OK(tess_space_add_pow2(s, "block_y", 1, 64, 4));
    CHECK_OK(tess_space_add(s, "depth", 3, (const double[]){1, 2, 3}, 1));   /* default 2, absent 1 */
    CHECK(tess_space_set_optional(s, "nosuch", 1) == TESS_ERR_ARG);
    CHECK(tess_space_set_optional(s, "depth", 4) == TESS_ERR_ARG);
    CHECK_OK(tess_space_set_optional(s, "depth", 1));
    {
        double limit = 64;
        CHECK_OK(tess_space_add_constraint_copy(s, threads_at_most, &limit, sizeof limit, "block_x*block_y <= 64"));
        limit = 1e9;   /* the space's copy keeps 64 */
    }
    tess_config c;
    CHECK_OK(tess_config_parse(s, "block_x=16,block_y=2", &c));
    CHECK(tess_config_get(s, &c, "depth") == 1);
    char buf[128];
    CHECK_OK(tess_config_format(s, &c, buf, sizeof buf));
    CHECK_MSG(strcmp(buf, "block_x=16,block_y=2,depth=1") == 0, "formatted '%s'", buf);
    tess_config d;
    tess_space_default(s, &d);
    tess_space_fill_absent(s, &d);
    CHECK(tess_config_get(s, &d, "depth") == 1 && tess_config_get(s, &d, "block_y") == 4);
    tess_space_default(s, &c);
    CHECK_OK(tess_config_format(s, &c, buf, sizeof buf));
    CHECK_MSG(strcmp(buf, "block_x=32,block_y=4,depth=2") == 0, "formatted '%s'", buf);
    CHECK_OK(tess_config_parse(s, "depth=3,block_x=16,block_y=2", &c));
    CHECK_OK(tess_config_format(s, &c, buf, sizeof buf));
    CHECK_MSG(strcmp(buf, "block_x=16,block_y=2,depth=3") == 0, "formatted '%s'", buf);
    CHECK(tess_config_parse(s, "block_x=16", &c) == TESS_ERR_ARG);   /* block_y is required */
    CHECK(strstr(tess_errmsg(), "'block_y' is missing") != NULL);
    CHECK(tess_config_parse(s, "block_x=16,block_y=8", &c) == TESS_ERR_ARG);
    CHECK(strstr(tess_errmsg(), "block_x*block_y <= 64") != NULL);
    tess_space_destroy(s);
}

int main(void) {
    test_parameters();
    test_optional();
    test_enumeration();
    test_violation();
    test_sampling();
    test_points();
    test_neighbors();
    test_encoding();
    test_text();
    test_config_set();
    test_pin();
    return check_finish("test_space");
}
