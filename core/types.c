/* types.c - dtype and outcome names, the monotonic clock. */
#include <math.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include "error.h"
#include "types.h"

static const struct {
    const char *name;
    size_t size;
} dtype_info[TESS_DTYPE_COUNT] = {
    [TESS_F16] = {"f16", 2}, [TESS_BF16] = {"bf16", 2}, [TESS_F32] = {"f32", 4},
    [TESS_F64] = {"f64", 8}, [TESS_I32] = {"i32", 4}, [TESS_E4M3] = {"e4m3", 1},
    [TESS_U8] = {"u8", 1},
};

const char *tess_dtype_name(tess_dtype t) {
    return (unsigned)t < TESS_DTYPE_COUNT ? dtype_info[t].name : "?";
}

size_t tess_dtype_size(tess_dtype t) {
    return (unsigned)t < TESS_DTYPE_COUNT ? dtype_info[t].size : 0;
}

tess_status tess_dtype_parse(const char *text, tess_dtype *out) {
    static const struct {
        const char *alias;
        tess_dtype t;
    } aliases[] = {
        {"f16", TESS_F16},     {"fp16", TESS_F16},    {"half", TESS_F16},   {"float16", TESS_F16},
        {"bf16", TESS_BF16},   {"bfloat16", TESS_BF16}, {"f32", TESS_F32},  {"fp32", TESS_F32},
        {"float", TESS_F32},   {"float32", TESS_F32}, {"f64", TESS_F64},    {"fp64", TESS_F64},
        {"double", TESS_F64},  {"float64", TESS_F64}, {"i32", TESS_I32},    {"int32", TESS_I32},
        {"e4m3", TESS_E4M3},   {"fp8", TESS_E4M3},    {"float8_e4m3fn", TESS_E4M3},
        {"u8", TESS_U8},       {"uint8", TESS_U8},
    };
    if (!text) return tess_error(TESS_ERR_ARG, "missing dtype");
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcasecmp(text, aliases[i].alias) == 0) {
            *out = aliases[i].t;
            return TESS_OK;
        }
    return tess_error(TESS_ERR_ARG, "unknown dtype '%s' (expected f16, bf16, f32, f64, i32, e4m3 or u8)", text);
}

static const char *const outcome_names[TESS_OUTCOME_COUNT] = {
    [TESS_RESULT_OK] = "ok",
    [TESS_RESULT_COMPILE_ERROR] = "compile_error",
    [TESS_RESULT_RUNTIME_ERROR] = "runtime_error",
    [TESS_RESULT_WRONG_RESULT] = "wrong_result",
    [TESS_RESULT_TIMEOUT] = "timeout",
    [TESS_RESULT_INVALID] = "invalid",
};

const char *tess_outcome_name(tess_outcome o) {
    return (unsigned)o < TESS_OUTCOME_COUNT ? outcome_names[o] : "?";
}

tess_status tess_outcome_parse(const char *text, tess_outcome *out) {
    for (int i = 0; i < TESS_OUTCOME_COUNT; i++)
        if (text && strcasecmp(text, outcome_names[i]) == 0) {
            *out = (tess_outcome)i;
            return TESS_OK;
        }
    return tess_error(TESS_ERR_FORMAT, "unknown result status '%s'", text ? text : "(null)");
}

double tess_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* IEEE half precision <-> float, round to nearest even. */
static float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0x1f)
        bits = sign | 0x7f800000u | (man << 13);
    else if (exp != 0)
        bits = sign | ((exp + 112) << 23) | (man << 13);
    else if (man == 0)
        bits = sign;
    else {   /* subnormal half: normalize */
        int e = -1;
        do {
            e++;
            man <<= 1;
        } while (!(man & 0x400));
        bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ff) << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint16_t float_to_half(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000;
    int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
    uint32_t man = x & 0x7fffff;
    if (((x >> 23) & 0xff) == 0xff) return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
    if (exp >= 0x1f) return (uint16_t)(sign | 0x7c00);
    if (exp <= 0) {
        if (exp < -10) return (uint16_t)sign;
        man |= 0x800000;
        uint32_t shift = (uint32_t)(14 - exp);
        uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = sign | ((uint32_t)exp << 10) | (man >> 13), rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) half++;
    return (uint16_t)half;
}

/* fp8 e4m3 (the "fn" variant: S.1111.111 is NaN, no infinities) <-> double. */
static double e4m3_to_double(uint8_t v) {
    const int exp = (v >> 3) & 0xf, man = v & 7;
    const double mag = exp == 0xf && man == 7 ? NAN : exp ? ldexp(1.0 + man / 8.0, exp - 7) : ldexp(man, -9);
    return v & 0x80 ? -mag : mag;
}

/* Round to nearest even; beyond the largest finite value (448) saturates, as conversions for training do. */
static uint8_t double_to_e4m3(double v) {
    if (isnan(v)) return 0x7f;
    const uint8_t sign = signbit(v) ? 0x80 : 0;
    const double a = fabs(v);
    if (a >= 448) return sign | 0x7e;
    int e;
    frexp(a, &e);                                    /* a = f 2^e, f in [0.5, 1) */
    const int exp = e - 1 < -6 ? -6 : e - 1;         /* subnormals share the exponent of the smallest normal */
    const double steps = nearbyint(ldexp(a, 3 - exp));   /* a in units of the mantissa's last bit */
    if (steps == 0) return sign;
    if (exp == -6 && steps < 8) return sign | (uint8_t)steps;
    /* a carry to 16 steps moves to the next exponent */
    const int biased = exp + 7 + (steps >= 16), man = steps >= 16 ? 0 : (int)steps - 8;
    return sign | (uint8_t)(biased << 3 | man);
}

double tess_dtype_load(const void *base, tess_dtype t, int64_t i) {
    switch (t) {
    case TESS_F32: return ((const float *)base)[i];
    case TESS_F64: return ((const double *)base)[i];
    case TESS_I32: return ((const int32_t *)base)[i];
    case TESS_F16: return half_to_float(((const uint16_t *)base)[i]);
    case TESS_E4M3: return e4m3_to_double(((const uint8_t *)base)[i]);
    case TESS_U8: return ((const uint8_t *)base)[i];
    case TESS_BF16: {
        uint32_t bits = (uint32_t)((const uint16_t *)base)[i] << 16;
        float f;
        memcpy(&f, &bits, sizeof f);
        return f;
    }
    default: return NAN;
    }
}

void tess_dtype_store(void *base, tess_dtype t, int64_t i, double v) {
    switch (t) {
    case TESS_F32: ((float *)base)[i] = (float)v; break;
    case TESS_F64: ((double *)base)[i] = v; break;
    case TESS_I32: ((int32_t *)base)[i] = (int32_t)lrint(v); break;
    case TESS_F16: ((uint16_t *)base)[i] = float_to_half((float)v); break;
    case TESS_E4M3: ((uint8_t *)base)[i] = double_to_e4m3(v); break;
    case TESS_U8: ((uint8_t *)base)[i] = (uint8_t)lrint(v < 0 ? 0 : v > 255 ? 255 : v); break;
    case TESS_BF16: {
        float f = (float)v;
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        if ((bits & 0x7fffffff) > 0x7f800000)
            bits = 0x7fc00000 | (bits & 0x80000000);   /* keep NaN a NaN */
        else
            bits += 0x7fff + ((bits >> 16) & 1);       /* round to nearest even */
        ((uint16_t *)base)[i] = (uint16_t)(bits >> 16);
        break;
    }
    default: break;
    }
}
