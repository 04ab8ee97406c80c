/* test_split_run.c - a stencil run split into slabs on the cpu equals the
 * run of the whole grid bit for bit: fixed-order stencils (heat3d, heat3d4
 * with its four fused steps, hdiff, varcoef3d, box3d27, star3d25 of radius
 * 4, heat2d) over many applications and several rank counts, uneven slabs,
 * every overlap setting (interior and boundary launches or whole slabs,
 * chunked halos, halos deepened for several applications); the posts,
 * waits and launches come in the overlapped order; bad splits are refused
 * with a message. The local transport poisons every halo until its wait,
 * so a launch that read a halo too early would compute NaN. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "tessera.h"

#define MAX_BUF 8

typedef struct fields {
    tess_buffer_info buf[MAX_BUF];
    int n;
    void *data[MAX_BUF];
} fields;

/* Inputs drawn in their ranges from a fixed sequence; outputs copies of the
 * inputs they advance (their fixed boundary values); scratch zero. */
static void fields_init(fields *f, const char *op, const int64_t *shape, int ndim) {
    CHECK_OK(tess_op_list_buffers(op, shape, ndim, "f32", f->buf, MAX_BUF, &f->n));
    uint64_t seed = 12345;
    for (int i = 0; i < f->n; i++) {
        tess_buffer_info *b = &f->buf[i];
        f->data[i] = calloc((size_t)b->count + 1, b->elem_bytes);
        if (b->role != TESS_BUFFER_INPUT) continue;
        for (int64_t e = 0; e < b->count; e++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            double u = (double)(seed >> 11) / 9007199254740992.0;
            ((float *)f->data[i])[e] = (float)(b->lo + (b->hi - b->lo) * u);
        }
    }
    for (int i = 0; i < f->n; i++)
        if (f->buf[i].advances >= 0)
            memcpy(f->data[i], f->data[f->buf[i].advances], (size_t)f->buf[i].count * f->buf[i].elem_bytes);
}

static void fields_free(fields *f) {
    for (int i = 0; i < f->n; i++) free(f->data[i]);
}

/* The whole grid's run, as tessera run steps it; the time levels end where
 * tess_op_advance left them, in arrays. */
static void whole_run(tess_context *ctx, const char *op, const int64_t *shape, int ndim, fields *f, long apps,
                      void **arrays) {
    tess_kernel *k = NULL;
    tess_dispatch_options d = tess_dispatch_options_default();
    CHECK_OK(tess_dispatch(ctx, op, shape, ndim, "f32", "cpu", &d, &k));
    memcpy(arrays, f->data, sizeof f->data);
    for (long s = 0; k && s < apps; s++) {
        CHECK_OK(tess_kernel_run(k, arrays, f->n));
        tess_op_advance(f->buf, f->n, arrays);
    }
}

/* Runs op split as o says and checks every time level against the whole
 * run, bit for bit. */
static void check_split(tess_context *ctx, const char *op, const int64_t *shape, int ndim, long apps,
                        const tess_split_options *o) {
    fields whole, split;
    fields_init(&whole, op, shape, ndim);
    fields_init(&split, op, shape, ndim);
    void *arrays[MAX_BUF];
    whole_run(ctx, op, shape, ndim, &whole, apps, arrays);
    tess_split_report rep;
    tess_status st = tess_split_run(ctx, op, shape, ndim, "f32", "cpu", o, split.data, split.n, apps, &rep);
    CHECK_MSG(st == TESS_OK, "%s split in %d: %s", op, o->ranks, tess_errmsg());
    int compared = 0;
    for (int i = 0; !st && i < whole.n; i++) {
        const tess_buffer_info *b = &whole.buf[i];
        if (!((b->role == TESS_BUFFER_INPUT && b->advanced) || b->advances >= 0)) continue;
        size_t bytes = (size_t)b->count * b->elem_bytes;
        int64_t first = -1;
        for (int64_t e = 0; e < b->count && first < 0; e++)
            if (memcmp((float *)split.data[i] + e, (float *)arrays[i] + e, sizeof(float))) first = e;
        CHECK_MSG(first < 0 && memcmp(split.data[i], arrays[i], bytes) == 0,
                  "%s '%s' split in %d (overlap %d, chunks %d, every %d) differs from the whole run at element %lld "
                  "(%.9g vs %.9g)", op, b->name, o->ranks, o->overlap, o->halo_chunks, o->exchange_every,
                  (long long)first, first < 0 ? 0.0 : (double)((float *)split.data[i])[first],
                  first < 0 ? 0.0 : (double)((float *)arrays[i])[first]);
        compared++;
    }
    CHECK_MSG(st || compared >= 2, "%s: %d time levels compared", op, compared);
    if (!st) {   /* the slabs tile the axis, and halos moved when there are neighbours */
        CHECK(rep.ranks == o->ranks && rep.lo[0] == 0 && rep.hi[o->ranks - 1] == shape[0]);
        for (int r = 1; r < o->ranks; r++) CHECK(rep.lo[r] == rep.hi[r - 1] && rep.hi[r] > rep.lo[r]);
        long exchanges = o->ranks > 1 && rep.depth > 0 ? (apps + o->exchange_every - 1) / o->exchange_every : 0;
        CHECK_MSG(rep.exchanges == exchanges, "%s: %ld exchanges, %ld expected", op, rep.exchanges, exchanges);
        CHECK(rep.messages >= (exchanges ? 2L * (o->ranks - 1) * o->halo_chunks * exchanges : 0));
    }
    fields_free(&whole);
    fields_free(&split);
}

static tess_split_options opts(int ranks, int overlap, int chunks, int every) {
    tess_split_options o = tess_split_options_default();
    o.ranks = ranks;
    o.overlap = overlap;
    o.halo_chunks = chunks;
    o.exchange_every = every;
    return o;
}

static void test_bit_for_bit(tess_context *ctx) {
    const int64_t heat[3] = {13, 10, 9};
    for (int ranks = 1; ranks <= 4; ranks++) {   /* 13 planes: 7+6, 5+4+4, 4+3+3+3 */
        tess_split_options o = opts(ranks, 1, 1, 1);
        check_split(ctx, "heat3d", heat, 3, 24, &o);
    }
    tess_split_options o = opts(3, 0, 1, 1);
    check_split(ctx, "heat3d", heat, 3, 24, &o);
    o = opts(3, 1, 3, 2);   /* chunked halos, two planes deep: exchanged every other application */
    check_split(ctx, "heat3d", heat, 3, 25, &o);
    o = opts(3, 0, 1, 4);
    check_split(ctx, "heat3d", heat, 3, 23, &o);

    const int64_t heat4[3] = {24, 8, 8};   /* four fused steps: halos of 4 planes, or 8 */
    o = opts(3, 1, 1, 1);
    check_split(ctx, "heat3d4", heat4, 3, 6, &o);
    o = opts(2, 1, 2, 2);
    check_split(ctx, "heat3d4", heat4, 3, 5, &o);

    const int64_t hd[3] = {7, 16, 16};   /* reaches 0 along z: nothing to exchange */
    o = opts(3, 1, 1, 1);
    check_split(ctx, "hdiff", hd, 3, 20, &o);
    const int64_t vc[3] = {11, 8, 8};
    check_split(ctx, "varcoef3d", vc, 3, 20, &o);
    const int64_t box[3] = {10, 8, 8};
    o = opts(2, 1, 1, 1);
    check_split(ctx, "box3d27", box, 3, 20, &o);
    const int64_t star[3] = {17, 10, 10};   /* radius 4: slabs of 9 and 8 */
    check_split(ctx, "star3d25", star, 3, 12, &o);
    const int64_t h2[2] = {20, 16};
    o = opts(3, 1, 2, 1);
    check_split(ctx, "heat2d", h2, 2, 30, &o);
}

typedef struct trace {
    int rank[256], event[256];
    long app[256];
    int n;
} trace;

static void record(int rank, int event, long app, void *user) {
    trace *t = user;
    if (t->n < 256) {
        t->rank[t->n] = rank;
        t->event[t->n] = event;
        t->app[t->n++] = app;
    }
}

/* Each application: every rank posts, computes its interior, waits, then
 * computes its boundary planes (one side for the first and last rank). */
static void test_order(tess_context *ctx) {
    const int64_t shape[3] = {13, 10, 9};
    fields f;
    fields_init(&f, "heat3d", shape, 3);
    trace t = {.n = 0};
    tess_split_options o = opts(3, 1, 1, 1);
    o.on_event = record;
    o.user = &t;
    CHECK_OK(tess_split_run(ctx, "heat3d", shape, 3, "f32", "cpu", &o, f.data, f.n, 2, NULL));
    static const int want[] = {TESS_SPLIT_POST, TESS_SPLIT_POST, TESS_SPLIT_POST, TESS_SPLIT_INTERIOR,
                               TESS_SPLIT_INTERIOR, TESS_SPLIT_INTERIOR, TESS_SPLIT_WAIT, TESS_SPLIT_WAIT,
                               TESS_SPLIT_WAIT, TESS_SPLIT_BOUNDARY, TESS_SPLIT_BOUNDARY, TESS_SPLIT_BOUNDARY,
                               TESS_SPLIT_BOUNDARY};
    static const int want_rank[] = {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 1, 2};
    int per = (int)(sizeof want / sizeof want[0]);
    CHECK_MSG(t.n == 2 * per, "%d events", t.n);
    for (int i = 0; i < t.n && i < 2 * per; i++)
        CHECK_MSG(t.event[i] == want[i % per] && t.rank[i] == want_rank[i % per] && t.app[i] == i / per,
                  "event %d: rank %d event %d application %ld", i, t.rank[i], t.event[i], t.app[i]);
    fields_free(&f);

    fields_init(&f, "heat3d", shape, 3);   /* without overlap: exchange, then whole slabs */
    t.n = 0;
    o.overlap = 0;
    CHECK_OK(tess_split_run(ctx, "heat3d", shape, 3, "f32", "cpu", &o, f.data, f.n, 1, NULL));
    static const int plain[] = {TESS_SPLIT_POST, TESS_SPLIT_POST, TESS_SPLIT_POST, TESS_SPLIT_WAIT, TESS_SPLIT_WAIT,
                                TESS_SPLIT_WAIT, TESS_SPLIT_WHOLE, TESS_SPLIT_WHOLE, TESS_SPLIT_WHOLE};
    CHECK(t.n == 9);
    for (int i = 0; i < t.n && i < 9; i++) CHECK(t.event[i] == plain[i]);
    fields_free(&f);
}

static void refused(const char *op, const int64_t *shape, int ndim, const char *backend, const tess_split_options *o,
                    const char *why) {
    tess_status st = tess_split_check(op, shape, ndim, backend, o, NULL);
    CHECK_MSG(st == TESS_ERR_ARG && strstr(tess_errmsg(), why), "%s: status %d, '%s' (wanted '%s')", op, st,
              tess_errmsg(), why);
}

static void test_refused(tess_context *ctx) {
    const int64_t shape[3] = {12, 8, 8}, star[3] = {17, 10, 10}, adv[2] = {32, 32}, n[1] = {1024};
    tess_split_options o = opts(2, 1, 1, 1);
    refused("heat3d", shape, 3, "rocm", &o, "cpu or the cuda backend, not 'rocm'");
    o.transport = "nccl";
    refused("heat3d", shape, 3, "cpu", &o, "transport 'nccl' on the cpu backend: it takes 'local'");
    o.transport = "local";
    refused("heat3d", shape, 3, "cuda", &o, "transport 'local' on the cuda backend: it takes 'nccl'");
    o.transport = NULL;
    setenv("CUDA_VISIBLE_DEVICES", "3", 1);
    refused("heat3d", shape, 3, "cuda", &o, "CUDA_VISIBLE_DEVICES lists 1 GPU for 2 ranks");
    unsetenv("CUDA_VISIBLE_DEVICES");
    tess_split_report rep;
    CHECK_OK(tess_split_check("heat3d", shape, 3, "cuda", &o, &rep));   /* no GPU needed to check */
    CHECK(strcmp(rep.transport, "nccl") == 0 && rep.depth == 1 && rep.hi[0] == 6);
    o = opts(0, 1, 1, 1);
    refused("heat3d", shape, 3, "cpu", &o, "1 to 64 ranks, not 0");
    o = opts(13, 1, 1, 1);
    refused("heat3d", shape, 3, "cpu", &o, "cannot split 12 planes along z into 13 slabs");
    o = opts(5, 1, 1, 1);
    refused("star3d25", star, 3, "cpu", &o, "the halo needs 4");
    o = opts(3, 1, 1, 8);   /* 8 applications between exchanges: halos of 8 in slabs of 4 */
    refused("heat3d", shape, 3, "cpu", &o, "the halo needs 8");
    o = opts(2, 1, 0, 1);
    refused("heat3d", shape, 3, "cpu", &o, "halo_chunks");
    o = opts(2, 1, 1, 1);
    refused("advect2d", adv, 2, "cpu", &o, "periodic");
    refused("sum", n, 1, "cpu", &o, "not a stencil");
    refused("heat3d", adv, 2, "cpu", &o, "3D stencil");
    fields f;
    fields_init(&f, "heat3d", shape, 3);
    CHECK(tess_split_run(ctx, "heat3d", shape, 3, "f32", "cpu", &o, f.data, f.n - 1, 1, NULL) == TESS_ERR_ARG &&
          strstr(tess_errmsg(), "takes 2 fields, 1 given"));
    fields_free(&f);
}

int main(void) {
    char dir[] = "/tmp/tess_split_XXXXXX", db[64];
    if (!mkdtemp(dir)) return 1;
    snprintf(db, sizeof db, "%s/records.db", dir);
    tess_context *ctx = NULL;
    CHECK_OK(tess_open(&ctx, db));
    if (ctx) {
        test_refused(ctx);
        test_bit_for_bit(ctx);
        test_order(ctx);
    }
    tess_close(ctx);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    return check_finish("test_split_run");
}
