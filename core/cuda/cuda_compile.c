/*
 * cuda_compile.c - NVRTC compilation to a cubin for the device's exact
 * architecture, with an on-disk cache.
 *
 * Runs in a compile worker process (NVRTC serializes inside one process, so
 * the pool uses processes). Options: --gpu-architecture=sm_XX (sm_XXa when
 * the source needs Hopper-only instructions), -default-device, --std=c++17,
 * --use_fast_math only when the config asks for it, then the source's own
 * options. Cubins are kept under tess_cache_dir()/cuda, named by a hash of
 * the source, the options, the NVRTC version and the architecture.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cuda_internal.h"
#include "error.h"
#include "fsutil.h"
#include "strbuf.h"

#define MAX_OPTIONS 48

typedef struct option_list {
    const char *opt[MAX_OPTIONS];
    int n;
    char words[sizeof(((tess_kernel_source *)0)->options)];   /* the source's options, split */
    char arch[64];
    char joined[512];   /* all of them, for the cache key */
} option_list;

static tess_status build_options(const tess_device *dev, const tess_kernel_source *src,
                                 option_list *o) {
    if (strncmp(dev->arch, "sm_", 3) != 0)
        return tess_error(TESS_ERR_ARG, "cuda compile: device architecture '%s' is not sm_XX",
                          dev->arch);
    /* a kernel using arch-specific features (wgmma, TMA) is compiled for
     * the 'a' target of the device's architecture */
    size_t n = strlen(src->min_arch);
    bool specific = n > 0 && src->min_arch[n - 1] == 'a';
    snprintf(o->arch, sizeof o->arch, "--gpu-architecture=%s%s", dev->arch, specific ? "a" : "");
    o->n = 0;
    o->opt[o->n++] = o->arch;
    o->opt[o->n++] = "-default-device";
    o->opt[o->n++] = "--std=c++17";
    if (src->fast_math) o->opt[o->n++] = "--use_fast_math";
    snprintf(o->words, sizeof o->words, "%s", src->options);
    for (char *save = NULL, *w = strtok_r(o->words, " \t", &save); w;
         w = strtok_r(NULL, " \t", &save)) {
        if (o->n == MAX_OPTIONS)
            return tess_error(TESS_ERR_ARG, "cuda compile: more than %d options", MAX_OPTIONS);
        o->opt[o->n++] = w;
    }
    size_t len = 0;
    o->joined[0] = '\0';
    for (int i = 0; i < o->n; i++) {
        int w = snprintf(o->joined + len, sizeof o->joined - len, "%s%s", i ? " " : "", o->opt[i]);
        if (w < 0 || (size_t)w >= sizeof o->joined - len)
            return tess_error(TESS_ERR_ARG, "cuda compile: options too long");
        len += (size_t)w;
    }
    return TESS_OK;
}

/* <cache>/cuda/<key>.cubin, or <key>.batch.cubin for a source compiled
 * with others (kind "batch", which is part of the key). */
static tess_status cache_path(const tess_nvrtc *nv, const tess_kernel_source *src,
                              const option_list *o, const char *kind, char *path, size_t len,
                              char key[33]) {
    char dir[4096];
    tess_status st = tess_cache_dir(dir, sizeof dir - 64);
    if (st) return st;
    strcat(dir, "/cuda");
    st = tess_mkdir_p(dir);
    if (st) return st;
    char version[32];
    snprintf(version, sizeof version, "nvrtc %d.%d", nv->major, nv->minor);
    const char *parts[] = {src->code, o->joined, version, o->arch, kind};
    tess_cache_key(parts, 5, key);
    if ((size_t)snprintf(path, len, "%s/%s%s%s.cubin", dir, key, *kind ? "." : "", kind) >= len)
        return tess_error(TESS_ERR_IO, "cache path too long");
    return TESS_OK;
}

/* The program's log (malloc'd; "" when there is none). */
static char *program_log(const tess_nvrtc *nv, nvrtcProgram prog) {
    size_t n = 0;
    if (nv->nvrtcGetProgramLogSize(prog, &n) != NVRTC_SUCCESS) n = 0;
    char *log = malloc(n + 1);
    if (!log) return NULL;
    log[0] = '\0';
    if (n > 0 && nv->nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS) log[0] = '\0';
    log[n] = '\0';
    return log;
}

static tess_status nvrtc_compile(const tess_nvrtc *nv, const tess_kernel_source *src,
                                 const option_list *o, tess_blob *bin, char **log) {
    nvrtcProgram prog;
    nvrtcResult r = nv->nvrtcCreateProgram(&prog, src->code, "tessera_kernel.cu", 0, NULL, NULL);
    if (r != NVRTC_SUCCESS)
        return tess_error(TESS_ERR_COMPILE, "nvrtcCreateProgram: %s", nv->nvrtcGetErrorString(r));
    r = nv->nvrtcCompileProgram(prog, o->n, o->opt);
    if (r != NVRTC_SUCCESS) {
        char *text = program_log(nv, prog);
        nv->nvrtcDestroyProgram(&prog);
        *log = text;
        return tess_error(TESS_ERR_COMPILE, "NVRTC (%s): %s", o->joined, nv->nvrtcGetErrorString(r));
    }
    size_t size = 0;
    r = nv->nvrtcGetCUBINSize(prog, &size);
    void *data = r == NVRTC_SUCCESS && size > 0 ? malloc(size) : NULL;
    if (data && nv->nvrtcGetCUBIN(prog, data) != NVRTC_SUCCESS) {
        free(data);
        data = NULL;
    }
    nv->nvrtcDestroyProgram(&prog);
    if (!data) return tess_error(TESS_ERR_COMPILE, "NVRTC produced no cubin (%s)", o->joined);
    bin->data = data;
    bin->size = size;
    return TESS_OK;
}

/* The cached cubin at path, if there is one. */
static bool cache_read(const char *path, tess_blob *bin) {
    char *cached = NULL;
    size_t size = 0;
    if (tess_read_file(path, &cached, &size) == TESS_OK && size > 0) {
        bin->data = cached;
        bin->size = size;
        utimensat(AT_FDCWD, path, NULL, 0);   /* its last use, for tess_cache_clean */
        return true;
    }
    free(cached);
    tess_error_clear();
    return false;
}

/* A cache that cannot be written only costs time later. */
static void cache_write(const char *path, const tess_blob *bin) {
    if (tess_write_file_atomic(path, bin->data, bin->size) != TESS_OK) tess_error_clear();
}

tess_status tess_cuda_compile(const tess_device *dev, const tess_kernel_source *src, tess_blob *bin,
                              char **log) {
    *log = NULL;
    bin->data = NULL;
    bin->size = 0;
    if (!src->code) return tess_error(TESS_ERR_ARG, "cuda compile: no source");
    const tess_nvrtc *nv;
    tess_status st = tess_nvrtc_get(&nv);
    if (st) return st;
    option_list o;
    st = build_options(dev, src, &o);
    if (st) return st;
    char path[4200], key[33];
    st = cache_path(nv, src, &o, "", path, sizeof path, key);
    if (st) return st;
    if (cache_read(path, bin)) return TESS_OK;
    st = nvrtc_compile(nv, src, &o, bin, log);
    if (!st) cache_write(path, bin);
    return st;
}

/* ---- batches ------------------------------------------------------------------------
 * Kernels with the same options are compiled as one program: each source in
 * a namespace of its own, its macros undefined after it, and its entry
 * points renamed with a suffix made from its own cache key, so a kernel's
 * names do not depend on the batch it was part of, and a cached cubin says
 * which they are. Per-kernel costs (front end, ptxas) remain; the fixed
 * cost of a program is paid once. */

#define BATCH_MAX 16

typedef struct batch_member {
    int index;                  /* into the caller's arrays */
    char path[4200];            /* its cache file as a batch member */
} batch_member;

/* Appends "#undef NAME" for every macro the code defines. */
static void undefine_macros(tess_strbuf *b, const char *code) {
    for (const char *line = code; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        const char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p++ != '#') continue;
        while (*p == ' ' || *p == '\t') p++;
        if (strncmp(p, "define", 6) != 0 || (p[6] != ' ' && p[6] != '\t')) continue;
        p += 6;
        while (*p == ' ' || *p == '\t') p++;
        size_t n = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
        if (n > 0) tess_strbuf_printf(b, "#undef %.*s\n", (int)n, p);
    }
}

static tess_status batch_source(const tess_kernel_source *src, const batch_member *m, int n,
                                tess_compile_result *out, char **code) {
    tess_strbuf b = {0};
    for (int k = 0; k < n; k++) {
        const tess_kernel_source *s = &src[m[k].index];
        const char *suffix = out[m[k].index].symbol_suffix;
        tess_strbuf_printf(&b, "// ---- kernel %d of %d\n", k + 1, n);
        for (int l = 0; l < s->nlaunches; l++)
            tess_strbuf_printf(&b, "#define %s %s%s\n", s->launch[l].entry, s->launch[l].entry, suffix);
        tess_strbuf_printf(&b, "namespace tess_batch_%d {\n", k);
        tess_strbuf_puts(&b, s->code);
        tess_strbuf_puts(&b, "\n}\n");
        for (int l = 0; l < s->nlaunches; l++) tess_strbuf_printf(&b, "#undef %s\n", s->launch[l].entry);
        undefine_macros(&b, s->code);
    }
    return tess_strbuf_finish(&b, code);
}

/* Whether src can join a batch compiled with options `joined`: the same
 * options, and room for the suffix in its entry names. */
static bool batchable(const tess_device *dev, const tess_kernel_source *src, const char *joined) {
    option_list o;
    if (!src->code || build_options(dev, src, &o) != TESS_OK) return false;
    if (strcmp(o.joined, joined) != 0) return false;
    for (int l = 0; l < src->nlaunches; l++)
        if (strlen(src->launch[l].entry) + 14 >= sizeof src->launch[l].entry) return false;
    return true;
}

static void compile_alone(const tess_device *dev, const tess_kernel_source *src, tess_compile_result *out) {
    out->status = tess_cuda_compile(dev, src, &out->binary, &out->log);
    if (out->status && !out->log) out->log = strdup(tess_errmsg());
}

void tess_cuda_compile_batch(const tess_device *dev, const tess_kernel_source *src, int n,
                             tess_compile_result *out) {
    memset(out, 0, (size_t)n * sizeof *out);
    const tess_nvrtc *nv;
    option_list o;
    batch_member *todo = calloc(BATCH_MAX, sizeof *todo);
    int ntodo = 0;
    bool can_batch = n > 1 && todo && tess_nvrtc_get(&nv) == TESS_OK && src[0].code &&
                     build_options(dev, &src[0], &o) == TESS_OK;
    tess_error_clear();
    for (int i = 0; i < n; i++) {
        char path[4200], key[33];
        if (!can_batch || ntodo == BATCH_MAX || !batchable(dev, &src[i], o.joined) ||
            cache_path(nv, &src[i], &o, "", path, sizeof path, key) != TESS_OK || cache_read(path, &out[i].binary)) {
            tess_error_clear();
            if (!out[i].binary.data) compile_alone(dev, &src[i], &out[i]);
            continue;
        }
        batch_member *m = &todo[ntodo];
        if (cache_path(nv, &src[i], &o, "batch", m->path, sizeof m->path, key) != TESS_OK) {
            tess_error_clear();
            compile_alone(dev, &src[i], &out[i]);
            continue;
        }
        snprintf(out[i].symbol_suffix, sizeof out[i].symbol_suffix, "_b%.12s", key);
        if (cache_read(m->path, &out[i].binary)) continue;
        m->index = i;
        ntodo++;
    }
    char *code = NULL;
    tess_blob bin = {0};
    char *log = NULL;
    tess_kernel_source combined;
    if (ntodo > 1 && batch_source(src, todo, ntodo, out, &code) == TESS_OK) {
        combined = src[todo[0].index];
        combined.code = code;
        if (nvrtc_compile(nv, &combined, &o, &bin, &log) != TESS_OK) {
            free(bin.data);
            bin.data = NULL;
        }
    }
    tess_error_clear();
    for (int k = 0; k < ntodo; k++) {
        tess_compile_result *r = &out[todo[k].index];
        if (bin.data && (r->binary.data = malloc(bin.size))) {
            memcpy(r->binary.data, bin.data, bin.size);
            r->binary.size = bin.size;
            cache_write(todo[k].path, &r->binary);
        } else {   /* the batch failed: each kernel on its own, for its own log */
            r->symbol_suffix[0] = '\0';
            compile_alone(dev, &src[todo[k].index], r);
        }
    }
    free(bin.data);
    free(log);
    free(code);
    free(todo);
}
