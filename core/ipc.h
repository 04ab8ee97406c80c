/* ipc.h - length-prefixed messages over pipes between tessera's processes. */
#ifndef TESS_IPC_H
#define TESS_IPC_H

#include <stddef.h>
#include "tessera.h"

/* Writes/reads exactly n bytes, retrying on EINTR; TESS_ERR_IO on EOF or error. */
tess_status tess_ipc_write(int fd, const void *buf, size_t n);
tess_status tess_ipc_read(int fd, void *buf, size_t n);
/* A block of bytes preceded by its 64-bit length; *data is malloc'd (+1 NUL byte). */
tess_status tess_ipc_write_block(int fd, const void *data, size_t n);
tess_status tess_ipc_read_block(int fd, void **data, size_t *n);
/* Waits until fd is readable; returns 1 if readable, 0 on timeout (seconds < 0: forever). */
int tess_ipc_wait_readable(int fd, double seconds);
/* "killed by signal 11 (Segmentation fault)" or "exited with status 3". */
void tess_describe_exit(int wstatus, char *buf, size_t len);

#endif
