/*
 * test_stencil_spec.c - the stencil format: every library file parses and
 * round-trips through the printer; the C API builds the same spec as the
 * text; malformed text fails with "file:line:col: message"; the library
 * directory and the copy embedded in the binary hold the same stencils.
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/error.h"
#include "stencils/family.h"
#include "stencils/spec.h"

static tess_spec *parse(const char *text, const char *file) {
    tess_spec *s = NULL;
    tess_status st = tess_spec_parse(text, strlen(text), file, &s);
    CHECK_MSG(st == TESS_OK, "%s: %s", file, tess_errmsg());
    return s;
}

static char *format(const tess_spec *s) {
    char *text = NULL;
    CHECK_OK(tess_spec_format(s, &text));
    return text;
}

/* Text -> spec -> text -> spec -> text: the two texts agree, and so do the analyses. */
static void check_round_trip(const char *text, const char *file) {
    tess_spec *a = parse(text, file);
    if (!a) return;
    char *t1 = format(a);
    tess_spec *b = t1 ? parse(t1, "printed") : NULL;
    char *t2 = b ? format(b) : NULL;
    CHECK_MSG(t1 && t2 && strcmp(t1, t2) == 0, "%s does not round-trip:\n%s\n---\n%s", file, t1, t2);
    if (b) {
        CHECK(a->ninst == b->ninst && a->nstmts == b->nstmts && a->nfields == b->nfields);
        CHECK(memcmp(a->lo, b->lo, sizeof a->lo) == 0 && memcmp(a->hi, b->hi, sizeof a->hi) == 0);
    }
    free(t1);
    free(t2);
    tess_spec_destroy(a);
    tess_spec_destroy(b);
}

static void check_library(void) {
    for (int i = 0; i < tess_stencils_builtin_count(); i++)
        check_round_trip(tess_stencils_builtin_text(i), tess_stencils_builtin_file(i));
    /* Every file of the library directory is embedded, and nothing else. */
    CHECK_OK(tess_stencils_register_library(TESS_SOURCE_DIR "/stencils/templates"));
    const char *names[] = {"heat2d", "heat3d", "heat3d4", "box3d27", "star3d25", "varcoef3d", "hdiff", "advect2d"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const tess_op *op = tess_stencils_op(names[i]);
        CHECK_MSG(op && strcmp(op->family, "stencils") == 0, "%s is not registered", names[i]);
        CHECK_MSG(tess_op_find(names[i]) != NULL, "%s is not in the registry", names[i]);
    }
    CHECK(tess_stencils_builtin_count() == (int)(sizeof names / sizeof names[0]));
    CHECK_OK(tess_stencils_register_builtin());   /* names already known: skipped */
    const tess_spec *hdiff = tess_stencils_spec("hdiff");
    CHECK(hdiff && hdiff->rank == 3 && hdiff->lo[1] == 2 && hdiff->hi[2] == 2 && hdiff->lo[0] == 0);
    CHECK(hdiff && tess_spec_periodic(hdiff, 2) && !tess_spec_periodic(hdiff, 1));
    const tess_spec *star = tess_stencils_spec("star3d25");
    CHECK(star && star->lo[0] == 4 && star->hi[2] == 4);
    CHECK(tess_stencils_register_library("/nonexistent/stencils") == TESS_ERR_IO);
}

/* hdiff through the C API gives the spec the library file gives. */
static void check_c_api(void) {
    tess_spec *s = NULL;
    CHECK_OK(tess_spec_create("hdiff", &s));
    if (!s) return;
    CHECK_OK(tess_spec_set_summary(s, "COSMO horizontal diffusion: Laplacian, limited fluxes, update"));
    CHECK_OK(tess_spec_set_grid(s, (const int64_t[]){80, 256, 256}, 3));
    CHECK_OK(tess_spec_set_halo(s, 2));
    CHECK_OK(tess_spec_set_periodic(s, 'x'));
    CHECK_OK(tess_spec_add_field(s, "u", TESS_TYPE_REAL, 0, TESS_FIELD_IN));
    CHECK_OK(tess_spec_add_field(s, "coeff", TESS_TYPE_REAL, 0, TESS_FIELD_COEF));
    CHECK_OK(tess_spec_set_range(s, "coeff", 0, 0.025));
    CHECK_OK(tess_spec_add_field(s, "u_out", TESS_TYPE_REAL, 0, TESS_FIELD_OUT));
    CHECK_OK(tess_spec_set_advances(s, "u_out", "u"));
    const int xp[] = {0, 0, 1}, xm[] = {0, 0, -1}, yp[] = {0, 1, 0}, ym[] = {0, -1, 0}, *centre = NULL;
#define REF(name, off) ((off) == centre ? tess_expr_ref(name, 0, NULL) : tess_expr_ref(name, 3, off))
    tess_expr *lap = tess_expr_bin(
        TESS_BIN_SUB,
        tess_expr_bin(TESS_BIN_ADD,
                      tess_expr_bin(TESS_BIN_ADD, tess_expr_bin(TESS_BIN_ADD, REF("u", xp), REF("u", xm)), REF("u", yp)),
                      REF("u", ym)),
        tess_expr_bin(TESS_BIN_MUL, tess_expr_num(4), REF("u", centre)));
    CHECK_OK(tess_spec_add_statement(s, "lap", lap));
    const char *axis_raw[] = {"flx_raw", "fly_raw"}, *axis_lim[] = {"flx", "fly"};
    const int *plus[] = {xp, yp};
    for (int a = 0; a < 2; a++) {
        CHECK_OK(tess_spec_add_statement(s, axis_raw[a], tess_expr_bin(TESS_BIN_SUB, REF("lap", plus[a]), REF("lap", centre))));
        tess_expr *args[3] = {
            tess_expr_bin(TESS_BIN_GT,
                          tess_expr_bin(TESS_BIN_MUL, REF(axis_raw[a], centre),
                                        tess_expr_bin(TESS_BIN_SUB, REF("u", plus[a]), REF("u", centre))),
                          tess_expr_num(0)),
            tess_expr_num(0), REF(axis_raw[a], centre)};
        CHECK_OK(tess_spec_add_statement(s, axis_lim[a], tess_expr_call(TESS_FN_SELECT, 3, args)));
    }
    tess_expr *div = tess_expr_bin(
        TESS_BIN_SUB,
        tess_expr_bin(TESS_BIN_ADD, tess_expr_bin(TESS_BIN_SUB, REF("flx", centre), REF("flx", xm)), REF("fly", centre)),
        REF("fly", ym));
    CHECK_OK(tess_spec_add_statement(s, "u_out", tess_expr_bin(TESS_BIN_SUB, REF("u", centre),
                                                               tess_expr_bin(TESS_BIN_MUL, REF("coeff", centre), div))));
#undef REF
    CHECK_OK(tess_spec_finish(s));
    const char *file = NULL;
    for (int i = 0; i < tess_stencils_builtin_count(); i++)
        if (strcmp(tess_stencils_builtin_file(i), "hdiff.stencil") == 0) file = tess_stencils_builtin_text(i);
    tess_spec *parsed = file ? parse(file, "hdiff.stencil") : NULL;
    char *a = format(s), *b = parsed ? format(parsed) : NULL;
    CHECK_MSG(a && b && strcmp(a, b) == 0, "C API:\n%s\n--- parsed:\n%s", a ? a : "(none)", b ? b : "(none)");
    CHECK(parsed && parsed->ninst == s->ninst);

    /* Misuse of the C API fails with a message and leaks nothing. */
    CHECK(tess_spec_add_field(s, "w", TESS_TYPE_REAL, 0, TESS_FIELD_IN) == TESS_ERR_ARG);   /* finished */
    CHECK(tess_expr_call(TESS_FN_MIN, 1, (tess_expr *[]){tess_expr_num(1)}) == NULL);
    CHECK(strstr(tess_errmsg(), "min takes 2 arguments, not 1") != NULL);
    CHECK(tess_expr_bin(TESS_BIN_ADD, tess_expr_num(1), NULL) == NULL);
    free(a);
    free(b);
    tess_spec_destroy(s);
    tess_spec_destroy(parsed);
    CHECK(tess_spec_create("2bad", &s) == TESS_ERR_ARG && !s);

    tess_spec *t = NULL;
    CHECK_OK(tess_spec_create("api", &t));
    CHECK_OK(tess_spec_set_grid(t, (const int64_t[]){8, 8}, 2));
    CHECK_OK(tess_spec_add_field(t, "u", TESS_TYPE_F64, 0, TESS_FIELD_IN));
    CHECK(tess_spec_add_field(t, "u", TESS_TYPE_REAL, 0, TESS_FIELD_OUT) == TESS_ERR_FORMAT);
    CHECK_MSG(strstr(tess_errmsg(), "stencil 'api': 'u' is already defined") != NULL, "%s", tess_errmsg());
    CHECK(tess_spec_add_statement(t, "v", NULL) != TESS_OK);
    CHECK(tess_spec_finish(t) == TESS_ERR_FORMAT);
    CHECK_MSG(strstr(tess_errmsg(), "stencil 'api': no output field") != NULL, "%s", tess_errmsg());
    tess_spec_destroy(t);
}

/* Malformed text and the message it must give. */
static const struct {
    const char *text;
    const char *message;
} bad[] = {
    {"grid 8x8\n", "bad.stencil:1:1: expected 'stencil NAME' first but found 'grid'"},
    {"stencil a\nfield u in\nfield v out\nv = u\n", "bad.stencil: missing 'grid' declaration"},
    {"stencil a\ngrid 8x8\nfield u in\nfield v out\nv = u + w\n", "bad.stencil:5:9: unknown name 'w'"},
    {"stencil a\ngrid 8x8\nfield u in\nfield v out\nv = u[0,0,1]\n", "bad.stencil:5:5: 'u' is 2D and takes 2 offsets, not 3"},
    {"stencil a\ngrid 8x8\nfield u in\nfield v out\nv = u $ 1\n", "bad.stencil:5:7: unexpected character '$'"},
    {"stencil a \"summary\ngrid 8x8\n", "bad.stencil:1:11: unterminated string"},
    {"stencil a\ngrid 8x8\nhalo 2\nfield u in\nfield v out\nv = u[0,1]\n",
     "bad.stencil:3:6: halo 2 is declared but the update reaches 1 point (along x)"},
    {"stencil a\ngrid 8x8\nfield x in\n", "bad.stencil:3:7: 'x' is a reserved word and cannot name a field"},
    {"stencil a\ngrid 8x8\nfield u in\nfield u out\n", "bad.stencil:4:7: 'u' is already defined"},
    {"stencil a\ngrid 8x8\nfield u in\nfield v out\nt = u\nv = u\n", "bad.stencil:5:1: intermediate 't' is never used"},
    {"stencil a\ngrid 8x8\nfield u in\nfield v out\nv = t\nt = u\n", "bad.stencil:5:5: 't' is used before it is defined"},
    {"stencil a\ngrid 8x8\nfield u in\nfield v out\nv = select(u, 1)\n", "bad.stencil:5:5: select takes 3 arguments, not 2"},
    {"stencil a\ngrid 8x8\nfield u in\nfield v out\nv = foo(u)\n", "bad.stencil:5:5: unknown function 'foo'"},
    {"stencil a\ngrid 8x8\nfield u in\nfield v out\nv = 2d\n", "bad.stencil:5:5: malformed number '2d'"},
    {"stencil a\ngrid 8x\n", "bad.stencil:2:6: expected a 2D or 3D shape such as 256x256x256"},
    {"stencil a\ngrid 8x8\nfield u in\nfield v out\nv = u[0,9]\n", "bad.stencil:5:9: offset 9 is not between -8 and 8"},
    {"stencil a\ngrid 8x8\nfield u in\nfield v out\nv = u[0,-99]\n", "bad.stencil:5:10: offset -99 is not between -8 and 8"},
    {"stencil a\ngrid 8x8\nsteps 2\nfield u in\nfield v out\nv = u\n",
     "bad.stencil:5:7: with steps > 1 every output must advance an input ('v' advances none)"},
    {"stencil a\ngrid 8x8\nboundary periodic z\nfield u in\nfield v out\nv = u\n",
     "bad.stencil: a 2D grid has no z axis to make periodic"},
    {"stencil a\ngrid 8x8\nfield u in foo\n", "bad.stencil:3:12: expected 'advances', 'range' or end of line but found 'foo'"},
    {"stencil a\ngrid 8x8\nfield u in\nparam p = u * 2\n",
     "bad.stencil:4:11: a parameter's value may use only numbers and parameters declared before it ('u' is none)"},
    {"stencil a\ngrid 8x8\nfield u in\nfield v out\nv = u\nu = v\n", "bad.stencil:6:1: 'u' is an input field and cannot be assigned"},
    {"stencil a\ngrid 8x8\nfield u in\nfield v out\nfield w out\nv = u\nw = v\n",
     "bad.stencil:7:5: output field 'v' cannot be read"},
    {"stencil a\ngrid 8x8\nfield u in\nfield v out\nv = (u\n", "bad.stencil:6:1: expected ')' but found end of file"},
    {"stencil a\ngrid 8x8\nfield u in\nfield v out\nv = u u\n", "bad.stencil:5:7: expected end of line but found 'u'"},
    {"stencil a\ngrid 8x8\nfield u 3d in\n", "bad.stencil:3:7: field 'u' is 3D but the grid is 2D"},
    {"stencil a\ngrid 8x8\nfield u in\nfield v out advances w\nv = u\n", "bad.stencil:4:7: 'v' advances unknown field 'w'"},
    {"stencil a\ngrid 8x8\ngrid 8x8\n", "bad.stencil:3:1: 'grid' is declared twice"},
    {"stencil a\ngrid 8x8\nfield u in range 1 0\n", "bad.stencil:3:12: a range needs finite bounds with low <= high"},
    {"stencil a\ngrid 8x8\nfield u in\nfield v out\nv = u\nstencil b\n", "bad.stencil:6:1: 'stencil' may appear only once"},
    {"stencil a\ngrid 8x8\nfield u in\nfield v out\nv = 1e999\n", "bad.stencil:5:5: number out of range"},
    {"stencil a\ngrid 8x8\nfield lap__x in\n", "bad.stencil:3:7: invalid field name 'lap__x'"},
};

static void check_errors(void) {
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tess_spec *s = NULL;
        tess_status st = tess_spec_parse(bad[i].text, strlen(bad[i].text), "bad.stencil", &s);
        CHECK_MSG(st == TESS_ERR_FORMAT && !s, "case %zu parsed", i);
        CHECK_MSG(strstr(tess_errmsg(), bad[i].message) != NULL, "case %zu: got \"%s\", want \"%s\"", i, tess_errmsg(),
                  bad[i].message);
        tess_spec_destroy(s);
    }
    /* A stray NUL byte, and nesting beyond the limit. */
    const char nul[] = "stencil a\ngrid 8x8\0\n";
    tess_spec *s = NULL;
    CHECK(tess_spec_parse(nul, sizeof nul - 1, "nul.stencil", &s) == TESS_ERR_FORMAT);
    CHECK_MSG(strstr(tess_errmsg(), "nul.stencil:2:9: unexpected byte 0x00") != NULL, "%s", tess_errmsg());
    char deep[1200] = "stencil a\ngrid 8x8\nfield u in\nfield v out\nv = ";
    size_t n = strlen(deep);
    for (int i = 0; i < 500; i++) deep[n++] = '(';
    deep[n++] = 'u';
    deep[n] = '\0';
    CHECK(tess_spec_parse(deep, n, "deep.stencil", &s) == TESS_ERR_FORMAT);
    CHECK_MSG(strstr(tess_errmsg(), "nested too deeply") != NULL, "%s", tess_errmsg());
    CHECK(tess_spec_load("/nonexistent.stencil", &s) == TESS_ERR_IO && !s);
}

/* What the parser accepts beyond the library's files. */
static void check_features(void) {
    const char *text =
        "# a comment line\n\n"
        "stencil feat \"features\"   # trailing comment\n"
        "grid 4x5x6\n"
        "boundary periodic y x\n"
        "steps 2\n"
        "field u f64 in\n"
        "field s f32 2d coef range -2 0.5\n"
        "field v f64 out advances u\n"
        "param a = -(1 + 2) / 4\n"
        "param b = max(a, 2 * a) + sqrt(4) - abs(-1)\n"
        "t = (u[1,0,0]\n"
        "     + u[0,-1,+1])\n"
        "v = select(!(t >= a) || s[0,1] != 0 && t <= b, min(t, s), -t) / 2\n";
    tess_spec *s = parse(text, "feat.stencil");
    if (!s) return;
    CHECK(s->steps == 2 && s->periodic_xyz == 3 && s->field[1].rank == 2 && s->field[1].type == TESS_TYPE_F32);
    CHECK(s->field[1].fill_lo == -2 && s->field[1].fill_hi == 0.5);
    CHECK(s->param[0].value == -0.75 && s->param[1].value == -0.75 + 2 - 1);
    CHECK(s->lo[0] == 0 && s->hi[0] == 1 && s->lo[1] == 1 && s->hi[2] == 1);
    CHECK(tess_spec_nbuffers(s) == 4);
    tess_spec_destroy(s);
    check_round_trip(text, "feat.stencil");
}

int main(void) {
    check_library();
    check_c_api();
    check_errors();
    check_features();
    return check_finish("test_stencil_spec");
}
