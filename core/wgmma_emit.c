/*
 * wgmma_emit.c - generates the device function of one wgmma.mma_async shape
 * (wgmma_emit.h).
 */
#include "wgmma_emit.h"

int tess_wgmma_k(tess_dtype in) { return in == TESS_E4M3 ? 32 : 16; }

void tess_wgmma_emit(tess_strbuf *b, const tess_wgmma_shape *w) {
    const bool fp8 = w->in == TESS_E4M3;
    const char *ty = w->in == TESS_F16 ? "f16" : fp8 ? "e4m3" : "bf16";
    const int nd = w->n / 2, na = w->a_registers ? 4 : 1;
    /* operands: d[0..nd), a (1 or 4), b, scale_d */
    const int opb = nd + na, opscale = opb + 1;
    tess_strbuf_printf(b, "__device__ __forceinline__ void %s(float (&d)[%d], %s, unsigned long long b, int scale_d)\n",
                       w->name, nd, w->a_registers ? "const unsigned (&a)[4]" : "unsigned long long a");
    tess_strbuf_printf(b, "{\n    asm volatile(\"{ .reg .pred p; setp.ne.b32 p, %%%d, 0; "
                       "wgmma.mma_async.sync.aligned.m64n%dk%d.f32.%s.%s {", opscale, w->n, tess_wgmma_k(w->in), ty, ty);
    for (int i = 0; i < nd; i++) tess_strbuf_printf(b, "%s%%%d", i ? ", " : "", i);
    /* the operands' transpose flags exist for 16-bit inputs only: fp8 operands are K-major */
    if (w->a_registers)
        tess_strbuf_printf(b, "}, {%%%d, %%%d, %%%d, %%%d}, %%%d, p, 1, 1", nd, nd + 1, nd + 2, nd + 3, opb);
    else
        tess_strbuf_printf(b, "}, %%%d, %%%d, p, 1, 1", nd, opb);
    if (!fp8) {
        if (w->a_registers) tess_strbuf_printf(b, ", %d", w->b_mn_major);
        else tess_strbuf_printf(b, ", 0, %d", w->b_mn_major);
    }
    tess_strbuf_puts(b, "; }\"\n                 : ");
    for (int i = 0; i < nd; i++) tess_strbuf_printf(b, "%s\"+f\"(d[%d])", i ? ", " : "", i);
    if (w->a_registers)
        tess_strbuf_puts(b, "\n                 : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(b), "
                            "\"r\"(scale_d));\n}\n\n");
    else
        tess_strbuf_puts(b, "\n                 : \"l\"(a), \"l\"(b), \"r\"(scale_d));\n}\n\n");
}
