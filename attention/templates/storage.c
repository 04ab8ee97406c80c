/* storage.c - the storage type of a generated C attention kernel and its
 * conversions to float: load_f32 widens, store_f32 rounds to nearest even
 * (bf16 keeps a NaN a NaN). Selected by STORAGE_F32, STORAGE_BF16 or
 * STORAGE_F16, defined above this text. */
#include <stdint.h>
#include <string.h>

#if defined(STORAGE_F32)
typedef float storage_t;
static inline float load_f32(const storage_t *p, long long i) { return p[i]; }
static inline void store_f32(storage_t *p, long long i, float v) { p[i] = v; }
#elif defined(STORAGE_BF16)
typedef uint16_t storage_t;
static inline float load_f32(const storage_t *p, long long i) {
    const uint32_t bits = (uint32_t)p[i] << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}
static inline void store_f32(storage_t *p, long long i, float v) {
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    bits = (bits & 0x7fffffffu) > 0x7f800000u ? 0x7fc00000u | (bits & 0x80000000u) : bits + 0x7fffu + ((bits >> 16) & 1u);
    p[i] = (uint16_t)(bits >> 16);
}
#elif defined(STORAGE_F16)
typedef _Float16 storage_t;
static inline float load_f32(const storage_t *p, long long i) { return (float)p[i]; }
static inline void store_f32(storage_t *p, long long i, float v) { p[i] = (_Float16)v; }
#else
#error "no STORAGE_ type defined"
#endif
