/*
 * backend_cpu.c - the cpu backend: generated C with OpenMP, compiled by the
 * system C compiler into a shared object and loaded with dlopen.
 *
 * Shared objects are cached under tess_cache_dir()/cpu, named by a hash of
 * the source, the flags and the compiler's version. The compiler is $CC
 * (or cc); TESSERA_CC overrides it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "backend.h"
#include "error.h"
#include "fsutil.h"
#include "subprocess.h"

#define CPU_FLAGS "-O3 -march=native -fopenmp -shared -fPIC"

/* The kernel ABI of op.h: the scalar form when the source has scalars. */
typedef void (*cpu_entry)(void *const *buffers);
typedef void (*cpu_entry_scalars)(void *const *buffers, const void *const *scalars);

typedef struct cpu_module {
    void *handle;
    int nlaunches;
    union {
        cpu_entry plain;
        cpu_entry_scalars with_scalars;
    } entry[TESS_MAX_LAUNCHES];
    int nscalars;
    tess_scalar scalar[TESS_MAX_SCALARS];
    const void *scalar_ptr[TESS_MAX_SCALARS];   /* &scalar[i].value: the kernel's second argument */
} cpu_module;

/* First line of `cc --version`, part of the cache key. */
static const char *compiler_version(void) {
    static char version[256];
    if (version[0]) return version;
    char *argv[] = {(char *)tess_c_compiler(), "--version", NULL};
    char *out = NULL;
    if (tess_run_capture(argv, &out) == 0 && out) {
        size_t n = strcspn(out, "\n");
        snprintf(version, sizeof version, "%.*s", (int)n, out);
    } else {
        snprintf(version, sizeof version, "%s (version unknown)", tess_c_compiler());
    }
    free(out);
    return version;
}

static tess_status cpu_probe(tess_device *dev) {
    memset(dev, 0, sizeof *dev);
    strcpy(dev->backend, "cpu");
    struct utsname u;
    snprintf(dev->arch, sizeof dev->arch, "%.31s", uname(&u) == 0 ? u.machine : "unknown");
    snprintf(dev->name, sizeof dev->name, "%s", "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "model name", 10) == 0) {
                char *v = strchr(line, ':');
                if (v) {
                    v += 1 + strspn(v + 1, " \t");
                    v[strcspn(v, "\n")] = '\0';
                    snprintf(dev->name, sizeof dev->name, "%s", v);
                }
                break;
            }
        fclose(f);
    }
    dev->units = (int)sysconf(_SC_NPROCESSORS_ONLN);
    long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
    dev->l2_bytes = llc > 0 ? llc : 0;
    dev->mem_bytes = (int64_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
    return TESS_OK;
}

static tess_status cpu_compile(const tess_device *dev, const tess_kernel_source *src,
                               tess_blob *bin, char **log) {
    (void)dev;
    char dir[4096];
    tess_status st = tess_cache_dir(dir, sizeof dir - 64);
    if (st) return st;
    size_t dl = strlen(dir);
    snprintf(dir + dl, sizeof dir - dl, "/cpu");
    st = tess_mkdir_p(dir);
    if (st) return st;
    char flags[512];
    snprintf(flags, sizeof flags, "%s%s %s", CPU_FLAGS, src->fast_math ? " -ffast-math" : "",
             src->options);
    const char *parts[] = {src->code, flags, compiler_version()};
    char key[33];
    tess_cache_key(parts, 3, key);
    char so[4200], csrc[4200], tmp[4200];
    snprintf(so, sizeof so, "%s/%s.so", dir, key);
    struct stat sb;
    if (stat(so, &sb) == 0) {
        utimensat(AT_FDCWD, so, NULL, 0);   /* its last use, for tess_cache_clean */
    } else {
        snprintf(csrc, sizeof csrc, "%s/%s.c", dir, key);
        snprintf(tmp, sizeof tmp, "%s/%s.%ld.tmp.so", dir, key, (long)getpid());
        st = tess_write_file_atomic(csrc, src->code, strlen(src->code));
        if (st) return st;
        /* argv: compiler, flags split on spaces, -o tmp, source */
        char *argv[64];
        int argc = 0;
        argv[argc++] = (char *)tess_c_compiler();
        char flag_words[512];
        snprintf(flag_words, sizeof flag_words, "%s", flags);
        for (char *save = NULL, *w = strtok_r(flag_words, " ", &save); w && argc < 58;
             w = strtok_r(NULL, " ", &save))
            argv[argc++] = w;
        argv[argc++] = "-o";
        argv[argc++] = tmp;
        argv[argc++] = csrc;
        argv[argc] = NULL;
        char *out = NULL;
        int rc = tess_run_capture(argv, &out);
        if (rc != 0) {
            unlink(tmp);
            *log = out ? out : strdup("compiler failed to start");
            return tess_error(TESS_ERR_COMPILE, "%s failed (exit %d)", tess_c_compiler(), rc);
        }
        free(out);
        if (rename(tmp, so) != 0) {
            unlink(tmp);
            return tess_error(TESS_ERR_IO, "cannot move %s into the cache: %s", tmp, strerror(errno));
        }
    }
    bin->data = strdup(so);
    if (!bin->data) return tess_error(TESS_ERR_NOMEM, "blob");
    bin->size = strlen(so) + 1;
    return TESS_OK;
}

static tess_status cpu_open(const tess_device *dev, void **ctx) {
    (void)dev;
    *ctx = NULL;
    return TESS_OK;
}

static void cpu_close(void *ctx) { (void)ctx; }

static tess_status cpu_alloc(void *ctx, size_t bytes, void **dptr) {
    (void)ctx;
    size_t rounded = (bytes + 63) / 64 * 64;
    *dptr = aligned_alloc(64, rounded ? rounded : 64);
    if (!*dptr) return tess_error(TESS_ERR_NOMEM, "allocating %zu bytes", bytes);
    return TESS_OK;
}

static void cpu_release(void *ctx, void *dptr) {
    (void)ctx;
    free(dptr);
}

static tess_status cpu_copy(void *ctx, void *dst, const void *src, size_t bytes) {
    (void)ctx;
    memcpy(dst, src, bytes);
    return TESS_OK;
}

static tess_status cpu_poison(void *ctx, void *dptr, size_t bytes) {
    (void)ctx;
    memset(dptr, 0xff, bytes);
    return TESS_OK;
}

static tess_status cpu_load(void *ctx, const tess_blob *bin, const tess_kernel_source *src,
                            void **module, tess_kernel_metrics *metrics) {
    (void)ctx;
    (void)metrics;
    const char *path = bin->data;
    if (!path || bin->size == 0 || path[bin->size - 1] != '\0')
        return tess_error(TESS_ERR_ARG, "cpu binary is not a path");
    cpu_module *m = calloc(1, sizeof *m);
    if (!m) return tess_error(TESS_ERR_NOMEM, "module");
    m->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!m->handle) {
        free(m);
        return tess_error(TESS_ERR_RUNTIME, "dlopen: %s", dlerror());
    }
    m->nlaunches = src->nlaunches;
    m->nscalars = src->nscalars;
    for (int i = 0; i < src->nscalars; i++) {
        m->scalar[i] = src->scalar[i];
        m->scalar_ptr[i] = &m->scalar[i].value;
    }
    for (int i = 0; i < src->nlaunches; i++) {
        void *sym = dlsym(m->handle, src->launch[i].entry);
        if (!sym) {
            dlclose(m->handle);
            free(m);
            return tess_error(TESS_ERR_RUNTIME, "entry '%s' not found in %s", src->launch[i].entry, path);
        }
        memcpy(&m->entry[i].plain, &sym, sizeof sym);   /* object to function pointer, as POSIX allows */
    }
    *module = m;
    return TESS_OK;
}

static void cpu_unload(void *ctx, void *module) {
    (void)ctx;
    cpu_module *m = module;
    if (!m) return;
    dlclose(m->handle);
    free(m);
}

static tess_status cpu_run(void *ctx, void *module, void *const *dbufs, int nbufs) {
    (void)ctx;
    (void)nbufs;
    cpu_module *m = module;
    for (int i = 0; i < m->nlaunches; i++) {
        if (m->nscalars > 0)
            m->entry[i].with_scalars(dbufs, m->scalar_ptr);
        else
            m->entry[i].plain(dbufs);
    }
    return TESS_OK;
}

static tess_status cpu_set_scalar(void *ctx, void *module, int index, const tess_scalar *value) {
    (void)ctx;
    cpu_module *m = module;
    if (index < 0 || index >= m->nscalars || value->type != m->scalar[index].type)
        return tess_error(TESS_ERR_ARG, "cpu kernel: no scalar %d of type %d (it has %d scalars)", index,
                          (int)value->type, m->nscalars);
    m->scalar[index].value = value->value;
    return TESS_OK;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

static tess_status cpu_time(void *ctx, void *module, void *const *const *sets, int nsets, int nbufs,
                            int reps, int launches, double *ms, tess_kernel_metrics *metrics) {
    (void)metrics;
    for (int r = 0; r < reps; r++) {
        double t0 = now_ms();
        for (int l = 0; l < launches; l++) cpu_run(ctx, module, sets[(r * launches + l) % nsets], nbufs);
        ms[r] = (now_ms() - t0) / launches;
    }
    return TESS_OK;
}

/* Calibration kernels, compiled like any candidate so they get the same
 * compiler and flags: a STREAM-like copy and independent FMA chains. */
static const char calibrate_source[] =
    "#include <stddef.h>\n"
    "void tess_copy(void *const *b) {\n"
    "    const double *restrict src = b[0];\n"
    "    double *restrict dst = b[1];\n"
    "    size_t n = *(const size_t *)b[2];\n"
    "    #pragma omp parallel for simd schedule(static)\n"
    "    for (size_t i = 0; i < n; i++) dst[i] = src[i];\n"
    "}\n"
    "void tess_fma(void *const *b) {\n"
    "    double *out = b[1];\n"
    "    size_t iters = *(const size_t *)b[2];\n"
    "    #pragma omp parallel\n"
    "    {\n"
    "        float acc[64];\n"
    "        for (int j = 0; j < 64; j++) acc[j] = 1.0f + 1e-3f * j;\n"
    "        for (size_t i = 0; i < iters; i++)\n"
    "            #pragma omp simd\n"
    "            for (int j = 0; j < 64; j++) acc[j] = acc[j] * 0.999999f + 1e-7f;\n"
    "        float s = 0;\n"
    "        for (int j = 0; j < 64; j++) s += acc[j];\n"
    "        #pragma omp atomic\n"
    "        out[0] += s;\n"
    "    }\n"
    "}\n";

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static tess_status cpu_calibrate(void *ctx, double *gbps, double *gflops) {
    tess_device dev;
    cpu_probe(&dev);
    tess_kernel_source src = {.code = (char *)calibrate_source, .nlaunches = 1};
    tess_blob bin = {0};
    char *log = NULL;
    tess_status st = cpu_compile(&dev, &src, &bin, &log);
    free(log);
    if (st) return tess_error_context(st, "compiling the calibration kernels");
    /* Copy: arrays well beyond the last-level cache. */
    size_t n = (size_t)(dev.l2_bytes > 0 ? dev.l2_bytes : 32 << 20) * 4 / sizeof(double);
    if (n < (64u << 20) / sizeof(double)) n = (64u << 20) / sizeof(double);
    double *a = NULL, *b = NULL;
    void *module = NULL;
    st = cpu_alloc(ctx, n * sizeof(double), (void **)&a);
    if (!st) st = cpu_alloc(ctx, n * sizeof(double), (void **)&b);
    if (!st) {
        strcpy(src.launch[0].entry, "tess_copy");
        st = cpu_load(ctx, &bin, &src, &module, NULL);
    }
    if (!st) {
        for (size_t i = 0; i < n; i++) a[i] = (double)i, b[i] = 0;   /* touch every page */
        void *bufs[3] = {a, b, &n};
        double t[15];
        cpu_time(ctx, module, (void *const *const[]){bufs}, 1, 3, 2, 1, t, NULL);   /* warm-up */
        cpu_time(ctx, module, (void *const *const[]){bufs}, 1, 3, 15, 1, t, NULL);
        qsort(t, 15, sizeof *t, cmp_double);
        *gbps = 2.0 * (double)n * sizeof(double) / (t[7] * 1e-3) / 1e9;
        cpu_unload(ctx, module);
        module = NULL;
        strcpy(src.launch[0].entry, "tess_fma");
        st = cpu_load(ctx, &bin, &src, &module, NULL);
    }
    if (!st) {
        size_t iters = 2000000;
        double out = 0;
        void *bufs[3] = {a, &out, &iters};
        double t[5];
        cpu_time(ctx, module, (void *const *const[]){bufs}, 1, 3, 5, 1, t, NULL);
        qsort(t, 5, sizeof *t, cmp_double);
        double flops = 2.0 * 64.0 * (double)iters * omp_get_max_threads();
        *gflops = flops / (t[0] * 1e-3) / 1e9;
        cpu_unload(ctx, module);
    }
    cpu_release(ctx, a);
    cpu_release(ctx, b);
    tess_blob_free(&bin);
    return st;
}

static const tess_backend_ops cpu_backend = {
    .name = "cpu",
    .summary = "generated C with OpenMP, compiled by the system C compiler",
    .default_batch = 8,
    .exclusive_timing = true,
    .probe = cpu_probe,
    .compile = cpu_compile,
    .open = cpu_open,
    .close = cpu_close,
    .alloc = cpu_alloc,
    .release = cpu_release,
    .upload = cpu_copy,
    .download = cpu_copy,
    .poison = cpu_poison,
    .load = cpu_load,
    .unload = cpu_unload,
    .run = cpu_run,
    .time = cpu_time,
    .calibrate = cpu_calibrate,
    .set_scalar = cpu_set_scalar,
};

tess_status tess_cpu_register(void) { return tess_backend_register(&cpu_backend); }
