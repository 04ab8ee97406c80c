/*
 * cuda_probe.c - the device descriptor, read in a short-lived child process.
 *
 * A process that has called cuInit cannot hand CUDA to its fork()ed
 * children, and kernels run in a forked runner. So the probe forks, the
 * child loads the driver, reads device 0's attributes (CUDA_VISIBLE_DEVICES
 * picks the GPU) and writes the descriptor back through a pipe; the calling
 * process never initializes the driver. The answer is kept for later calls.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cuda_internal.h"
#include "error.h"

/* How long the child may take (cuInit on a large machine takes seconds). */
#define PROBE_TIMEOUT_MS 60000

typedef struct probe_answer {
    tess_status status;
    char reason[512];
    tess_device dev;
} probe_answer;

static tess_status fail_with(const tess_cuda_driver *drv, CUresult r, const char *what) {
    if (r == CUDA_ERROR_NO_DEVICE) return tess_error(TESS_ERR_UNAVAILABLE, "no CUDA device");
    return tess_cuda_fail(drv, r, TESS_ERR_UNAVAILABLE, what);
}

/* Runs in the child: fills the descriptor of device 0. */
static tess_status probe_here(tess_device *dev) {
    const tess_cuda_driver *drv;
    tess_status st = tess_cuda_driver_get(&drv);
    if (st) return st;
    CUresult r = drv->cuInit(0);
    if (r != CUDA_SUCCESS) return fail_with(drv, r, "cuInit");
    int count = 0;
    r = drv->cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS) return fail_with(drv, r, "cuDeviceGetCount");
    if (count == 0) return tess_error(TESS_ERR_UNAVAILABLE, "no CUDA device");
    CUdevice d;
    r = drv->cuDeviceGet(&d, 0);
    if (r != CUDA_SUCCESS) return fail_with(drv, r, "cuDeviceGet");
    memset(dev, 0, sizeof *dev);
    strcpy(dev->backend, "cuda");
    r = drv->cuDeviceGetName(dev->name, (int)sizeof dev->name, d);
    if (r != CUDA_SUCCESS) return fail_with(drv, r, "cuDeviceGetName");
    size_t mem = 0;
    r = drv->cuDeviceTotalMem(&mem, d);
    if (r != CUDA_SUCCESS) return fail_with(drv, r, "cuDeviceTotalMem");
    dev->mem_bytes = (int64_t)mem;

    static const struct {
        CUdevice_attribute attr;
        const char *what;
    } attrs[] = {
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability"},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability"},
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "multiprocessor count"},
        {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, "clock rate"},
        {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, "memory clock rate"},
        {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, "memory bus width"},
        {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 size"},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, "shared memory per block"},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "opt-in shared memory per block"},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, "shared memory per SM"},
        {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, "registers per block"},
        {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, "registers per SM"},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "threads per block"},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, "threads per SM"},
        {CU_DEVICE_ATTRIBUTE_WARP_SIZE, "warp size"},
    };
    int v[sizeof attrs / sizeof attrs[0]];
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        r = drv->cuDeviceGetAttribute(&v[i], attrs[i].attr, d);
        if (r != CUDA_SUCCESS) {
            char what[96];
            snprintf(what, sizeof what, "reading the %s", attrs[i].what);
            return fail_with(drv, r, what);
        }
    }
    dev->cc_major = v[0];
    dev->cc_minor = v[1];
    dev->units = v[2];
    dev->clock_mhz = v[3] / 1000.0;
    dev->mem_clock_mhz = v[4] / 1000.0;
    dev->mem_bus_width = v[5];
    dev->l2_bytes = v[6];
    dev->smem_per_block = v[7];
    dev->smem_per_block_optin = v[8];
    dev->smem_per_sm = v[9];
    dev->regs_per_block = v[10];
    dev->regs_per_sm = v[11];
    dev->max_threads_per_block = v[12];
    dev->max_threads_per_sm = v[13];
    dev->warp_size = v[14];
    snprintf(dev->arch, sizeof dev->arch, "sm_%d%d", dev->cc_major, dev->cc_minor);

    /* The backend also needs the compiler. */
    const tess_nvrtc *nv;
    return tess_nvrtc_get(&nv);
}

static bool write_all(int fd, const void *buf, size_t n) {
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* Reads the child's answer, waiting at most PROBE_TIMEOUT_MS in total. */
static tess_status read_answer(int fd, probe_answer *a) {
    char *p = (char *)a;
    size_t got = 0;
    while (got < sizeof *a) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int pr = poll(&pfd, 1, PROBE_TIMEOUT_MS);
        if (pr < 0 && errno == EINTR) continue;
        if (pr == 0) return tess_error(TESS_ERR_UNAVAILABLE, "probing the CUDA driver timed out");
        ssize_t n = read(fd, p + got, sizeof *a - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return tess_error(TESS_ERR_UNAVAILABLE, "the CUDA probe process died");
        got += (size_t)n;
    }
    return TESS_OK;
}

static tess_status probe_in_child(probe_answer *a) {
    int fds[2];
    if (pipe(fds) != 0) return tess_error(TESS_ERR_IO, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return tess_error(TESS_ERR_IO, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        probe_answer mine;
        memset(&mine, 0, sizeof mine);
        mine.status = probe_here(&mine.dev);
        if (mine.status) snprintf(mine.reason, sizeof mine.reason, "%s", tess_errmsg());
        _exit(write_all(fds[1], &mine, sizeof mine) ? 0 : 1);
    }
    close(fds[1]);
    tess_status st = read_answer(fds[0], a);
    close(fds[0]);
    if (st) kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
    return st;
}

static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
static bool probed;
static probe_answer answer;

tess_status tess_cuda_probe(tess_device *dev) {
    pthread_mutex_lock(&probe_lock);
    if (!probed) {
        memset(&answer, 0, sizeof answer);
        tess_status st = probe_in_child(&answer);
        if (st) {
            answer.status = st;
            snprintf(answer.reason, sizeof answer.reason, "%s", tess_errmsg());
        }
        probed = true;
    }
    probe_answer a = answer;
    pthread_mutex_unlock(&probe_lock);
    if (a.status) return tess_error(a.status, "%s", a.reason);
    *dev = a.dev;
    return TESS_OK;
}
