/*
 * cache.c - where compiled kernels are kept, the keys that name them, and
 * keeping the cache in bounds. Backends write <cache>/cpu/<key>.so (with
 * its <key>.c) and <cache>/cuda/<key>.cubin, and touch a file when they
 * reuse it, so its modification time is its last use.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "backend.h"
#include "error.h"
#include "fsutil.h"

/* The folders the backends keep their binaries in. */
static const char *const kernel_dirs[] = {"cpu", "cuda"};

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

/* The cache directory's path, without creating it. */
static tess_status cache_path(char *buf, size_t len) {
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
    return TESS_OK;
}

tess_status tess_cache_dir(char *buf, size_t len) {
    tess_status st = cache_path(buf, len);
    return st ? st : tess_mkdir_p(buf);
}

tess_status tess_cache_check(void) {
    char dir[4096];
    tess_status st = tess_cache_dir(dir, sizeof dir);
    if (st) return tess_error_context(st, "the compile cache (TESSERA_CACHE, else XDG_CACHE_HOME or HOME)");
    if (access(dir, W_OK | X_OK) != 0)
        return tess_error(TESS_ERR_IO, "the compile cache %s is not writable (%s): set TESSERA_CACHE to a "
                          "directory you can write", dir, strerror(errno));
    return TESS_OK;
}

/* A kernel file: 32 hex digits (its key), then a dot and a suffix. Nothing
 * else in the folders is touched, whatever TESSERA_CACHE points at. */
static bool is_kernel_file(const char *name) {
    for (int i = 0; i < 32; i++)
        if (!name[i] || !strchr("0123456789abcdef", name[i])) return false;
    return name[32] == '.';
}

typedef struct cache_file {
    char path[4608];
    int64_t bytes;
    time_t used;
} cache_file;

typedef struct file_list {
    cache_file *v;
    size_t n, cap;
} file_list;

static tess_status list_dir(const char *dir, file_list *fl) {
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? TESS_OK : tess_error(TESS_ERR_IO, "cannot read %s: %s", dir, strerror(errno));
    tess_status st = TESS_OK;
    struct dirent *e;
    while (!st && (e = readdir(d))) {
        if (!is_kernel_file(e->d_name)) continue;
        if (fl->n == fl->cap) {
            size_t cap = fl->cap ? 2 * fl->cap : 256;
            cache_file *v = realloc(fl->v, cap * sizeof *v);
            if (!v) {
                st = tess_error(TESS_ERR_NOMEM, "listing the compile cache");
                break;
            }
            fl->v = v;
            fl->cap = cap;
        }
        cache_file *f = &fl->v[fl->n];
        snprintf(f->path, sizeof f->path, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (lstat(f->path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
        f->bytes = (int64_t)sb.st_size;
        f->used = sb.st_mtime;
        fl->n++;
    }
    closedir(d);
    return st;
}

/* Every kernel file of the cache, and its directory in dir. */
static tess_status list_cache(char *dir, size_t len, file_list *fl) {
    memset(fl, 0, sizeof *fl);
    tess_status st = cache_path(dir, len);
    for (size_t i = 0; !st && i < sizeof kernel_dirs / sizeof kernel_dirs[0]; i++) {
        char sub[4200];
        snprintf(sub, sizeof sub, "%s/%s", dir, kernel_dirs[i]);
        st = list_dir(sub, fl);
    }
    if (st) free(fl->v);
    return st;
}

static void add_up(const file_list *fl, size_t from, tess_cache_info *out) {
    for (size_t i = from; i < fl->n; i++) {
        out->files++;
        out->bytes += fl->v[i].bytes;
    }
}

tess_status tess_cache_info_get(tess_cache_info *out) {
    memset(out, 0, sizeof *out);
    file_list fl;
    tess_status st = list_cache(out->dir, sizeof out->dir, &fl);
    if (st) return st;
    add_up(&fl, 0, out);
    free(fl.v);
    return TESS_OK;
}

static int least_recent_first(const void *a, const void *b) {
    const cache_file *x = a, *y = b;
    return (x->used > y->used) - (x->used < y->used);
}

tess_status tess_cache_clean(int64_t keep_bytes, tess_cache_info *removed, tess_cache_info *kept) {
    tess_cache_info gone = {0}, left = {0};
    file_list fl;
    tess_status st = list_cache(gone.dir, sizeof gone.dir, &fl);
    if (st) return st;
    snprintf(left.dir, sizeof left.dir, "%s", gone.dir);
    add_up(&fl, 0, &left);
    qsort(fl.v, fl.n, sizeof *fl.v, least_recent_first);
    size_t i = 0;
    for (; i < fl.n && left.bytes > (keep_bytes > 0 ? keep_bytes : 0); i++) {
        if (unlink(fl.v[i].path) != 0 && errno != ENOENT) {
            st = tess_error(TESS_ERR_IO, "cannot remove %s: %s", fl.v[i].path, strerror(errno));
            break;
        }
        gone.files++;
        gone.bytes += fl.v[i].bytes;
        left.files--;
        left.bytes -= fl.v[i].bytes;
    }
    free(fl.v);
    if (removed) *removed = gone;
    if (kept) *kept = left;
    return st;
}
