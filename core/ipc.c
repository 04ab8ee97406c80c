/* ipc.c - length-prefixed messages over pipes. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "error.h"
#include "ipc.h"

tess_status tess_ipc_write(int fd, const void *buf, size_t n) {
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return tess_error(TESS_ERR_IO, "pipe write failed: %s", strerror(errno));
        p += w;
        n -= (size_t)w;
    }
    return TESS_OK;
}

tess_status tess_ipc_read(int fd, void *buf, size_t n) {
    char *p = buf;
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) return tess_error(TESS_ERR_IO, "pipe closed by the other process");
        if (r < 0) return tess_error(TESS_ERR_IO, "pipe read failed: %s", strerror(errno));
        p += r;
        n -= (size_t)r;
    }
    return TESS_OK;
}

tess_status tess_ipc_write_block(int fd, const void *data, size_t n) {
    uint64_t len = n;
    tess_status st = tess_ipc_write(fd, &len, sizeof len);
    if (!st && n) st = tess_ipc_write(fd, data, n);
    return st;
}

tess_status tess_ipc_read_block(int fd, void **data, size_t *n) {
    uint64_t len;
    tess_status st = tess_ipc_read(fd, &len, sizeof len);
    if (st) return st;
    if (len > (1ULL << 34)) return tess_error(TESS_ERR_IO, "pipe message of %llu bytes refused",
                                              (unsigned long long)len);
    char *buf = malloc(len + 1);
    if (!buf) return tess_error(TESS_ERR_NOMEM, "pipe message of %llu bytes", (unsigned long long)len);
    st = tess_ipc_read(fd, buf, len);
    if (st) {
        free(buf);
        return st;
    }
    buf[len] = '\0';
    *data = buf;
    *n = len;
    return TESS_OK;
}

int tess_ipc_wait_readable(int fd, double seconds) {
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    int timeout = seconds < 0 ? -1 : (int)(seconds * 1000.0 + 0.5);
    for (;;) {
        int r = poll(&pfd, 1, timeout);
        if (r < 0 && errno == EINTR) continue;
        return r > 0 ? 1 : 0;
    }
}

void tess_describe_exit(int wstatus, char *buf, size_t len) {
    if (WIFSIGNALED(wstatus))
        snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
    else if (WIFEXITED(wstatus))
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(wstatus));
    else
        snprintf(buf, len, "stopped (status 0x%x)", wstatus);
}
