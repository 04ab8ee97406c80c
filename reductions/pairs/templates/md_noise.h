/* md_noise.h - the Langevin thermostat's noise: a standard normal deviate
 * per (seed, step, component), from a counter-based hash (splitmix64's
 * finalizer) and the Box-Muller transform, so that every kernel and the
 * float64 reference draw the same numbers in any order. Included by the
 * library's reference and embedded in the generated C and CUDA kernels
 * (which define MD_FN first). */
#ifndef MD_FN
#define MD_FN static inline
#endif

MD_FN unsigned long long md_mix64(unsigned long long z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

MD_FN double md_noise(unsigned long long seed, unsigned long long step, unsigned long long k)
{
    const unsigned long long key = md_mix64(seed ^ md_mix64(step));
    const double ulp = 1.1102230246251565e-16;   /* 2^-53 */
    const double u1 = ((double)(md_mix64(key + 2 * k) >> 11) + 0.5) * ulp;
    const double u2 = (double)(md_mix64(key + 2 * k + 1) >> 11) * ulp;
    return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}
