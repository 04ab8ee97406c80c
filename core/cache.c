/* cache.c - where compiled kernels are kept, and the keys that name them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "backend.h"
#include "error.h"
#include "fsutil.h"

/* Two independent 64-bit FNV-1a streams: a 128-bit name, so collisions
 * between cached kernels are not a practical concern. */
void tess_cache_key(const char *const *parts, int n, char out[33]) {
    uint64_t h1 = 0xcbf29ce484222325ULL, h2 = 0x84222325cbf29ce4ULL;
    for (int i = 0; i < n; i++) {
        for (const unsigned char *p = (const unsigned char *)parts[i]; *p; p++) {
            h1 = (h1 ^ *p) * 0x100000001b3ULL;
            h2 = (h2 ^ *p) * 0x100000001b3ULL ^ (h2 >> 29);
        }
        /* a separator, so ("ab","c") and ("a","bc") differ */
        h1 = (h1 ^ 0xff) * 0x100000001b3ULL;
        h2 = (h2 ^ 0xfe) * 0x100000001b3ULL ^ (h2 >> 29);
    }
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)h1, (unsigned long long)h2);
}

tess_status tess_cache_dir(char *buf, size_t len) {
    const char *env = getenv("TESSERA_CACHE");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int w;
    if (env && *env)
        w = snprintf(buf, len, "%s", env);
    else if (xdg && *xdg)
        w = snprintf(buf, len, "%s/tessera", xdg);
    else if (home && *home)
        w = snprintf(buf, len, "%s/.cache/tessera", home);
    else
        return tess_error(TESS_ERR_IO, "no cache directory: set TESSERA_CACHE or HOME");
    if (w < 0 || (size_t)w >= len) return tess_error(TESS_ERR_IO, "cache directory path too long");
    return tess_mkdir_p(buf);
}
