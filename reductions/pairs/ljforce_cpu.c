/*
 * ljforce_cpu.c - C/OpenMP code generation for ljforce.
 *
 * Atoms are shared among threads (OpenMP schedule static or dynamic, in
 * chunks); each thread sums its atom's listed pairs. Tunables:
 *   threads     OpenMP threads
 *   schedule    static or dynamic distribution of the atoms
 *   chunk       atoms per scheduling unit
 *   simd        the pair loop as an `omp simd` reduction (gathered loads)
 *   precision   f32 data: "mixed" (f32 forces, energies and virials summed
 *               in f64) or "single" (all f32); f64 data: "double"
 */
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "core/strbuf.h"
#include "ljforce.h"
#include "reductions/cpu_common.h"

static const char *const prec_f32[] = {"mixed", "single"};
static const char *const prec_f64[] = {"double"};

tess_status tess_ljforce_cpu_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out) {
    (void)op;
    tess_space *s = tess_space_create();
    if (!s) return tess_error(TESS_ERR_NOMEM, "ljforce space");
    static const char *const schedules[] = {"static", "dynamic"};
    const double chunk[] = {16, 64, 256, 1024}, simd[] = {0, 1};
    tess_status st = tess_cpu_add_threads(s, dev);
    if (!st) st = tess_space_add_labels(s, "schedule", 2, schedules, 0);
    if (!st) st = tess_space_add(s, "chunk", 4, chunk, 1);
    if (!st) st = tess_space_add(s, "simd", 2, simd, 0);
    if (!st)
        st = t->dtype == TESS_F64 ? tess_space_add_labels(s, "precision", 1, prec_f64, 0)
                                  : tess_space_add_labels(s, "precision", 2, prec_f32, 0);
    if (st) {
        tess_space_destroy(s);
        return st;
    }
    *out = s;
    return TESS_OK;
}

tess_status tess_ljforce_cpu_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                                  const tess_config *c, tess_kernel_source *out) {
    (void)op;
    (void)dev;
    tess_lj_params p;
    tess_status st = tess_lj_params_get(t, &p);
    if (st) return st;
    const int threads = (int)tess_config_get(s, c, "threads");
    const bool dynamic = (int)tess_config_get(s, c, "schedule") == 1;
    const int chunk = (int)tess_config_get(s, c, "chunk");
    const bool simd = tess_config_get(s, c, "simd") > 0;
    const bool f64 = t->dtype == TESS_F64, single = !f64 && (int)tess_config_get(s, c, "precision") == 1;
    char config[512];
    st = tess_config_format(s, c, config, sizeof config);
    if (st) return st;
    const char *real = f64 ? "double" : "float";
    tess_strbuf b = {0};
    tess_strbuf_printf(&b,
        "/* ljforce: Lennard-Jones forces of %lld atoms over a neighbour list of width %lld (%s).\n"
        " * config: %s */\n"
        "#include <math.h>\n\n"
        "#define N %lldLL\n#define M %lldLL\n"
        "typedef %s real;\n"
        "typedef %s acc_t;   /* energy and virial sums */\n"
        "#define RC2 ((real)%.17g)\n#define ESHIFT ((real)%.17g)\n"
        "#define NBR(i, k) nbr[%s]\n\n"
        "void tess_ljforce(void *const *buffers, const void *const *scalars) {\n"
        "    const real *restrict pos = buffers[0];\n"
        "    const int *restrict nbr = buffers[1];\n"
        "    const int *restrict count = buffers[2];\n"
        "    real *restrict force = buffers[3];\n"
        "    double *restrict ev = buffers[4];\n"
        "    const real box = (real)*(const double *)scalars[0], inv_box = (real)1 / box;\n"
        "    #pragma omp parallel for num_threads(%d) schedule(%s, %d)\n"
        "    for (long long i = 0; i < N; i++) {\n"
        "        const real xi = pos[4 * i], yi = pos[4 * i + 1], zi = pos[4 * i + 2];\n"
        "        real fx = 0, fy = 0, fz = 0;\n"
        "        acc_t e = 0, w = 0;\n"
        "        const int n = count[i];\n",
        p.n, p.m, tess_dtype_name(t->dtype), config, p.n, p.m, real, single || f64 ? real : "double",
        p.rc * p.rc, tess_lj_energy_shift(&p), p.cols ? "(k) * N + (i)" : "(i) * M + (k)", threads,
        dynamic ? "dynamic" : "static", chunk);
    if (simd) tess_strbuf_puts(&b, "        #pragma omp simd reduction(+:fx, fy, fz, e, w)\n");
    tess_strbuf_puts(&b,
        "        for (int k = 0; k < n; k++) {\n"
        "            const long long j = NBR(i, k);\n"
        "            real dx = xi - pos[4 * j], dy = yi - pos[4 * j + 1], dz = zi - pos[4 * j + 2];\n"
        "            /* the minimum image; the box is at least twice the list radius */\n"
        "            dx -= box * nearbyint(dx * inv_box);\n"
        "            dy -= box * nearbyint(dy * inv_box);\n"
        "            dz -= box * nearbyint(dz * inv_box);\n"
        "            const real r2 = dx * dx + dy * dy + dz * dz;\n"
        "            const real inside = r2 < RC2 ? (real)1 : (real)0;\n"
        "            const real ir2 = inside / (r2 + ((real)1 - inside));   /* 0 outside the cut-off */\n"
        "            const real ir6 = ir2 * ir2 * ir2;\n"
        "            const real fr = (real)24 * ir6 * ((real)2 * ir6 - (real)1) * ir2;\n"
        "            fx += fr * dx;\n"
        "            fy += fr * dy;\n"
        "            fz += fr * dz;\n"
        "            e += (acc_t)(inside * ((real)4 * ir6 * (ir6 - (real)1) - ESHIFT));\n"
        "            w += (acc_t)(fr * r2);\n"
        "        }\n"
        "        force[3 * i] = fx;\n"
        "        force[3 * i + 1] = fy;\n"
        "        force[3 * i + 2] = fz;\n"
        "        ev[2 * i] = 0.5 * (double)e;\n"
        "        ev[2 * i + 1] = 0.5 * (double)w;\n"
        "    }\n"
        "}\n");
    memset(out, 0, sizeof *out);
    st = tess_strbuf_finish(&b, &out->code);
    if (!st) st = tess_kernel_source_add_scalar(out, "box", TESS_SCALAR_F64, tess_lj_box(&p));
    if (st) return st;
    out->nlaunches = 1;
    strcpy(out->launch[0].entry, "tess_ljforce");
    return TESS_OK;
}
