/* test_split_plan.c - slab decomposition along the slowest axis: even and
 * uneven slabs, the planes each rank holds, the windows launches read,
 * refused splits with messages that say why, and the space of the overlap
 * parameters. */
#include <string.h>
#include "check.h"
#include "core/space.h"
#include "core/split.h"

static void test_even_and_uneven(void) {
    tess_split_plan p;
    CHECK_OK(tess_split_plan_make(12, 3, 1, "z", &p));
    for (int r = 0; r < 3; r++) CHECK(p.slab[r].lo == 4 * r && p.slab[r].hi == 4 * r + 4);
    CHECK(p.slab[0].mem_lo == 0 && p.slab[0].mem_hi == 5);   /* no halo past the grid's edge */
    CHECK(p.slab[1].mem_lo == 3 && p.slab[1].mem_hi == 9);
    CHECK(p.slab[2].mem_lo == 7 && p.slab[2].mem_hi == 12);

    CHECK_OK(tess_split_plan_make(13, 4, 2, "z", &p));      /* 4, 3, 3, 3: the first slab takes the rest */
    int64_t want[5] = {0, 4, 7, 10, 13};
    for (int r = 0; r < 4; r++) CHECK(p.slab[r].lo == want[r] && p.slab[r].hi == want[r + 1]);
    CHECK(p.slab[3].mem_lo == 8 && p.slab[3].mem_hi == 13);
    CHECK(p.depth == 2 && p.planes == 13 && p.ranks == 4);

    CHECK_OK(tess_split_plan_make(7, 1, 3, "z", &p));       /* one rank: the whole grid, no halo */
    CHECK(p.slab[0].lo == 0 && p.slab[0].hi == 7 && p.slab[0].mem_lo == 0 && p.slab[0].mem_hi == 7);
    CHECK_OK(tess_split_plan_make(6, 6, 1, "y", &p));       /* one plane each */
    CHECK(p.slab[5].lo == 5 && p.slab[5].mem_lo == 4);
}

static void test_windows(void) {
    tess_split_plan p;
    CHECK_OK(tess_split_plan_make(20, 2, 2, "z", &p));
    int64_t a, b;
    tess_split_window(&p, 2, 5, 8, &a, &b);
    CHECK(a == 3 && b == 10);
    tess_split_window(&p, 2, 0, 3, &a, &b);   /* clipped at the edges: the fixed band stands in */
    CHECK(a == 0 && b == 5);
    tess_split_window(&p, 2, 17, 20, &a, &b);
    CHECK(a == 15 && b == 20);
}

static void test_refused(void) {
    tess_split_plan p;
    CHECK(tess_split_plan_make(12, 0, 1, "z", &p) == TESS_ERR_ARG && strstr(tess_errmsg(), "1 to 64 ranks, not 0"));
    CHECK(tess_split_plan_make(12, 65, 1, "z", &p) == TESS_ERR_ARG);
    CHECK(tess_split_plan_make(12, 13, 0, "z", &p) == TESS_ERR_ARG && strstr(tess_errmsg(), "12 planes along z"));
    /* 17 planes in 5 slabs: the thinnest has 3, a radius-4 stencil's halo needs 4 */
    CHECK(tess_split_plan_make(17, 5, 4, "z", &p) == TESS_ERR_ARG);
    CHECK_MSG(strstr(tess_errmsg(), "thinnest slab has 3 planes and the halo needs 4 (at most 4 slabs)"), "%s",
              tess_errmsg());
    CHECK_OK(tess_split_plan_make(17, 4, 4, "z", &p));
    CHECK(tess_split_plan_make(17, 4, -1, "z", &p) == TESS_ERR_ARG);
}

static void test_space(void) {
    tess_space *s;
    CHECK_OK(tess_split_space_create(16, 4, 1, &s));   /* slabs of 4: exchange every 1, 2 or 4 */
    size_t n = 0;
    CHECK_OK(tess_space_count(s, 1000, &n));
    CHECK_MSG(n == 2 * 4 * 3, "%zu configs", n);
    tess_config c;
    tess_space_default(s, &c);
    CHECK(tess_config_get(s, &c, "overlap") == 1 && tess_config_get(s, &c, "halo_chunks") == 1 &&
          tess_config_get(s, &c, "exchange_every") == 1);
    /* a halo 8 planes deep does not fit slabs of 4 */
    CHECK(tess_config_parse(s, "overlap=split,halo_chunks=2,exchange_every=8", &c) != TESS_OK ||
          !tess_space_valid(s, &c));
    tess_space_destroy(s);
    CHECK_OK(tess_split_space_create(16, 1, 4, &s));   /* one rank: only the thinnest slab limits it */
    CHECK_OK(tess_space_count(s, 1000, &n));
    CHECK(n == 2 * 4 * 3);
    tess_space_destroy(s);
    CHECK(tess_split_space_create(3, 4, 1, &s) == TESS_ERR_ARG && !s);
}

int main(void) {
    test_even_and_uneven();
    test_windows();
    test_refused();
    test_space();
    return check_finish("test_split_plan");
}
