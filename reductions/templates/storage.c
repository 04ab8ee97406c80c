/* storage.c - the storage type of a generated C kernel and its conversions
 * to and from float (round to nearest even), selected by one of
 * STORAGE_F32, STORAGE_BF16 or STORAGE_F16 defined above this text. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(STORAGE_F32)
typedef float storage_t;
static inline float load_real(const storage_t *p, size_t i) { return p[i]; }
static inline void store_real(storage_t *p, size_t i, float v) { p[i] = v; }
#elif defined(STORAGE_BF16)
typedef uint16_t storage_t;   /* the upper half of a float */
static inline float load_real(const storage_t *p, size_t i) {
    uint32_t bits = (uint32_t)p[i] << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}
static inline void store_real(storage_t *p, size_t i, float v) {
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    if ((bits & 0x7fffffffu) > 0x7f800000u)
        bits = 0x7fc00000u | (bits & 0x80000000u);   /* a NaN stays a NaN */
    else
        bits += 0x7fffu + ((bits >> 16) & 1u);
    p[i] = (uint16_t)(bits >> 16);
}
#elif defined(STORAGE_F16)
typedef _Float16 storage_t;
static inline float load_real(const storage_t *p, size_t i) { return (float)p[i]; }
static inline void store_real(storage_t *p, size_t i, float v) { p[i] = (_Float16)v; }
#else
#error "no STORAGE_ type defined"
#endif
