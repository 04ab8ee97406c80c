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

/* A number read from a sysfs file, with a K or M suffix for sizes; -1 when
 * the file is missing or does not start with a number. */
static long long sysfs_number(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long long v = -1;
    char unit = 0;
    int n = fscanf(f, "%lld%c", &v, &unit);
    fclose(f);
    if (n < 1) return -1;
    return unit == 'K' ? v << 10 : unit == 'M' ? v << 20 : v;
}

/* Bytes of every cache of level 2 and up, each instance counted once (by
 * the first CPU that shares it): what can keep a kernel's data between
 * calls. glibc's sysconf reports one instance of the last level only, and
 * under some hypervisors not even that. 0 when sysfs does not say. */
static int64_t cache_bytes(int ncpus) {
    int64_t total = 0;
    char path[128];
    for (int cpu = 0; cpu < ncpus; cpu++)
        for (int index = 0;; index++) {
            const char *dir = "/sys/devices/system/cpu/cpu%d/cache/index%d/%s";
            snprintf(path, sizeof path, dir, cpu, index, "level");
            long long level = sysfs_number(path);
            if (level < 0) break;
            snprintf(path, sizeof path, dir, cpu, index, "shared_cpu_list");
            long long first = sysfs_number(path);
            snprintf(path, sizeof path, dir, cpu, index, "size");
            long long size = sysfs_number(path);
            if (level >= 2 && first == cpu && size > 0) total += size;
        }
    return total;
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
    dev->l2_bytes = cache_bytes(dev->units);
    if (dev->l2_bytes <= 0) dev->l2_bytes = llc > 0 ? llc : 0;
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
 * compiler and flags: a STREAM-like copy, a sum that only reads, and
 * independent FMA chains in fp32 and fp64 (enough of them in flight to
 * cover the FMA units' latency with 512-bit vectors). The FMA chains run on
 * one thread, and the rate is that times the logical CPUs: threads that
 * must all meet at the end of a parallel region measure the host's load
 * as much as its cores (on a busy host, every sample waited for a
 * descheduled thread), and a ceiling must not read below what the cores can
 * do. Where two threads share a core that is twice its rate. */
static const char calibrate_source[] =
    "#include <stddef.h>\n"
    "void tess_copy(void *const *b) {\n"
    "    const double *restrict src = b[0];\n"
    "    double *restrict dst = b[1];\n"
    "    size_t n = *(const size_t *)b[2];\n"
    "    #pragma omp parallel for simd schedule(static)\n"
    "    for (size_t i = 0; i < n; i++) dst[i] = src[i];\n"
    "}\n"
    "void tess_read(void *const *b) {\n"
    "    const double *restrict src = b[0];\n"
    "    size_t blocks = *(const size_t *)b[2] / 64;\n"
    "    double total = 0;\n"
    "    #pragma omp parallel reduction(+ : total)\n"
    "    {\n"
    "        double acc[64] = {0};\n"
    "        #pragma omp for schedule(static)\n"
    "        for (size_t k = 0; k < blocks; k++)\n"
    "            #pragma omp simd\n"
    "            for (int j = 0; j < 64; j++) acc[j] += src[64 * k + j];\n"
    "        for (int j = 0; j < 64; j++) total += acc[j];\n"
    "    }\n"
    "    *(double *)b[1] = total;\n"
    "}\n"
    "#define FMA_CHAINS(NAME, T, LANES)                                      \\\n"
    "    void NAME(void *const *b) {                                         \\\n"
    "        double *out = b[1];                                             \\\n"
    "        size_t iters = *(const size_t *)b[2];                           \\\n"
    "        T acc[LANES];                                                   \\\n"
    "        for (int j = 0; j < LANES; j++) acc[j] = (T)1 + (T)1e-3 * j;    \\\n"
    "        for (size_t i = 0; i < iters; i++)                              \\\n"
    "            _Pragma(\"omp simd\")                                        \\\n"
    "            for (int j = 0; j < LANES; j++)                             \\\n"
    "                acc[j] = acc[j] * (T)0.999999 + (T)1e-7;                \\\n"
    "        T s = 0;                                                        \\\n"
    "        for (int j = 0; j < LANES; j++) s += acc[j];                    \\\n"
    "        out[0] += s;                                                    \\\n"
    "    }\n"
    "FMA_CHAINS(tess_fma, float, 128)\n"
    "FMA_CHAINS(tess_fma_f64, double, 64)\n";

#define CPU_CALIBRATE_REPS 15
/* FMA samples of about 0.1 ms on one core: on a shared host some of many
 * short samples run undisturbed. */
#define CPU_FMA_ITERS 50000
#define CPU_FMA_REPS 61

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Loads one entry of the calibration binary and times it: the fastest of
 * reps runs after `warm` untimed ones. A ceiling is the best the device
 * does, and on a shared host the fastest run is the least disturbed. */
static tess_status time_entry(void *ctx, const tess_blob *bin, const char *entry, void **bufs, int warm,
                              int reps, double *ms) {
    tess_kernel_source src = {.nlaunches = 1};
    snprintf(src.launch[0].entry, sizeof src.launch[0].entry, "%s", entry);
    void *module = NULL;
    tess_status st = cpu_load(ctx, bin, &src, &module, NULL);
    if (st) return st;
    double t[CPU_FMA_REPS];
    void *const *const sets[] = {bufs};
    if (warm) st = cpu_time(ctx, module, sets, 1, 3, warm, 1, t, NULL);
    if (!st) st = cpu_time(ctx, module, sets, 1, 3, reps, 1, t, NULL);
    if (!st) {
        qsort(t, (size_t)reps, sizeof *t, cmp_double);
        *ms = t[0];
    }
    cpu_unload(ctx, module);
    return st;
}

static tess_status cpu_calibrate(void *ctx, double *rates) {
    tess_device dev;
    cpu_probe(&dev);
    tess_kernel_source src = {.code = (char *)calibrate_source, .nlaunches = 1};
    tess_blob bin = {0};
    char *log = NULL;
    tess_status st = cpu_compile(&dev, &src, &bin, &log);
    free(log);
    if (st) return tess_error_context(st, "compiling the calibration kernels");
    for (int k = 0; k < TESS_CEILING_COUNT; k++) rates[k] = 0;   /* no tensor cores */
    /* Memory: arrays well beyond the caches, a multiple of 64 elements. */
    size_t n = (size_t)(dev.l2_bytes > 0 ? dev.l2_bytes : 32 << 20) * 4 / sizeof(double);
    if (n < (64u << 20) / sizeof(double)) n = (64u << 20) / sizeof(double);
    n = n / 64 * 64;
    double *a = NULL, *b = NULL, out = 0, ms = 0;
    st = cpu_alloc(ctx, n * sizeof(double), (void **)&a);
    if (!st) st = cpu_alloc(ctx, n * sizeof(double), (void **)&b);
    if (!st) {
        for (size_t i = 0; i < n; i++) a[i] = (double)i, b[i] = 0;   /* touch every page */
        void *bufs[3] = {a, b, &n};
        st = time_entry(ctx, &bin, "tess_copy", bufs, 2, CPU_CALIBRATE_REPS, &ms);
        if (!st) rates[TESS_CEILING_COPY] = 2.0 * (double)n * sizeof(double) / (ms * 1e-3) / 1e9;
    }
    if (!st) {
        void *bufs[3] = {a, &out, &n};
        st = time_entry(ctx, &bin, "tess_read", bufs, 2, CPU_CALIBRATE_REPS, &ms);
        if (!st) rates[TESS_CEILING_READ] = (double)n * sizeof(double) / (ms * 1e-3) / 1e9;
    }
    const struct {
        const char *entry;
        tess_ceiling_kind ceiling;
        int lanes;                  /* must match the kernel */
    } fma[] = {{"tess_fma", TESS_CEILING_FMA_F32, 128}, {"tess_fma_f64", TESS_CEILING_FMA_F64, 64}};
    for (int f = 0; f < 2 && !st; f++) {
        size_t iters = CPU_FMA_ITERS;
        void *bufs[3] = {a, &out, &iters};
        st = time_entry(ctx, &bin, fma[f].entry, bufs, 1, CPU_FMA_REPS, &ms);
        double flops = 2.0 * fma[f].lanes * (double)iters * omp_get_max_threads();
        if (!st) rates[fma[f].ceiling] = flops / (ms * 1e-3) / 1e9;
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
