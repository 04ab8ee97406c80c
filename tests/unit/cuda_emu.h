/*
 * cuda_emu.h - runs generated CUDA C of the time-block kernels on the CPU,
 * compiled by a C compiler (gnu11), for tests on machines without a GPU.
 *
 * What the kernels use: the thread and block indices, qualifiers,
 * min/max on ints, __ldg, __syncthreads, __shfl_up_sync/__shfl_down_sync
 * on float and double, and dynamic shared memory (tess_smem__).
 * Each CUDA thread of a block runs as a fiber (ucontext) on its own stack;
 * a fiber runs until it waits at a barrier, then hands over to the next
 * fiber that can run. __syncthreads is a barrier of the block's fibers, a
 * shuffle one of its warp's 32 (lanes exchange values through slots).
 * Blocks run one after another, with shared memory filled with NaN before
 * each and checked for writes past either end after it. __ldg reads are
 * checked against the buffers of the launch.
 *
 * The file including it holds the kernel (as C: without `extern "C"`) and
 * calls emu_buffers, then emu_launch per launch; emu_error reports what
 * went wrong.
 */
#ifndef TESS_CUDA_EMU_H
#define TESS_CUDA_EMU_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

typedef struct emu_dim3 {
    unsigned x, y, z;
} emu_dim3;

/* Qualifiers with no meaning on the CPU. */
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(threads, blocks)
#define __align__(n)
#define __shared__

/* CUDA's min and max, on ints only: anything else fails to compile. */
static inline int emu_min(int a, int b) { return a < b ? a : b; }
static inline int emu_max(int a, int b) { return a > b ? a : b; }
#define min(a, b) emu_min(_Generic((a), int: (a)), _Generic((b), int: (b)))
#define max(a, b) emu_max(_Generic((a), int: (a)), _Generic((b), int: (b)))

#define EMU_WARP 32
/* Stack per fiber, above a guard page. The kernels' frames take a few
 * hundred bytes; AddressSanitizer, in a sanitized test, clears the shadow of
 * the whole stack at each switch, so a small one keeps switches cheap. */
#define EMU_STACK (32 * 1024)
#define EMU_GUARD 4096           /* bytes checked on either side of shared memory */
#define EMU_GUARD_BYTE 0xa5
#define EMU_MAX_BUFFERS 16

typedef struct emu_fiber {
    ucontext_t ctx;
    emu_dim3 tid;
    int wait_key;              /* barrier waited at: 0 the block's, 1 + w warp w's; -1 none */
    unsigned long wait_gen;    /* its generation when the fiber arrived */
    unsigned long shuffles;    /* shuffles done: picks the warp's slots */
    bool done;
} emu_fiber;

static struct {
    emu_dim3 block_idx, block_dim;
    emu_fiber *fiber, *cur;
    int nfibers;
    char *stacks;
    size_t stacks_bytes;
    unsigned *arrived;         /* per barrier: fibers arrived */
    unsigned long *gen;        /* per barrier: times it opened */
    double *slots;             /* per warp: two sets of 32 values, used in turn */
    ucontext_t launcher;
    void (*entry)(void **);
    void **args;
    bool aborted;
    const char *buf_lo[EMU_MAX_BUFFERS], *buf_hi[EMU_MAX_BUFFERS];
    int nbuffers;
    unsigned char *smem_raw;
    size_t smem_bytes;
    long errors;
    char first_error[512];
} emu_;

#define threadIdx (emu_.cur->tid)
#define blockIdx (emu_.block_idx)
#define blockDim (emu_.block_dim)

/* The kernels declare `extern __shared__ unsigned char tess_smem__[];`.
 * Through this macro that declares a pointer to an array, which points
 * past the low guard of the launch's shared memory. */
static unsigned char (*emu_smem)[];
#define tess_smem__ (*emu_smem)

static void emu_fail(const char *fmt, ...) {
    if (emu_.errors++) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(emu_.first_error, sizeof emu_.first_error, fmt, ap);
    va_end(ap);
}

/* The first error of the runs so far and how many followed; NULL if none. */
const char *emu_error(void) {
    static char text[sizeof emu_.first_error + 64];
    if (!emu_.errors) return NULL;
    snprintf(text, sizeof text, "%s (%ld error%s in all)", emu_.first_error, emu_.errors, emu_.errors > 1 ? "s" : "");
    return text;
}

/* The buffers of the launches, for __ldg's checks. */
static void emu_buffers(void **buffers, const size_t *bytes, int n) {
    if (n > EMU_MAX_BUFFERS) emu_fail("%d buffers, more than %d", n, EMU_MAX_BUFFERS);
    emu_.nbuffers = n < EMU_MAX_BUFFERS ? n : EMU_MAX_BUFFERS;
    for (int i = 0; i < emu_.nbuffers; i++) {
        emu_.buf_lo[i] = buffers[i];
        emu_.buf_hi[i] = (const char *)buffers[i] + bytes[i];
    }
}

static bool emu_readable(const void *p, size_t size) {
    const char *c = p;
    for (int i = 0; i < emu_.nbuffers; i++)
        if (c >= emu_.buf_lo[i] && c + size <= emu_.buf_hi[i]) return true;
    emu_fail("__ldg outside the buffers in block (%u,%u,%u), thread (%u,%u,%u)", blockIdx.x, blockIdx.y,
             blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z);
    return false;
}

static inline float emu_ldg_f(const float *p) { return emu_readable(p, sizeof *p) ? *p : NAN; }
static inline double emu_ldg_d(const double *p) { return emu_readable(p, sizeof *p) ? *p : NAN; }
#define __ldg(p) \
    _Generic((p), float *: emu_ldg_f, const float *: emu_ldg_f, double *: emu_ldg_d, const double *: emu_ldg_d)(p)

static bool emu_runnable(const emu_fiber *f) {
    return !f->done && (f->wait_key < 0 || emu_.gen[f->wait_key] != f->wait_gen);
}

/* Leaves the running fiber (waiting or done) for the next one that can run,
 * directly (one switch, not two through the launcher: switches are most of
 * the run time), or for the launcher when none can: the block is done or
 * deadlocked. */
static void emu_switch_from(emu_fiber *self) {
    int n = emu_.nfibers, at = (int)(self - emu_.fiber);
    for (int k = 1; k < n; k++) {
        emu_fiber *next = &emu_.fiber[(at + k) % n];
        if (emu_runnable(next)) {
            emu_.cur = next;
            swapcontext(&self->ctx, &next->ctx);
            return;
        }
    }
    swapcontext(&self->ctx, &emu_.launcher);
}

/* Ends the block: a misuse the emulation cannot go on from. */
static void emu_abort(const char *what) {
    emu_fail("%s in block (%u,%u,%u), thread (%u,%u,%u)", what, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x,
             threadIdx.y, threadIdx.z);
    emu_.aborted = true;
    swapcontext(&emu_.cur->ctx, &emu_.launcher);
}

/* Arrives at barrier `key` of `count` fibers; the last one to arrive opens it. */
static void emu_arrive(int key, unsigned count) {
    if (++emu_.arrived[key] == count) {
        emu_.arrived[key] = 0;
        emu_.gen[key]++;
        return;
    }
    emu_fiber *self = emu_.cur;
    self->wait_key = key;
    self->wait_gen = emu_.gen[key];
    emu_switch_from(self);
    self->wait_key = -1;
}

static inline void __syncthreads(void) { emu_arrive(0, (unsigned)emu_.nfibers); }

/* Lane + delta's value at this shuffle of the warp; lanes past the warp's
 * ends get their own, as in CUDA. */
static double emu_shuffle(unsigned mask, double v, int delta) {
    if (mask != 0xffffffffu) emu_abort("a shuffle of part of a warp");
    emu_fiber *self = emu_.cur;
    int lin = (int)(self - emu_.fiber), warp = lin / EMU_WARP, lane = lin % EMU_WARP;
    /* Two sets in turn: a lane may write the next shuffle's value before
     * the others have read this one's, never two ahead. */
    double *slot = &emu_.slots[(2 * warp + (int)(self->shuffles++ & 1)) * EMU_WARP];
    slot[lane] = v;
    emu_arrive(1 + warp, EMU_WARP);
    int src = lane + delta;
    return src >= 0 && src < EMU_WARP ? slot[src] : v;
}

static inline float emu_shfl_up_f(unsigned m, float v, unsigned d) { return (float)emu_shuffle(m, v, -(int)d); }
static inline double emu_shfl_up_d(unsigned m, double v, unsigned d) { return emu_shuffle(m, v, -(int)d); }
static inline float emu_shfl_down_f(unsigned m, float v, unsigned d) { return (float)emu_shuffle(m, v, (int)d); }
static inline double emu_shfl_down_d(unsigned m, double v, unsigned d) { return emu_shuffle(m, v, (int)d); }
#define __shfl_up_sync(mask, v, delta) _Generic((v), float: emu_shfl_up_f, double: emu_shfl_up_d)(mask, v, delta)
#define __shfl_down_sync(mask, v, delta) \
    _Generic((v), float: emu_shfl_down_f, double: emu_shfl_down_d)(mask, v, delta)

static void emu_fiber_main(void) {
    emu_.entry(emu_.args);
    emu_.cur->done = true;
    emu_switch_from(emu_.cur);
}

/* Fibers, stacks (each above an inaccessible page, so that an overflow
 * faults), barriers and shuffle slots for blocks of `block` threads. */
static bool emu_alloc(emu_dim3 block, size_t shared_bytes) {
    int n = (int)(block.x * block.y * block.z), warps = n / EMU_WARP;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), per = EMU_STACK + page;
    emu_.block_dim = block;
    emu_.nfibers = n;
    emu_.fiber = calloc((size_t)n, sizeof *emu_.fiber);
    emu_.arrived = calloc((size_t)warps + 1, sizeof *emu_.arrived);
    emu_.gen = calloc((size_t)warps + 1, sizeof *emu_.gen);
    emu_.slots = calloc((size_t)warps * 2 * EMU_WARP, sizeof *emu_.slots);
    emu_.smem_bytes = shared_bytes;
    /* 16-byte aligned, as __align__(16) asks: malloc's alignment, and EMU_GUARD's */
    emu_.smem_raw = malloc(shared_bytes + 2 * EMU_GUARD);
    emu_.stacks_bytes = (size_t)n * per;
    emu_.stacks = mmap(NULL, emu_.stacks_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
    if (emu_.stacks == MAP_FAILED) emu_.stacks = NULL;
    for (int i = 0; emu_.stacks && i < n; i++) mprotect(emu_.stacks + (size_t)i * per, page, PROT_NONE);
    if (!emu_.fiber || !emu_.arrived || !emu_.gen || !emu_.slots || !emu_.smem_raw || !emu_.stacks) {
        emu_fail("out of memory for blocks of %d threads", n);
        return false;
    }
    memset(emu_.smem_raw, EMU_GUARD_BYTE, shared_bytes + 2 * EMU_GUARD);
    emu_smem = (unsigned char (*)[])(emu_.smem_raw + EMU_GUARD);
    return true;
}

static void emu_free(void) {
    free(emu_.fiber);
    free(emu_.arrived);
    free(emu_.gen);
    free(emu_.slots);
    free(emu_.smem_raw);
    if (emu_.stacks) munmap(emu_.stacks, emu_.stacks_bytes);
    emu_.fiber = NULL;
    emu_.arrived = NULL;
    emu_.gen = NULL;
    emu_.slots = NULL;
    emu_.smem_raw = NULL;
    emu_.stacks = NULL;
}

/* Each fiber starts at the entry, as thread i of the block (x fastest). */
static void emu_start_fibers(void) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    emu_dim3 d = emu_.block_dim;
    for (int i = 0; i < emu_.nfibers; i++) {
        emu_fiber *f = &emu_.fiber[i];
        f->tid = (emu_dim3){(unsigned)i % d.x, (unsigned)i / d.x % d.y, (unsigned)i / (d.x * d.y)};
        f->wait_key = -1;
        f->shuffles = 0;
        f->done = false;
        getcontext(&f->ctx);
        f->ctx.uc_stack.ss_sp = emu_.stacks + (size_t)i * (EMU_STACK + page) + page;
        f->ctx.uc_stack.ss_size = EMU_STACK;
        f->ctx.uc_link = &emu_.launcher;
        makecontext(&f->ctx, emu_fiber_main, 0);
    }
}

/* Why fibers are left unfinished: waiting at barriers no one else reaches. */
static void emu_report_deadlock(void) {
    int block = 0, warp = 0, done = 0;
    for (int i = 0; i < emu_.nfibers; i++) {
        const emu_fiber *f = &emu_.fiber[i];
        done += f->done;
        block += !f->done && f->wait_key == 0;
        warp += !f->done && f->wait_key > 0;
    }
    emu_fail("deadlock in block (%u,%u,%u): %d threads wait at __syncthreads, %d at shuffles, %d have returned",
             blockIdx.x, blockIdx.y, blockIdx.z, block, warp, done);
}

static bool emu_guards_intact(void) {
    const unsigned char *lo = emu_.smem_raw, *hi = emu_.smem_raw + EMU_GUARD + emu_.smem_bytes;
    for (size_t i = 0; i < EMU_GUARD; i++)
        if (lo[i] != EMU_GUARD_BYTE || hi[i] != EMU_GUARD_BYTE) {
            emu_fail("block (%u,%u,%u) wrote shared memory %s its %zu bytes", blockIdx.x, blockIdx.y, blockIdx.z,
                     lo[i] != EMU_GUARD_BYTE ? "below" : "past", emu_.smem_bytes);
            return false;
        }
    return true;
}

/* Runs block b to its end: false if it could not finish or wrote past its
 * shared memory. Shared memory starts as NaN: nothing may read it unwritten. */
static bool emu_run_block(emu_dim3 b) {
    emu_.block_idx = b;
    emu_start_fibers();
    memset(emu_smem, 0xff, emu_.smem_bytes);
    emu_.cur = &emu_.fiber[0];
    swapcontext(&emu_.launcher, &emu_.fiber[0].ctx);
    if (emu_.aborted) return false;
    for (int i = 0; i < emu_.nfibers; i++)
        if (!emu_.fiber[i].done) {
            emu_report_deadlock();
            return false;
        }
    return emu_guards_intact();
}

/* Runs `entry` (which passes `args` to a kernel) over every block of the
 * grid; nonzero if anything went wrong in this launch (see emu_error). */
static int emu_launch(void (*entry)(void **), void **args, emu_dim3 grid, emu_dim3 block, size_t shared_bytes) {
    long before = emu_.errors;
    if (block.x * block.y * block.z % EMU_WARP) {
        emu_fail("blocks of %u threads: not whole warps", block.x * block.y * block.z);
        return 1;
    }
    emu_.entry = entry;
    emu_.args = args;
    emu_.aborted = false;
    bool ok = emu_alloc(block, shared_bytes);
    for (unsigned z = 0; ok && z < grid.z; z++)
        for (unsigned y = 0; ok && y < grid.y; y++)
            for (unsigned x = 0; ok && x < grid.x; x++) ok = emu_run_block((emu_dim3){x, y, z});
    emu_free();
    return emu_.errors != before;
}

#endif
