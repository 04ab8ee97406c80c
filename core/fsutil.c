/* fsutil.c - small file-system helpers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "error.h"
#include "fsutil.h"

tess_status tess_mkdir_p(const char *path) {
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp)
        return tess_error(TESS_ERR_IO, "path too long: %s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
            return tess_error(TESS_ERR_IO, "cannot create directory %s: %s", tmp, strerror(errno));
        *p = '/';
    }
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
        return tess_error(TESS_ERR_IO, "cannot create directory %s: %s", tmp, strerror(errno));
    struct stat sb;
    if (stat(tmp, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return tess_error(TESS_ERR_IO, "%s exists and is not a directory", tmp);
    return TESS_OK;
}

tess_status tess_read_file(const char *path, char **data, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return tess_error(TESS_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 65536 + 1 > cap) {
            cap = cap ? cap * 2 : 65536 * 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return tess_error(TESS_ERR_NOMEM, "reading %s: out of memory", path);
            }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        return tess_error(TESS_ERR_IO, "error reading %s", path);
    }
    buf[n] = '\0';
    *data = buf;
    if (size) *size = n;
    return TESS_OK;
}

tess_status tess_write_file_atomic(const char *path, const void *data, size_t size) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) return tess_error(TESS_ERR_IO, "cannot write %s: %s", tmp, strerror(errno));
    size_t put = fwrite(data, 1, size, f);
    int err = fclose(f);
    if (put != size || err) {
        unlink(tmp);
        return tess_error(TESS_ERR_IO, "cannot write %s", tmp);
    }
    if (rename(tmp, path) != 0) {
        unlink(tmp);
        return tess_error(TESS_ERR_IO, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
    }
    return TESS_OK;
}

tess_status tess_output_check(const char *path) {
    if (!path || !*path) return tess_error(TESS_ERR_IO, "no output path");
    struct stat info;
    if (stat(path, &info) == 0) {
        if (S_ISDIR(info.st_mode)) return tess_error(TESS_ERR_IO, "cannot write %s: it is a directory", path);
        if (!S_ISREG(info.st_mode)) return tess_error(TESS_ERR_IO, "cannot write %s: not a regular file", path);
        if (access(path, W_OK) != 0) return tess_error(TESS_ERR_IO, "cannot write %s: %s", path, strerror(errno));
        return TESS_OK;
    }
    if (errno != ENOENT) return tess_error(TESS_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    /* a new file: its directory must exist and take new files */
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    if (stat(dir, &info) != 0)
        return tess_error(TESS_ERR_IO, "cannot write %s: directory %s %s", path, dir,
                          errno == ENOENT ? "does not exist" : strerror(errno));
    if (!S_ISDIR(info.st_mode)) return tess_error(TESS_ERR_IO, "cannot write %s: %s is not a directory", path, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return tess_error(TESS_ERR_IO, "cannot write %s: directory %s is not writable (%s)", path, dir, strerror(errno));
    return TESS_OK;
}
